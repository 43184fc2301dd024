"""The OceanBase engine's connection: URL → PyMySQL arguments, transactions, and error translation.

Transactions (the isolation contract of issue 11, met with OceanBase's own row locks):

- A **write** transaction runs at READ COMMITTED (the tenant default) and locks what it must serialize against:
  the Memory's ``artifact_heads`` row with ``SELECT … FOR UPDATE`` (every head read inside a write transaction
  locks it), so two writers of one Memory queue on that row and the second reads the first one's committed head;
  inserts of a new head or scope binding meet the other writer on the unique key instead. No store-wide lock.
- A **read** transaction is ``REPEATABLE READ`` + ``START TRANSACTION READ ONLY``: one consistent snapshot for the
  whole search or read, whatever commits meanwhile.
- DDL never runs inside either: in MySQL mode it commits the open transaction implicitly. Only migrations run DDL,
  each statement on its own (``ddl()`` refuses to run inside a transaction).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, suppress
from typing import Any, Literal
from urllib.parse import parse_qs, unquote, urlsplit

from ...domain.errors import (
    BackendError,
    BackendUnavailable,
    InvalidInput,
    MemstoneError,
    NotFound,
    RevisionConflictError,
)
from ..sql.engine import driver_errors

_KEY = re.compile(r"(?<![`\w])key(?![`\w])")
DEFAULT_PORT = 2881  # an OBServer's MySQL port (OBProxy listens on 2883)

# MySQL / OceanBase error numbers this engine tells apart.
DUPLICATE_KEY = 1062
FOREIGN_KEY = (1216, 1217, 1451, 1452)
UNKNOWN_DATABASE = 1049
NO_SUCH_TABLE = 1146
LOCK_WAIT = (1205, 1213, 4012, 6002, 6003, 6004, 6005)  # lock wait timeout, deadlock, statement/trx timeouts
LOST = (2002, 2003, 2006, 2013, 2014, 2055)  # cannot connect, gone away, lost during query
#: The engine's own session timeouts, in seconds, set on every connection it opens (not the tenant's defaults:
#: ``ob_query_timeout`` 10 s and ``ob_trx_timeout`` 100 s, which a bulk load of 1,000 entries or a maintenance
#: statement on a large store exceeds on a busy server). ``?query_timeout=SECONDS`` overrides the statement bound.
QUERY_TIMEOUT_S = 3600.0
TRX_TIMEOUT_S = 3600.0


def connect_args(url: str) -> dict[str, Any]:
    """Keyword arguments for ``pymysql.connect`` from ``oceanbase://user:password@host:port/database``.

    ``?unix_socket=PATH`` connects over a unix socket (seekdb listens only there); the port defaults to 2881. A
    tenant user ``USER@TENANT#CLUSTER`` is written percent-encoded (``app%40mem_tenant%23obcluster``).
    Every connection sets its session's ``ob_query_timeout`` (``QUERY_TIMEOUT_S``, or ``?query_timeout=SECONDS``)
    and ``ob_trx_timeout`` (``TRX_TIMEOUT_S``, at least the statement bound), whatever the tenant's defaults; the
    statement bound also bounds a row-lock wait.
    """
    parts = urlsplit(url)
    if parts.scheme.lower() != "oceanbase":
        raise InvalidInput(f"{url!r} is not an oceanbase:// URL", hint="write oceanbase://USER:PASSWORD@HOST:PORT/DB")
    args: dict[str, Any] = {"user": unquote(parts.username or "root"), "charset": "utf8mb4"}
    if parts.password:
        args["password"] = unquote(parts.password)
    database = unquote(parts.path.lstrip("/"))
    if database:
        args["database"] = database
    query = parse_qs(parts.query)
    if "unix_socket" in query:
        args["unix_socket"] = query["unix_socket"][0]
    else:
        args["host"] = parts.hostname or "127.0.0.1"
        try:
            args["port"] = parts.port or DEFAULT_PORT
        except ValueError as exc:
            raise InvalidInput(f"bad port in {url!r}: {exc}") from exc
    query_us = _timeout_us(query["query_timeout"][0]) if "query_timeout" in query else _us(QUERY_TIMEOUT_S)
    trx_us = max(query_us, _us(TRX_TIMEOUT_S))
    args["init_command"] = f"SET SESSION ob_query_timeout = {query_us}, ob_trx_timeout = {trx_us}"
    return args


def _us(seconds: float) -> int:
    return round(seconds * 1_000_000)


def _timeout_us(text: str) -> int:
    try:
        seconds = float(text)
    except ValueError:
        seconds = -1.0
    if not 0 < seconds <= 86400:
        raise InvalidInput(
            f"query_timeout={text!r} is not a number of seconds", hint="write ?query_timeout=60 (1 s to 1 day)"
        )
    return _us(seconds)


def database_of(url: str) -> str:
    """The database an ``oceanbase://`` URL names; refused when it names none."""
    name = connect_args(url).get("database")
    if not isinstance(name, str) or not name:
        raise InvalidInput(f"no database in {url!r}", hint="write oceanbase://USER@HOST:PORT/DATABASE")
    if not all(ch.isalnum() or ch in "_$" for ch in name):
        raise InvalidInput(f"database name {name!r} has characters memstone does not quote", hint="use [A-Za-z0-9_$]")
    return name


