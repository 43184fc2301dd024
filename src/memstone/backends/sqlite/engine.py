"""The SQLite engine: one apsw connection served by one worker thread, WAL mode, FTS5 and sqlite-vec.

Its write transaction is ``BEGIN IMMEDIATE``, which already serializes every write against every other on the
file, so the isolation contract's locks (``backends/sql/engine.py``) are no-ops here. A read transaction is a
deferred ``BEGIN``: one WAL snapshot for all its statements.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any, TypedDict, TypeVar

import apsw

from ...domain.errors import BackendUnavailable, NotFound
from ...ports import Capabilities
from ..sql.engine import Dialect, Migrator
from ..sql.workers import Workers
from . import migrations
from .errors import translated
from .fts import SQLiteFullText
from .options import SYNCHRONOUS, StoreOptions, must_open_read_only, read_only_refusal, read_only_uri
from .purge import SQLitePurge
from .upkeep import SQLiteUpkeep
from .vectors import SQLiteVectors

T = TypeVar("T")
MIN_SQLITE = (3, 38, 0)
DEFAULT_BUSY_TIMEOUT_MS = 15_000


class SQLiteDialect(Dialect):
    name = "sqlite"

    def no_index(self, column: str) -> str:
        return "+" + column  # unary + keeps SQLite's planner on the primary key


class SQLiteConn:
    """``Conn`` over the apsw connection (apsw takes ``?`` placeholders as they are)."""

    def __init__(self, conn: apsw.Connection) -> None:
        self.raw = conn

    def q(self, sql: str, args: Sequence[object] = ()) -> list[Any]:
        return self.raw.execute(sql, args).fetchall()

    def x(self, sql: str, args: Sequence[object] = ()) -> int:
        self.raw.execute(sql, args)
        return int(self.raw.changes())

    def many(self, sql: str, rows: Sequence[Sequence[object]]) -> None:
        if rows:
            self.raw.executemany(sql, rows)

    def insert_id(self, sql: str, args: Sequence[object], id_column: str) -> int:
        self.raw.execute(sql, args)
        return int(self.raw.last_insert_rowid())


class SQLiteEngineArgs(TypedDict, total=False):
    """:class:`SQLiteEngine`'s keyword arguments (the backend passes them on as they are)."""

    busy_timeout_ms: int
    options: StoreOptions | None
    create: bool


