"""``SqlitePrincipalStore``: the PrincipalStore on the memory store's SQLite file, through its own apsw connection.

It owns three tables and touches no other: ``auth_principals``, ``auth_tokens`` (token hashes, never a
secret) and ``auth_grants``. Every call runs on one worker thread in its own transaction, so a revoked token or
a removed grant takes effect at the very next request, in this process or any other sharing the file.

``read_only=True`` (the server, ``token list``: callers that only read) opens the file with
SQLITE_OPEN_READONLY and creates nothing: a store without the tables (or without a file) has no principals, a
read-only backup can be served, and a write is refused (issue 12, finding 11).
"""

from __future__ import annotations

import asyncio
import datetime as _dt
import os
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import TypeVar
from urllib.parse import quote

import apsw

from ..domain.errors import BackendError, BackendUnavailable, InvalidInput, NotFound
from ..domain.ids import new_ulid
from .model import (
    Access,
    Grant,
    Permission,
    Principal,
    TokenInfo,
    check_grant_scope,
    check_name,
    grants_of,
    new_token,
    token_hash,
)

T = TypeVar("T")
BUSY_TIMEOUT_MS = 5000

SCHEMA = """
CREATE TABLE IF NOT EXISTS auth_principals (
    principal_id TEXT PRIMARY KEY,
    user TEXT NOT NULL UNIQUE,
    org TEXT NOT NULL,
    name TEXT,
    created_at TEXT NOT NULL
) STRICT;
CREATE TABLE IF NOT EXISTS auth_tokens (
    token_id TEXT PRIMARY KEY,
    principal_id TEXT NOT NULL REFERENCES auth_principals (principal_id),
    token_hash TEXT NOT NULL UNIQUE,
    prefix TEXT NOT NULL,
    label TEXT,
    created_at TEXT NOT NULL,
    revoked_at TEXT
) STRICT;
CREATE TABLE IF NOT EXISTS auth_grants (
    principal_id TEXT NOT NULL REFERENCES auth_principals (principal_id),
    scope TEXT NOT NULL,
    permission TEXT NOT NULL CHECK (permission IN ('read', 'write', 'admin')),
    created_at TEXT NOT NULL,
    PRIMARY KEY (principal_id, scope)
) STRICT;
"""

_TOKEN_COLUMNS = (
    "t.token_id, t.principal_id, p.user, p.org, t.label, t.prefix, t.created_at, t.revoked_at "
    "FROM auth_tokens t JOIN auth_principals p ON p.principal_id = t.principal_id"
)


def _read_only_uri(path: str) -> str:
    """``mode=ro``; in a directory where the WAL's shared-memory file cannot be created (a read-only backup), the
    file can only be read as immutable (no writer can exist there either). The memory store does the same."""
    file = Path(path).resolve()
    uri = f"file:{quote(str(file))}?mode=ro"
    if not Path(f"{file}-shm").exists() and not os.access(file.parent, os.W_OK | os.X_OK):
        uri += "&immutable=1"
    return uri


def _now() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class _Transaction:
    """One transaction on the connection; apsw errors never climb higher than this adapter.

    ``__exit__`` returns None, so nothing is swallowed (and type checkers know it).
    """

    def __init__(self, conn: apsw.Connection | None, *, write: bool) -> None:
        if conn is None:
            raise BackendUnavailable("the auth store is closed")
        self.conn = conn
        self.write = write

    def __enter__(self) -> apsw.Connection:
        with _translated():
            self.conn.execute("BEGIN IMMEDIATE" if self.write else "BEGIN")
        return self.conn

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if kind is not None:
            with _translated():
                self.conn.execute("ROLLBACK")
            if isinstance(exc, apsw.BusyError):
                raise BackendUnavailable("the auth tables are locked by another writer", hint="retry shortly") from exc
            if isinstance(exc, apsw.Error):
                raise BackendError(f"auth store failed: {exc}", orig=exc) from exc
            return
        with _translated():
            self.conn.execute("COMMIT")


@contextmanager
def _translated() -> Iterator[None]:
    try:
        yield
    except apsw.BusyError as exc:
        raise BackendUnavailable("the auth tables are locked by another writer", hint="retry shortly") from exc
    except apsw.Error as exc:
        raise BackendError(f"auth store failed: {exc}", orig=exc) from exc