def _errno(exc: BaseException) -> int:
    args = getattr(exc, "args", ())
    return int(args[0]) if args and isinstance(args[0], int) else 0


def is_lost_connection(exc: BaseException) -> bool:
    import pymysql

    return isinstance(exc, pymysql.err.InterfaceError) or _errno(exc) in LOST


def translated(memory_id: str = "", *, base: int = 0, database: str = "") -> AbstractContextManager[None]:
    """PyMySQL errors → memstone errors, at the engine edge. Nothing above this module sees a PyMySQL error."""
    import pymysql

    return driver_errors(pymysql.err.Error, lambda exc: _translate(exc, memory_id, base, database))


def _translate(exc: Exception, memory_id: str, base: int, database: str) -> MemstoneError:
    code = _errno(exc)
    if is_lost_connection(exc):
        return BackendUnavailable(
            f"lost the connection to OceanBase: {exc}", orig=exc, hint="check the server; memstone reconnects"
        )
    if code in LOCK_WAIT:
        return BackendUnavailable(
            f"OceanBase gave up waiting for a lock or the statement timed out: {exc}",
            orig=exc,
            hint="retry; a long write of another process held the rows (ob_query_timeout bounds the wait)",
        )
    if code == DUPLICATE_KEY and memory_id:
        # Another writer inserted the same head, revision or scope binding first: the caller rereads.
        return RevisionConflictError(memory_id, expected=base)
    if code == UNKNOWN_DATABASE:
        return NotFound(
            f"no database {database or ''} on this OceanBase server: {exc}",
            hint="create it (CREATE DATABASE …) or check the URL",
        )
    if code == NO_SUCH_TABLE:
        return BackendUnavailable(
            f"database {database} is not a memstone store (or an older one): {exc}",
            orig=exc,
            hint="open it read-write once (or run memstone migrate) to create the tables",
        )
    return BackendError(f"OceanBase error {code}: {exc}", orig=exc)