class SQLiteEngine:
    """The engine parts for one SQLite file (or ``:memory:``)."""

    def __init__(
        self,
        path: str,
        *,
        busy_timeout_ms: int = DEFAULT_BUSY_TIMEOUT_MS,
        options: StoreOptions | None = None,
        create: bool = True,
    ) -> None:
        self.path = path
        self.options = options or StoreOptions()
        self.read_only = self.options.read_only
        self._create = create
        self.busy_timeout_ms = busy_timeout_ms
        self._workers = Workers("SQLiteEngine")  # its lock: held by whichever thread is using the connection
        self._conn: SQLiteConn | None = None
        self.dialect = SQLiteDialect()
        self.fts = SQLiteFullText(self)
        self.vectors = SQLiteVectors()
        self.purge = SQLitePurge(self)
        self.upkeep = SQLiteUpkeep(self)
        self.schema_version = migrations.LATEST
        self.capabilities = Capabilities(
            fts=True,
            vector=True,  # sqlite-vec is loaded and probed at open; a store uses it once it records a profile
            hybrid=True,
            concurrent_processes=path != ":memory:",
            persistent=path != ":memory:",
        )

    @property
    def conn(self) -> SQLiteConn:
        if self._conn is None:
            raise BackendUnavailable("the SQLite store is not open")
        return self._conn

    @property
    def raw(self) -> apsw.Connection:
        return self.conn.raw

    # ---------------------------------------------------------------- execution: one worker thread
    async def run(self, fn: Callable[..., T], *args: object) -> T:
        return await self._workers.run(fn, *args)

    async def run_short(self, fn: Callable[..., T], *args: object) -> T:
        """On the caller's thread when the store is idle (no thread hand-off), else queued.

        Only for bounded reads (an FTS search reads at most its candidate depth): it briefly holds the event loop.
        """
        if self._workers.lock.acquire(blocking=False):
            try:
                return fn(*args)
            finally:
                self._workers.lock.release()
        return await self.run(fn, *args)

    # ---------------------------------------------------------------- transactions
    def write_txn(self) -> AbstractContextManager[None]:
        return self._txn(write=True)

    def read_txn(self) -> AbstractContextManager[None]:
        return self._txn(write=False)

    @contextmanager
    def _txn(self, *, write: bool) -> Iterator[None]:
        """A transaction, or the one already open: a write's begins IMMEDIATE (the file's write lock) and rolls
        back after an error; a read's is one WAL snapshot, ended by COMMIT either way."""
        conn = self.raw
        if conn.in_transaction:
            yield
            return
        if write and self.read_only:
            raise read_only_refusal(self.path)
        with translated():
            conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
        try:
            with translated():
                yield
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK" if write else "COMMIT")
            raise
        if write or conn.in_transaction:
            with translated():
                if write:
                    self.fts.settle(self.conn)  # FTS5 segments merged when a write added enough (issue 15)
                conn.execute("COMMIT")

    def lock(self, key: str, *, shared: bool = False) -> None:
        return None  # BEGIN IMMEDIATE already holds the file's write lock

    def conflict(self, memory_id: str, base: int) -> AbstractContextManager[None]:
        return translated(memory_id, base=base)

    # ---------------------------------------------------------------- lifecycle
    def open_sync(self, migrate: Migrator) -> tuple[int, ...]:
        version = tuple(int(x) for x in apsw.sqlite_lib_version().split(".")[:3])
        if version < MIN_SQLITE:
            raise BackendUnavailable(f"SQLite {apsw.sqlite_lib_version()} is older than 3.38.0")
        self.read_only = self.options.read_only or must_open_read_only(self.path)
        if self.path != ":memory:":
            if not self._create and not Path(self.path).exists():
                # Trigger: a read-only command (list, search, show, verify, ...) on a path with no store.
                # Why: opening it would create an empty database, so a typo'd path looked like an empty store.
                # Outcome: NotFound naming the file; nothing is created.
                raise NotFound(
                    f"no memstone store at {self.path}",
                    hint="check --url / MEMSTONE_URL; a write (memstone remember) creates a new store",
                )
            if self._create and not self.read_only:
                Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        with translated(path=self.path):
            if self.read_only:
                conn = apsw.Connection(read_only_uri(self.path), flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI)
            else:
                conn = apsw.Connection(self.path)
            conn.set_busy_timeout(self.busy_timeout_ms)
            self._conn = SQLiteConn(conn)
            self.vectors.load(conn)
            self.fts.load(conn)  # memstone_rank when the install compiled it (issue 15)
            self.capabilities = replace(self.capabilities, fts_ranking=self.fts.ranking)
            conn.execute("PRAGMA foreign_keys = ON")
            conn.execute(f"PRAGMA cache_size = {-1024 * self.options.cache_mib}")  # KiB; see options.py
            if self.path != ":memory:" and not self.read_only:
                mode = conn.execute("PRAGMA journal_mode = WAL").fetchall()[0][0]
                if str(mode).lower() != "wal":
                    raise BackendUnavailable(f"could not switch {self.path} to WAL mode (got {mode})")
            # An acknowledged write is durable by default: FULL syncs the WAL at every commit (see .options).
            conn.execute(f"PRAGMA synchronous = {SYNCHRONOUS[self.options.durability]}")
            stored = migrations.stored_version(conn)
            if stored == migrations.LATEST:
                return ()  # opening an up-to-date store takes no write lock
            if self.read_only and 0 < stored < migrations.LATEST:
                # Trigger: a read-only open (?mode=ro, a read-only file or mount) of a store an older release wrote.
                # Why: migrating writes, and this code reads only the latest layout: served as it is, verify, the
                # principals (the old `user` column), the capture queue and tombstones failed with SQL errors.
                # Outcome: refused before any read, saying how to migrate it; the file is not touched.
                raise BackendUnavailable(
                    f"{self.path} was written by an older memstone (schema version {stored}; this one reads "
                    f"{migrations.LATEST}) and is open read-only, so it cannot be migrated here",
                    hint=f"run `memstone --url sqlite:///{self.path} migrate` with write access to the file "
                    "(or on a writable copy of it), then open it read-only again",
                )
            return migrations.migrate(self, migrate)

    async def aclose(self) -> None:
        def close() -> None:
            self.vectors.close()
            if self._conn is not None:
                self._conn.raw.close()
                self._conn = None

        await self.run(close)
        self._workers.shutdown()


__all__ = ["DEFAULT_BUSY_TIMEOUT_MS", "SQLiteEngine"]