class SqlitePrincipalStore:
    """Principals, token hashes and grants in ``auth_*`` tables of one SQLite file (``:memory:`` for tests)."""

    def __init__(self, path: str, *, clock: Callable[[], str] = _now, read_only: bool = False) -> None:
        self.path = path
        self.read_only = read_only
        self._clock = clock
        self._conn: apsw.Connection | None = None
        self._empty = False  # read-only on a file without the auth tables: no principal exists
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="memstone-auth")

    async def open(self) -> SqlitePrincipalStore:
        await self._run(self._open_sync)
        return self

    def _open_sync(self) -> None:
        if self.read_only and self.path != ":memory:":
            self._open_read_only()
            return
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        with _translated():
            conn = apsw.Connection(self.path)
            conn.set_busy_timeout(BUSY_TIMEOUT_MS)
            conn.execute("PRAGMA foreign_keys = ON")
            if self.path != ":memory:":
                conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("BEGIN IMMEDIATE")
            try:
                conn.execute(SCHEMA)
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
            self._conn = conn

    def _open_read_only(self) -> None:
        if not Path(self.path).exists():
            self._empty = True
            return
        with _translated():
            conn = apsw.Connection(_read_only_uri(self.path), flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI)
            conn.set_busy_timeout(BUSY_TIMEOUT_MS)
            found = conn.execute(
                "SELECT count(*) FROM sqlite_master WHERE type = 'table' "
                "AND name IN ('auth_principals', 'auth_tokens', 'auth_grants')"
            ).fetchone()
        if found is None or found[0] < 3:
            conn.close()
            self._empty = True
            return
        self._conn = conn

    def _writable(self) -> None:
        if self.read_only:
            raise BackendUnavailable(
                f"the principal store {self.path} is open read-only: the write was refused",
                hint="manage principals and tokens with `memstone token …`",
            )

    async def _run(self, fn: Callable[[], T]) -> T:
        return await asyncio.get_running_loop().run_in_executor(self._pool, fn)

    # ------------------------------------------------------------------ reads
    async def authenticate(self, token: str) -> Access | None:
        if not isinstance(token, str) or not token:
            return None
        digest = token_hash(token)

        def read() -> Access | None:
            if self._empty:
                return None
            with _Transaction(self._conn, write=False) as db:
                row = db.execute(
                    "SELECT t.token_id, p.principal_id, p.user, p.org, p.name, p.created_at "
                    "FROM auth_tokens t JOIN auth_principals p ON p.principal_id = t.principal_id "
                    "WHERE t.token_hash = ? AND t.revoked_at IS NULL",
                    (digest,),
                ).fetchone()
                if row is None:
                    return None
                grants = db.execute(
                    "SELECT scope, permission FROM auth_grants WHERE principal_id = ?", (row[1],)
                ).fetchall()
            principal = Principal(principal_id=row[1], user=row[2], org=row[3], name=row[4], created_at=row[5])
            return Access(principal=principal, grants=grants_of(grants), token_id=row[0])

        return await self._run(read)

    async def principal(self, *, user: str) -> Principal | None:
        def read() -> Principal | None:
            if self._empty:
                return None
            with _Transaction(self._conn, write=False) as db:
                row = db.execute(
                    "SELECT principal_id, user, org, name, created_at FROM auth_principals WHERE user = ?", (user,)
                ).fetchone()
            if row is None:
                return None
            return Principal(principal_id=row[0], user=row[1], org=row[2], name=row[3], created_at=row[4])

        return await self._run(read)

    async def tokens(self, *, user: str | None = None, include_revoked: bool = False) -> list[TokenInfo]:
        def read() -> list[TokenInfo]:
            if self._empty:
                return []
            sql = f"SELECT {_TOKEN_COLUMNS} WHERE 1 = 1"
            args: list[object] = []
            if user is not None:
                sql += " AND p.user = ?"
                args.append(user)
            if not include_revoked:
                sql += " AND t.revoked_at IS NULL"
            with _Transaction(self._conn, write=False) as db:
                rows = db.execute(sql + " ORDER BY t.created_at, t.token_id", args).fetchall()
            return [_token(r) for r in rows]

        return await self._run(read)

    async def grants(self, principal_id: str) -> tuple[Grant, ...]:
        def read() -> tuple[Grant, ...]:
            if self._empty:
                return ()
            with _Transaction(self._conn, write=False) as db:
                rows = db.execute(
                    "SELECT scope, permission FROM auth_grants WHERE principal_id = ?", (principal_id,)
                ).fetchall()
            return grants_of(rows)

        return await self._run(read)

    async def has_active_tokens(self) -> bool:
        def read() -> bool:
            if self._empty:
                return False
            with _Transaction(self._conn, write=False) as db:
                row = db.execute("SELECT 1 FROM auth_tokens WHERE revoked_at IS NULL LIMIT 1").fetchone()
            return row is not None

        return await self._run(read)

    # ------------------------------------------------------------------ writes
    async def ensure_principal(self, *, user: str, org: str, name: str | None = None) -> Principal:
        self._writable()
        user = check_name(user, "user")
        org = check_name(org, "org")

        def write() -> Principal:
            with _Transaction(self._conn, write=True) as db:
                row = db.execute(
                    "SELECT principal_id, user, org, name, created_at FROM auth_principals WHERE user = ?", (user,)
                ).fetchone()
                if row is not None:
                    if row[2] != org:
                        raise InvalidInput(
                            f"user {user!r} already belongs to organization {row[2]!r}",
                            hint="a principal belongs to exactly one organization; choose another user id",
                        )
                    return Principal(principal_id=row[0], user=row[1], org=row[2], name=row[3], created_at=row[4])
                principal = Principal(
                    principal_id=new_ulid("prn_"), user=user, org=org, name=name, created_at=self._clock()
                )
                db.execute(
                    "INSERT INTO auth_principals (principal_id, user, org, name, created_at) VALUES (?, ?, ?, ?, ?)",
                    (principal.principal_id, user, org, name, principal.created_at),
                )
                return principal

        return await self._run(write)

    async def issue_token(self, principal_id: str, *, label: str | None = None) -> tuple[TokenInfo, str]:
        self._writable()
        secret = new_token()
        token_id = new_ulid("tok_")

        def write() -> TokenInfo:
            with _Transaction(self._conn, write=True) as db:
                if (
                    db.execute("SELECT 1 FROM auth_principals WHERE principal_id = ?", (principal_id,)).fetchone()
                    is None
                ):
                    raise NotFound(f"no principal {principal_id}")
                db.execute(
                    "INSERT INTO auth_tokens (token_id, principal_id, token_hash, prefix, label, created_at) "
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    (token_id, principal_id, token_hash(secret), secret[:10], label, self._clock()),
                )
                row = db.execute(f"SELECT {_TOKEN_COLUMNS} WHERE t.token_id = ?", (token_id,)).fetchone()
            return _token(row)

        return await self._run(write), secret

    async def revoke_token(self, token_id: str) -> TokenInfo:
        self._writable()

        def write() -> TokenInfo:
            with _Transaction(self._conn, write=True) as db:
                db.execute(
                    "UPDATE auth_tokens SET revoked_at = ? WHERE token_id = ? AND revoked_at IS NULL",
                    (self._clock(), token_id),
                )
                row = db.execute(f"SELECT {_TOKEN_COLUMNS} WHERE t.token_id = ?", (token_id,)).fetchone()
            if row is None:
                raise NotFound(f"no token {token_id!r}", hint="list tokens with `memstone token list --all`")
            return _token(row)

        return await self._run(write)

    async def set_grant(self, principal_id: str, scope: str, permission: Permission | None) -> tuple[Grant, ...]:
        self._writable()

        def write() -> tuple[Grant, ...]:
            with _Transaction(self._conn, write=True) as db:
                row = db.execute("SELECT org FROM auth_principals WHERE principal_id = ?", (principal_id,)).fetchone()
                if row is None:
                    raise NotFound(f"no principal {principal_id}")
                pattern = check_grant_scope(scope, org=row[0])
                if permission is None:
                    db.execute("DELETE FROM auth_grants WHERE principal_id = ? AND scope = ?", (principal_id, pattern))
                else:
                    db.execute(
                        "INSERT INTO auth_grants (principal_id, scope, permission, created_at) VALUES (?, ?, ?, ?) "
                        "ON CONFLICT (principal_id, scope) DO UPDATE SET permission = excluded.permission",
                        (principal_id, pattern, permission, self._clock()),
                    )
                rows = db.execute(
                    "SELECT scope, permission FROM auth_grants WHERE principal_id = ?", (principal_id,)
                ).fetchall()
            return grants_of(rows)

        return await self._run(write)

    async def aclose(self) -> None:
        def close() -> None:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

        try:
            await self._run(close)
        finally:
            self._pool.shutdown(wait=True)


def _token(row: tuple[object, ...] | None) -> TokenInfo:
    assert row is not None
    return TokenInfo(
        token_id=str(row[0]),
        principal_id=str(row[1]),
        user=str(row[2]),
        org=str(row[3]),
        label=None if row[4] is None else str(row[4]),
        prefix=str(row[5]),
        created_at=str(row[6]),
        revoked_at=None if row[7] is None else str(row[7]),
    )


async def open_principal_store(path: str, *, read_only: bool = False) -> SqlitePrincipalStore:
    """Open (creating its tables if needed) the principal store in the SQLite file at ``path``; ``read_only``
    opens it for reading only and creates nothing."""
    return await SqlitePrincipalStore(path, read_only=read_only).open()


__all__ = ["SqlitePrincipalStore", "open_principal_store"]