class Connection:
    """One PyMySQL connection with memstone's transaction discipline; reconnects after a lost connection."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.args = connect_args(url)
        self.database = database_of(url)
        self._conn: Any = None
        self.txn: Literal["read", "write"] | None = None

    # ------------------------------------------------------------------ connection
    def connect(self, *, with_database: bool = True) -> Any:
        import pymysql

        args = dict(self.args)
        if not with_database:
            args.pop("database", None)
        with translated(database=self.database):
            return pymysql.connect(autocommit=True, connect_timeout=10, **args)

    @property
    def conn(self) -> Any:
        if self._conn is None:
            self._conn = self.connect()
        return self._conn

    def close(self) -> None:
        if self._conn is not None:
            with suppress(Exception):  # closing a broken connection
                self._conn.close()
            self._conn = None

    def _forget_if_lost(self, exc: BaseException) -> None:
        if is_lost_connection(exc):
            self.close()  # the next statement opens a new connection

    # ------------------------------------------------------------------ statements (the core's ``Conn``)
    def _sql(self, sql: str) -> str:
        # The core writes ``?`` placeholders (PyMySQL takes ``%s``) and names store_meta's column ``key``, a
        # reserved word in MySQL: quote it. No statement of the core has a literal ``?`` or ``%``.
        return _KEY.sub("`key`", sql.replace("%", "%%").replace("?", "%s"))

    def _cursor_run(self, sql: str, args: Sequence[object]) -> Any:
        try:
            cur = self.conn.cursor()
            cur.execute(self._sql(sql), tuple(args))  # always a tuple: ``%%`` then reads as ``%``
            return cur
        except Exception as exc:
            self._forget_if_lost(exc)
            raise

    def q(self, sql: str, args: Sequence[object] = ()) -> list[Any]:
        """Fetch every row of a statement (rows are loosely typed at this edge by design)."""
        with self._cursor_run(sql, args) as cur:
            return list(cur.fetchall())

    def x(self, sql: str, args: Sequence[object] = ()) -> int:
        """Run a statement; the affected row count (real for DML, unlike pylibseekdb's own cursor)."""
        with self._cursor_run(sql, args) as cur:
            return int(cur.rowcount)

    def many(self, sql: str, rows: Sequence[Sequence[object]]) -> None:
        if not rows:
            return
        try:
            with self.conn.cursor() as cur:
                cur.executemany(self._sql(sql), [tuple(r) for r in rows])
        except Exception as exc:
            self._forget_if_lost(exc)
            raise

    def insert_id(self, sql: str, args: Sequence[object], id_column: str) -> int:
        with self._cursor_run(sql, args) as cur:
            return int(cur.lastrowid)

    def execute(self, sql: str, args: Sequence[object] | None = None) -> int:
        """A statement of the engine's own (``%s`` placeholders, nothing rewritten)."""
        try:
            with self.conn.cursor() as cur:
                return int(cur.execute(sql, args))
        except Exception as exc:
            self._forget_if_lost(exc)
            raise

    def side_ddl(self, sql: str) -> None:
        """DDL on a connection of its own (autocommit), so it never commits this connection's transaction."""
        side = self.connect()
        try:
            with side.cursor() as cur:
                cur.execute(sql)
        finally:
            side.close()

    def ddl(self, sql: str) -> None:
        """One DDL statement, never inside a transaction (it would commit that transaction implicitly)."""
        if self.txn is not None:
            raise AssertionError(f"DDL inside a {self.txn} transaction: {sql[:60]}")
        self.execute(sql)

    # ------------------------------------------------------------------ transactions
    @contextmanager
    def write(self) -> Iterator[None]:
        if self.txn == "write":
            yield
            return
        if self.txn == "read":
            raise AssertionError("a write transaction inside a read transaction")
        with translated(database=self.database):
            self.execute("BEGIN")
        self.txn = "write"
        try:
            yield  # the caller translates errors of the body (it knows the Memory a conflict names)
        except BaseException:
            self._end("ROLLBACK")
            raise
        else:
            try:
                with translated(database=self.database):
                    self.execute("COMMIT")
            finally:
                self.txn = None

    @contextmanager
    def read(self) -> Iterator[None]:
        if self.txn is not None:
            yield
            return
        with translated(database=self.database):
            self.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            self.execute("START TRANSACTION READ ONLY")
        self.txn = "read"
        try:
            yield
        finally:
            self._end("COMMIT")

    def _end(self, statement: str) -> None:
        self.txn = None
        if self._conn is None:
            return
        try:
            self.execute(statement)
        except Exception:
            self.close()


__all__ = ["Connection", "connect_args", "database_of", "translated"]
