"""The warm hook server: a fork server that keeps memstone loaded, so a hook answers without Python's start-up.

An agent runs ``memstone hook EVENT`` for every event and waits for it. Most of a cold hook is Python importing
memstone (the service, the store, asyncio: about 200 ms of CPU), not the hook's own work. So the first hook
starts this server after it has answered (detached, one per user, installation and configuration), and later
hooks hand their call to it over a Unix socket: the client sends its stdin, stdout and stderr descriptors
(``SCM_RIGHTS``), working directory, umask, environment and argv (:mod:`.hook_client`, which the hook's own
process imports instead of this module), and the server forks a child that runs the
call exactly as the process would have (:func:`memstone.cli.hook_run.run_hook_command`) on those descriptors.
The agent sees the same output on its own pipe and the same exit code; the child is a fresh process in all but
its start-up, because the server only imports modules: it opens no store and resolves no setting for a request
(the child does, from the client's environment), so nothing one call did can reach the next.

When it is not used: the setting ``hook_server`` (``MEMSTONE_HOOK_SERVER``, seconds of idleness before the
server exits, default 600) is 0; the socket folder is not a private folder of this user (a symlink, another
owner, group or world access: refused, never repaired); the connecting process is another user (``SO_PEERCRED``);
or the installed code changed since the server started (a fingerprint of the package's files, checked on every
call: the server refuses and exits, and the client runs the hook itself). In every such case the hook runs in
its own process as before, so the server only ever changes how fast a hook answers.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import socket
import struct
import sys
from pathlib import Path

from .hook_client import (
    HEADER,
    MAX_REQUEST,
    decode_call,
    package_dir,
    server_key,
    socket_path,
)


# ------------------------------------------------------------------------------------------------- the server
def fingerprint() -> str:
    """The installed code as it is now: every module file's path, size and modification time."""
    digest = hashlib.sha256()
    folders = [package_dir()]
    while folders:
        with os.scandir(folders.pop()) as entries:
            for entry in sorted(entries, key=lambda e: e.name):
                if entry.is_dir(follow_symlinks=False):
                    if entry.name != "__pycache__":
                        folders.append(entry.path)
                elif entry.name.endswith(".py"):
                    try:
                        st = entry.stat()
                    except OSError:
                        continue
                    digest.update(f"{entry.path}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return digest.hexdigest()


def idle_seconds(env: os._Environ[str] | dict[str, str] | None = None) -> int:
    """The ``hook_server`` setting: seconds of idleness before the server exits; 0 means no server."""
    from ..config import Config
    from ..domain.errors import MemstoneError

    try:
        return max(0, Config.load(env=env, derive=False).integer("hook_server"))
    except MemstoneError:
        return 0  # a bad setting: no server (the hook itself logs the setting's error)


def preload() -> None:
    """Import what a hook imports (and read the package's capture weights), so a forked child starts with it."""
    import asyncio  # noqa: F401

    from ..backends import sqlite  # noqa: F401
    from ..capture import junk_text, pipeline  # noqa: F401
    from ..cli import hook_run  # noqa: F401
    from ..domain.secrets import find_secrets
    from ..service import facade  # noqa: F401
    from . import briefing, hook_reads, hooks  # noqa: F401

    junk_text.shipped_text_classifier()  # the capture's model-free junk screen: its weights parsed once, here
    find_secrets("a note, a token, a password: 1234")  # the secret scan's gates are derived on first use: here


def serve() -> None:
    import fcntl
    import selectors
    import signal
    import time

    idle = idle_seconds()
    where = socket_path(create=True)
    if idle == 0 or where is None:
        return
    path = Path(where)
    lock = open(path.with_suffix(".lock"), "a")  # noqa: SIM115 - held for the server's life
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return  # another server for this key is running (or starting)
    preload()
    code = fingerprint()
    path.unlink(missing_ok=True)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    os.chmod(path, 0o600)
    listener.listen(64)
    inode = path.stat().st_ino
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_r, False)
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ)
    selector.register(wake_r, selectors.EVENT_READ)
    children: dict[int, socket.socket] = {}
    last = time.monotonic()
    stop = False
    try:
        while not (stop and not children):
            for key, _ in selector.select(timeout=1.0):
                if key.fileobj is listener:
                    conn, _ = listener.accept()
                    last = time.monotonic()
                    keep = (listener, lock, wake_r, wake_w, selector, *children.values())
                    outcome = _start(conn, code, keep=keep)
                    if isinstance(outcome, int):
                        children[outcome] = conn
                    else:
                        stop = stop or outcome == "stop"
                else:
                    while True:
                        try:
                            if not os.read(wake_r, 512):
                                break
                        except BlockingIOError:
                            break
            _reap(children)
            if not children and time.monotonic() - last > idle:
                stop = True
    finally:
        try:
            if path.stat().st_ino == inode:
                path.unlink()
        except OSError:
            pass
        listener.close()


