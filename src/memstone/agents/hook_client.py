"""The warm hook server's client: what ``memstone hook EVENT`` runs before anything else, and the socket both use.

A served hook's own process only starts Python, finds the socket, hands its call over and waits, so its cost is
its imports: with ``socket`` (its enums), ``json`` (``re``), ``hashlib`` (OpenSSL), ``pathlib``, ``tempfile``
and ``typing`` they took ~145 M instructions, more than Python's start-up (~40 M) and about the forked child's
work again (stop 36, callgrind). So this module imports ``os``, ``sys``, ``struct``, ``zlib`` and ``_socket``
(the C module under :mod:`socket`, which only adds enums and helpers on top) and nothing of memstone; the call
goes out as NUL-separated bytes (no argument, path or environment entry can hold a NUL). The server
(:mod:`memstone.agents.hook_server`) reads it back.
"""

from __future__ import annotations

import _socket
import os
import struct
import sys
import zlib

TYPE_CHECKING = False  # typing costs this path ~40 M instructions; mypy reads this name as True
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

PROTOCOL = b"2"
HEADER = struct.Struct("!I")
MAX_REQUEST = 4 << 20  # an environment plus argv; anything larger is not ours


def package_dir() -> str:
    return os.path.dirname(os.path.dirname(os.path.realpath(__file__)))


def server_key(env: Mapping[str, str] | None = None) -> list[str]:
    """Which server a call may use: same interpreter, package, import path and home (where ``~`` in a setting
    points; every setting itself is resolved by the forked child from the caller's environment). The server
    compares the whole key; the socket's name carries two checksums of it."""
    env = os.environ if env is None else env
    return [sys.executable, package_dir(), *_import_path(), env.get("HOME", "")]


def _import_path() -> list[str]:
    """``sys.path`` without the entry Python prepends for a script or ``-m`` (the server runs with ``-P``)."""
    return sys.path if sys.flags.safe_path else sys.path[1:]


def _temp_root(env: Mapping[str, str]) -> str:
    """The first of ``$TMPDIR``, ``$TEMP``, ``$TMP`` that is set, else ``/tmp`` (tempfile's order, without its
    probe for a writable folder: where the folder cannot be made, there is no server and every hook runs itself)."""
    for name in ("TMPDIR", "TEMP", "TMP"):
        if env.get(name):
            return os.path.abspath(env[name])
    return "/tmp"


def socket_dir(*, create: bool) -> str | None:
    """``$TMPDIR/memstone-<uid>``, a folder only this user can enter; None when it is absent or not private."""
    import stat

    folder = os.path.join(_temp_root(os.environ), f"memstone-{os.getuid()}")
    if create:
        try:
            os.mkdir(folder, 0o700)
        except FileExistsError:
            pass
        except OSError:
            return None
    try:
        st = os.lstat(folder)
    except OSError:
        return None
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o077:
        return None  # a symlink, someone else's folder or one others can enter: never ours to use
    return folder


def socket_path(*, create: bool = False) -> str | None:
    folder = socket_dir(create=create)
    return None if folder is None else os.path.join(folder, socket_name())


def socket_name() -> str:
    """The socket's file name: two checksums of the server key (the server compares the key itself)."""
    key = "\0".join(server_key()).encode("utf-8", "surrogateescape")
    return f"hook-{zlib.crc32(key):08x}{zlib.adler32(key):08x}.sock"


def encode_call(argv: Sequence[str]) -> bytes:
    """The call as the server reads it (:func:`decode_call`): protocol, cwd, umask, key, argv, environment."""
    umask = os.umask(0o077)
    os.umask(umask)
    key = [part.encode("utf-8", "surrogateescape") for part in server_key()]
    fields = [PROTOCOL, os.fsencode(os.getcwd()), b"%d" % umask, b"%d" % len(key), *key]
    fields += [b"%d" % len(argv), *map(os.fsencode, argv)]
    fields += [name + b"=" + value for name, value in os.environb.items()]
    return b"\0".join(fields)


def decode_call(body: bytes) -> tuple[list[str], str, int, list[str], dict[str, str]]:
    """``(key, cwd, umask, argv, env)`` of a call; ValueError when it is not one of this protocol."""
    fields = body.split(b"\0")
    if len(fields) < 4 or fields[0] != PROTOCOL:
        raise ValueError("another protocol")
    cwd, umask = os.fsdecode(fields[1]), int(fields[2])
    key, at = _counted(fields, 3)
    argv, at = _counted(fields, at)
    env = {}
    for item in fields[at:]:
        name, eq, value = item.partition(b"=")
        if not eq:
            raise ValueError("a malformed environment")
        env[os.fsdecode(name)] = os.fsdecode(value)
    return [part.decode("utf-8", "surrogateescape") for part in key], cwd, umask, [os.fsdecode(a) for a in argv], env


def _counted(fields: list[bytes], at: int) -> tuple[list[bytes], int]:
    """The list that starts with its length at ``fields[at]``, and where the next field is."""
    if at >= len(fields):
        raise ValueError("a malformed call")
    count = int(fields[at])
    if count < 0 or at + 1 + count > len(fields):
        raise ValueError("a malformed call")
    return fields[at + 1 : at + 1 + count], at + 1 + count


def forward(argv: Sequence[str]) -> int | None:
    """Run this hook call in the warm server; its exit code, or None when the caller must run it itself."""
    path = socket_path() if hasattr(_socket, "SO_PEERCRED") else None
    if path is None or not os.path.exists(path):
        return None
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        sock.settimeout(2.0)
        sock.connect(path)
        body = encode_call(argv)
        rights = [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, struct.pack("3i", 0, 1, 2))]
        sock.sendmsg([HEADER.pack(len(body))], rights)
        sock.sendall(body)
        pending = b""
        first, pending = _line(sock, pending)
        if first != b"started\n":
            return None  # refused (stale code, disabled, another key) or gone: the caller runs the hook
        sock.settimeout(None)  # the call runs now; the hook's own deadlines bound it
        last, _ = _line(sock, pending)
    except OSError:
        return None
    finally:
        sock.close()
    try:
        return int(last.split(b" ")[1]) if last.startswith(b"exit ") else 0
    except (IndexError, ValueError):
        return 0  # the call started and its answer went to the agent; a hook always exits 0


def _line(sock: _socket.socket, pending: bytes) -> tuple[bytes, bytes]:
    """One line from the server (with its newline; what came before the end of the stream when it ended), and
    what was read past it."""
    while b"\n" not in pending:
        chunk = sock.recv(256)
        if not chunk:
            return pending, b""
        pending += chunk
    line, _, rest = pending.partition(b"\n")
    return line + b"\n", rest


def start_server() -> None:
    """Start the server for later hooks (detached; it exits at once if one already runs)."""
    import subprocess

    if not hasattr(_socket, "SO_PEERCRED") or socket_dir(create=True) is None:
        return  # the server checks who connects with Linux's SO_PEERCRED; elsewhere every hook runs itself
    subprocess.Popen(  # our own interpreter and module
        [sys.executable, "-P", "-m", "memstone.agents.hook_server"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd="/",
        start_new_session=True,
        close_fds=True,
    )