def _reap(children: dict[int, socket.socket]) -> None:
    while children:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        conn = children.pop(pid, None)
        if conn is not None:
            with contextlib.suppress(OSError):
                conn.sendall(f"exit {os.waitstatus_to_exitcode(status)}\n".encode())
            conn.close()


def _start(conn: socket.socket, code: str, *, keep: tuple[object, ...]) -> int | str:
    """Read one call and fork its child: the child's pid, or why not ("refused" / "stop", the connection closed)."""
    fds: list[int] = []
    try:
        conn.settimeout(2.0)
        creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        _pid, uid, _gid = struct.unpack("3i", creds)
        if uid != os.getuid():
            conn.close()
            return "refused"
        head, fds, _flags, _addr = socket.recv_fds(conn, HEADER.size, 3)
        if len(head) != HEADER.size or len(fds) != 3:
            raise OSError("a malformed call")
        (size,) = HEADER.unpack(head)
        if size > MAX_REQUEST:
            raise OSError("a call too large")
        body = b""
        while len(body) < size:
            chunk = conn.recv(size - len(body))
            if not chunk:
                raise OSError("the client left")
            body += chunk
        key, cwd, umask, argv, env = decode_call(body)
        if key != server_key(env):
            conn.sendall(b"refused other\n")
            conn.close()
            return "refused"
        if fingerprint() != code or idle_seconds(env) == 0:
            conn.sendall(b"refused stale\n")  # new code or turned off: the client runs the hook; this server ends
            conn.close()
            return "stop"
        pid = os.fork()
        if pid == 0:
            _child(conn, fds, (cwd, umask, argv), env, keep)
        conn.sendall(b"started\n")
        return pid
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        conn.close()
        return "refused"
    finally:
        for fd in fds:
            with contextlib.suppress(OSError):
                os.close(fd)


def _child(
    conn: socket.socket, fds: list[int], call: tuple[str, int, list[str]], env: dict[str, str], keep: tuple[object, ...]
) -> None:
    """In the forked child: become the client's hook process, run the call, exit."""
    import signal

    code = 0
    try:
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        conn.close()
        for thing in keep:  # nothing of the server's may outlive it in a capture child (the lock above all)
            if isinstance(thing, int):
                os.close(thing)
            else:
                thing.close()  # type: ignore[attr-defined]
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
        for fd in set(fds) - {0, 1, 2}:  # the agent's pipes live on as 0/1/2 only: a capture child (forked from
            os.close(fd)  # this one, its 0/1/2 on /dev/null) must not hold them open, or the agent waits for it
        cwd, umask, argv = call
        os.chdir(cwd)
        os.umask(umask)
        os.environ.clear()
        os.environ.update(env)
        sys.argv = ["memstone", *argv]
        from ..cli.hook_run import parse_hook_argv, run_hook_command

        parsed = parse_hook_argv(argv)
        if parsed is not None:
            code = run_hook_command(
                parsed.event, parsed.agent, as_json=parsed.as_json, url=parsed.url, scope=parsed.scope
            )
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 0
    except BaseException:  # a hook never fails the agent; run_hook logs its own failures
        code = 0
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


if __name__ == "__main__":
    serve()
