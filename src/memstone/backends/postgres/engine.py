"""The PostgreSQL engine: psycopg 3 over a ``psycopg_pool.ConnectionPool``, jobs on a thread pool of the same size.

Why a sync pool run off the event loop, not psycopg's async pool: the store core is one synchronous body of SQL
shared by every engine (SQLite's apsw has no async API). Each core job runs on a worker thread of this engine's
executor and checks a connection out of the pool for the length of its transaction, so up to ``pool_size`` reads
and writes run side by side, and the event loop is never blocked (``run_short`` queues like ``run``).

Isolation (``backends/sql/engine.py``): write transactions are READ COMMITTED and take transaction-scoped advisory
locks on the core's keys (``pg_advisory_xact_lock`` / ``_shared``, keyed by a 64-bit hash of the key), so two
writes of one Memory serialize and writes of different Memories do not; the head's compare-and-swap and unique
keys still guard every row. Read transactions are ``REPEATABLE READ READ ONLY``: one snapshot. No DDL runs on a
write path: the schema is created by migrations at open, the vector table when a profile is recorded.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager, contextmanager
from dataclasses import replace
from typing import Any, TypeVar

import psycopg
from psycopg import sql as pgsql
from psycopg.pq import TransactionStatus
from psycopg_pool import ConnectionPool, PoolTimeout

from ...domain.errors import BackendError, BackendUnavailable, NotFound
from ..sql.engine import SHARED_HYBRID, Dialect, Migrator, ReadEnded, Snapshot
from ..sql.workers import Workers
from . import schema
from .arrays import bytea_array, int_array, text_array
from .errors import ROW_MOVED, STALE_START, translated
from .fold import ONE_CHECK, ONE_HEAD, foldable, folded
from .fts import PostgresFullText
from .purge import PostgresPurge
from .upkeep import PostgresUpkeep
from .vectors import PgVectors

T = TypeVar("T")
DEFAULT_POOL_SIZE = 8
_MIGRATION_LOCK = "memstone:schema-migration"
_EXPORT = "SELECT pg_export_snapshot()"
_WRITE_BEGIN = "BEGIN ISOLATION LEVEL READ COMMITTED"
_LOCKS = "SELECT /* locks */ "  # the statement of locks queued one after the other (``PostgresEngine.lock``)
# How long a read waits for a second pooled connection to run a statement beside it before it runs the statement
# itself, after its own: a busy pool (every connection held by a search that wants a second one) never deadlocks.
# While the pool is below its size, the wait may open a new connection (a few ms on a local server).
BESIDE_WAIT_S = 0.001
BESIDE_GROW_S = 0.25
Statement = tuple[str, Sequence[object]]


# An array literal's builder and cast by the Python type of a column's values (``insert_ignore_columns``).
_ARRAYS: dict[type, tuple[Callable[[Any], str], str]] = {
    str: (text_array, "text[]"),
    bytes: (bytea_array, "bytea[]"),
    int: (int_array, "bigint[]"),
}


class PostgresDialect(Dialect):
    name = "postgresql"

    def insert_ignore_columns(
        self, table: str, columns: Sequence[str], key: Sequence[str], rows: Sequence[Sequence[object]]
    ) -> tuple[str, list[object]] | None:
        """``INSERT … SELECT * FROM unnest(?::text[], ?::bytea[]) ON CONFLICT (key) DO NOTHING``: one array literal
        a column (``arrays``), so the statement's text and its two parameters stay the same however many rows (a
        write's manifest nodes: its fold, ``fold.py``, takes them at any size). None for a column of other values."""
        values = list(zip(*rows, strict=True))  # a column's values, each column of one type of ``_ARRAYS``
        kinds = [_ARRAYS.get(type(column[0])) for column in values]
        if not rows or any(
            kind is None or {type(v) for v in column} != {type(column[0])}
            for kind, column in zip(kinds, values, strict=True)
        ):
            return None
        casts = ", ".join(f"?::{kind[1]}" for kind in kinds if kind is not None)
        sql = (
            f"INSERT INTO {table} ({', '.join(columns)}) SELECT * FROM unnest({casts}) "
            f"ON CONFLICT ({', '.join(key)}) DO NOTHING"
        )
        return sql, [kind[0](column) for kind, column in zip(kinds, values, strict=True) if kind is not None]

    def json_array_has(self, column: str) -> str:
        return f"({column})::jsonb @> jsonb_build_array(?::text)"


class PostgresConn:
    """``Conn`` over one pooled psycopg connection; ``?`` placeholders become ``%s`` (cached per statement).

    Statements whose results nobody reads (a transaction's ``BEGIN``, its advisory locks) are deferred and sent in
    one pipeline with the next statement: a write's ``BEGIN``, its two or three locks and its first read cost one
    network round trip instead of four, and they still run in order, before anything they protect.
    """

    def __init__(
        self, conn: psycopg.Connection[Any], snapshot: Snapshot | None = None, engine: PostgresEngine | None = None
    ) -> None:
        self.raw = conn
        self.pending: list[tuple[str, list[object] | None]] = []
        self.trailing: list[tuple[str, list[object] | None]] = []  # ``ahead(after=True)``: sent after the next one
        self.snapshot = snapshot  # a read-only transaction's reads, kept for its later statements
        self._engine = engine  # a read-only transaction's: runs a statement beside it (``beside``)
        self._kept: dict[int, list[psycopg.Cursor[Any]]] = {}  # queued statements whose rows are read (``ahead``)
        self._quiet: psycopg.Cursor[Any] | None = None  # the cursor of queued statements whose rows no one reads
        self._export: Callable[[], list[Any]] | None = None  # pg_export_snapshot()'s reply, once asked
        self._snapshot_id: str | None = None
        self.prefetched: dict[tuple[str, str], Callable[[], list[Any]]] = {}  # ``ahead`` statements a codec queued
        self.one_trip = False  # ``read_one_trip``: COMMIT travels with the first trip; a statement after it fails
        self.ended = False  # that COMMIT was sent

    def ahead(self, sql: str, args: Sequence[object] = (), *, after: bool = False) -> Callable[[], list[Any]]:
        """Queue a statement to travel with the next one, in the same trip (before it; ``after``: after it, so the
        next one runs first and the server shows this one as the transaction's last), and return the reader of its
        rows (it sends the queue itself when nothing else has yet)."""
        entry: tuple[str, list[object] | None] = (self._translate(sql), list(args))
        cursors: list[psycopg.Cursor[Any]] = []
        (self.trailing if after else self.pending).append(entry)
        self._kept[id(entry)] = cursors
        rows: list[list[Any]] = []

        def read() -> list[Any]:
            if not rows:
                if not cursors:
                    self.flush()
                cur = cursors[0]
                rows.append(cur.fetchall() if cur.description is not None else [])
            return rows[0]

        return read

    def export_snapshot(self) -> None:
        """Export this read-only transaction's snapshot with its next statement (no round trip of its own), so a
        statement on another connection can read the same snapshot (``beside``)."""
        if self._engine is None or self._engine.pool_size < 2:
            return  # no second connection to share it with
        if self._export is None:
            self._export = self.ahead(_EXPORT)

    def beside(self, statement: Statement, settings: Sequence[Statement] = ()) -> Callable[[], list[Any]] | None:
        """Run ``statement`` (after ``settings``) on a second pooled connection, in this transaction's own snapshot,
        while this connection runs other statements; returns the finisher that waits for its rows. None (the caller
        runs it here, later) when the snapshot was not exported first or no connection is free at once."""
        if self._engine is None or self._export is None:
            return None
        if self._snapshot_id is None:
            self._snapshot_id = str(self._export()[0][0])
        return self._engine.beside(self._snapshot_id, statement, settings)

    @staticmethod
    @functools.lru_cache(maxsize=4096)
    def _translate(sql: str) -> str:
        return sql.replace("%", "%%").replace("?", "%s")

    def defer(self, sql: str, args: Sequence[object] | None = None) -> None:
        """Queue a statement whose result is not needed; it runs before the next statement, in the same trip."""
        self.pending.append((sql if args is None else self._translate(sql), None if args is None else list(args)))

    def defer_one(self, sql: str, args: Sequence[object]) -> None:
        """Queue an UPDATE or INSERT that must change exactly one row (``later_one``: the head's compare-and-swap),
        to travel with the next statement or ``COMMIT``. When it changes none, its statement fails with ``ROW_MOVED``
        there, the rest of the trip (``COMMIT`` too) is skipped and the transaction rolls back; inside ``conflict``
        that is a RevisionConflictError, as when the swap was read at once."""
        self.defer(_exactly_one(sql), args)

    def defer_guard(self, condition: str, args: Sequence[object]) -> None:
        """Queue a check of ``condition`` (an SQL boolean) to travel with the next statement or ``COMMIT``: unless it
        is true there, its statement fails, the rest of the trip is skipped and the transaction raises
        ``StaleStart`` (``Routes.guarded_start``)."""
        self.defer(_guarded(condition), args)

    def _send_pending(self, trailing: bool = False) -> None:
        if trailing:
            pending, self.trailing = self.trailing, []
        else:
            pending, self.pending = self.pending, []
        run: list[tuple[str, list[object] | None]] = []  # quiet row writes sent as one statement (``fold``)
        for entry in pending:
            kept = self._kept.pop(id(entry), None) if self._kept else None
            if kept is None and foldable(entry, run):
                run.append(entry)
                continue
            self._send_quiet(run)
            if kept is None:
                self._send_quiet([entry])
            else:
                kept.append(self.raw.execute(*entry))  # its rows are read after the pipeline's sync
        self._send_quiet(run)

    def _send_quiet(self, run: list[tuple[str, list[object] | None]]) -> None:
        """Send queued statements whose results no one reads, as one statement (``fold.folded``); empties ``run``."""
        if run:
            if self._quiet is None:
                self._quiet = self.raw.cursor()
            self._quiet.execute(*(run[0] if len(run) == 1 else folded(run)))  # one cursor serves them all
            run.clear()

    def flush(self) -> None:
        if self.pending or self.trailing:
            self._unless_ended()
            with self.raw.pipeline():
                self._send_pending()
                self._send_pending(trailing=True)
                self._end_if_one_trip()

    def _execute(self, sql: str, args: Sequence[object]) -> psycopg.Cursor[Any]:
        self._unless_ended()
        if not self.pending and not self.trailing and not self.one_trip:
            return self.raw.execute(self._translate(sql), list(args))
        with self.raw.pipeline():
            self._send_pending()
            cur = self.raw.execute(self._translate(sql), list(args))
            self._send_pending(trailing=True)
            self._end_if_one_trip()
        return cur

    def _unless_ended(self) -> None:
        if self.ended:
            raise ReadEnded("a one-trip read needs a statement after its first trip")

    def _end_if_one_trip(self) -> None:
        if self.one_trip:
            self.raw.execute("COMMIT")  # in the same pipeline: its reads are done, in one snapshot
            self.ended = True

    def q(self, sql: str, args: Sequence[object] = ()) -> list[Any]:
        cur = self._execute(sql, args)
        return cur.fetchall() if cur.description is not None else []

    def x(self, sql: str, args: Sequence[object] = ()) -> int:
        return int(self._execute(sql, args).rowcount)

    def many(self, sql: str, rows: Sequence[Sequence[object]]) -> None:
        if rows:
            self._unless_ended()
            self.flush()
            with self.raw.cursor() as cur:
                cur.executemany(self._translate(sql), [list(r) for r in rows])

    def insert_id(self, sql: str, args: Sequence[object], id_column: str) -> int:
        row = self._execute(f"{sql} RETURNING {id_column}", args).fetchone()
        assert row is not None
        return int(row[0])


@functools.lru_cache(maxsize=64)
def _exactly_one(sql: str) -> str:
    """``sql`` (UPDATE or INSERT) as one statement that fails unless it changed exactly one row. The failing cast
    reads the row count, so the planner cannot fold it into a constant and raise it at plan time."""
    return f"{ONE_HEAD}{sql}{ONE_CHECK}ELSE ('{ROW_MOVED}: ' || count(*))::int END FROM changed"


@functools.lru_cache(maxsize=16)
def _guarded(condition: str) -> str:
    """``condition`` as one statement that fails unless it is true (NULL fails too); its subqueries keep the planner
    from folding the failing cast at plan time."""
    return (
        f"SELECT CASE WHEN g.ok IS TRUE THEN 1 ELSE ('{STALE_START}: ' || coalesce(g.ok::text, 'null'))::int END "
        f"FROM (SELECT {condition} AS ok) g"
    )


class PostgresEngine:
    """The engine parts for one PostgreSQL database (with pgvector when the extension is available)."""

    def __init__(self, url: str, *, create: bool = True, pool_size: int = DEFAULT_POOL_SIZE) -> None:
        self.url = url
        self._create = create
        self.pool_size = pool_size
        self._pool: ConnectionPool[psycopg.Connection[Any]] | None = None
        self._workers = Workers("PostgresEngine", size=pool_size, serial=False)
        self._beside: ThreadPoolExecutor | None = None  # the threads of ``beside`` statements, started on first use
        self._local = threading.local()
        self.dialect = PostgresDialect()
        self.fts = PostgresFullText()
        self.vectors: PgVectors | None = PgVectors()
        self.purge = PostgresPurge(self._autocommit)
        self.upkeep = PostgresUpkeep(self._autocommit)
        self.schema_version = schema.LATEST
        self.capabilities = replace(
            SHARED_HYBRID,
            org_embedding=True,
            vector_later=True,  # a hybrid search's first trips and FTS statement run while the query embeds
            check_in_commit=True,  # a write's duplicate check: in its first trip, not a job and a trip of its own
        )

    @property
    def conn(self) -> PostgresConn:
        conn: PostgresConn | None = getattr(self._local, "conn", None)
        if conn is None:
            raise BackendUnavailable("no PostgreSQL transaction is open on this thread")
        return conn

    # ---------------------------------------------------------------- execution: a pool of threads and connections
    async def run(self, fn: Callable[..., T], *args: object) -> T:
        return await self._workers.run(fn, *args)

    async def run_short(self, fn: Callable[..., T], *args: object) -> T:
        return await self.run(fn, *args)  # a network round trip never runs on the event loop

    # ---------------------------------------------------------------- transactions
    @contextmanager
    def _txn(self, begin: str | None, *, read_only: bool = False, implicit: bool = False) -> Iterator[None]:
        """A transaction on a pooled connection, bound to this thread. ``implicit`` (a write): when nothing reached
        the server before the block ended, its statements go in one pipeline without the queued ``begin`` and with
        no COMMIT: the server runs the statements up to a pipeline's Sync as one implicit transaction, which it
        commits at the Sync, or rolls back whole when one of them fails (PostgreSQL's extended query protocol). The
        connection's default isolation is READ COMMITTED (``open_sync``), the level ``begin`` names."""
        if getattr(self._local, "conn", None) is not None:
            yield  # nested: joins the outer transaction
            return
        pool = self._pool
        if pool is None:
            raise BackendUnavailable("the PostgreSQL store is not open")
        with translated(url=self.url):
            raw = pool.getconn()
        sent_implicit = False
        try:
            conn = self._local.conn = PostgresConn(raw, Snapshot(), self) if read_only else PostgresConn(raw)
            if begin is not None:  # None: autocommit, each statement its own snapshot (``read_once``)
                conn.defer(begin)  # sent with the transaction's first statement
            try:
                with self._translated():
                    yield
                conn.trailing.clear()  # read ahead for a statement that never came: nobody reads it
                idle = raw.info.transaction_status == TransactionStatus.IDLE
                if implicit and idle and len(conn.pending) > 1 and conn.pending[0] == (begin, None):
                    # One trip with nothing sent before it: no BEGIN, no COMMIT (two statements fewer for the
                    # client and the server); the pipeline's Sync commits it, or rolls it back when one fails.
                    del conn.pending[0]
                    sent_implicit = True
                    with self._translated():
                        conn.flush()
                elif not idle or len(conn.pending) > 1:
                    with self._translated():
                        # COMMIT travels in one trip with what is still queued (a head row's postings, locks taken
                        # after the last statement, which still wait for their holders).
                        conn.defer("COMMIT")
                        conn.flush()
                # else: nothing reached the server (not even BEGIN), so there is nothing to commit
            except BaseException:
                if not raw.closed and raw.info.transaction_status != TransactionStatus.IDLE:
                    # rollback(), not a ROLLBACK statement: psycopg then forgets the statements it prepared, as a
                    # pipeline that failed may have skipped one it counts as prepared ("prepared statement … does
                    # not exist" in the connection's next transaction otherwise).
                    raw.rollback()
                elif sent_implicit and not raw.closed:
                    # The server rolled the implicit transaction back at the Sync; forget the prepared statements
                    # as rollback() does (the same reason).
                    raw._prepared.clear()
                raise
        finally:
            self._local.conn = None
            pool.putconn(raw)

    def beside(
        self, snapshot_id: str, statement: Statement, settings: Sequence[Statement]
    ) -> Callable[[], list[Any]] | None:
        """``PostgresConn.beside``: the statement in a read-only transaction that imports ``snapshot_id`` (exported by
        a transaction that stays open until the finisher has returned), sent with its BEGIN, settings and COMMIT in
        one pipeline: one round trip. None when no pooled connection is free within ``BESIDE_WAIT_S`` (``BESIDE_GROW_S``
        while the pool may still open one)."""
        pool = self._pool
        if pool is None:
            raise BackendUnavailable("the PostgreSQL store is not open")
        grows = pool.get_stats().get("pool_size", self.pool_size) < self.pool_size
        try:
            raw = pool.getconn(timeout=BESIDE_GROW_S if grows else BESIDE_WAIT_S)
        except PoolTimeout:
            return None  # every connection is busy (or the pool is still growing): the caller runs it after
        if self._beside is None:
            self._beside = ThreadPoolExecutor(max_workers=self.pool_size, thread_name_prefix="PostgresEngine-beside")

        def run() -> list[Any]:
            try:
                with translated(url=self.url), raw.pipeline():
                    raw.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
                    raw.execute(pgsql.SQL("SET TRANSACTION SNAPSHOT {}").format(pgsql.Literal(snapshot_id)))
                    for sql, args in settings:
                        raw.execute(PostgresConn._translate(sql), list(args))
                    cur = raw.execute(PostgresConn._translate(statement[0]), list(statement[1]))
                    raw.execute("COMMIT")
                return cur.fetchall()
            except BaseException:
                if not raw.closed and raw.info.transaction_status != TransactionStatus.IDLE:
                    raw.execute("ROLLBACK")
                raise
            finally:
                pool.putconn(raw)

        try:
            future = self._beside.submit(run)
        except BaseException:
            pool.putconn(raw)
            raise
        return future.result

    def _autocommit(self, sql: str) -> list[tuple[object, ...]]:
        """One statement on a pooled connection outside any transaction (VACUUM cannot run inside one)."""
        pool = self._pool
        if pool is None:
            raise BackendUnavailable("the PostgreSQL store is not open")
        with translated(url=self.url), pool.connection() as raw:
            cur = raw.execute(sql)
            return list(cur.fetchall()) if cur.description is not None else []

    def write_txn(self) -> AbstractContextManager[None]:
        return self._txn(_WRITE_BEGIN, implicit=True)

    def read_txn(self) -> AbstractContextManager[None]:
        return self._txn("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", read_only=True)

    @contextmanager
    def read_one_trip(self) -> Iterator[None]:
        """A ``read_txn`` whose COMMIT travels in its first trip, with its BEGIN and first statement (and what is
        queued around it: a search's ranking statement): a read that needs nothing more costs one round trip. A
        statement after that trip raises ReadEnded (the caller runs the read again in a ``read_txn``); its reads were
        all in one snapshot. Inside another transaction it joins that one, as ``read_txn`` does."""
        outer = getattr(self._local, "conn", None) is not None
        with self.read_txn():
            self.conn.one_trip = not outer
            yield

    def read_once(self) -> AbstractContextManager[None]:
        """Statements in autocommit, each its own snapshot (the engine contract's ``read_once``): a duplicate check
        is one statement, with no BEGIN before it and no COMMIT to wait for after it."""
        return self._txn(None)

    def lock(self, key: str, *, shared: bool = False) -> None:
        """Queue the lock (it waits in the next statement's trip). Locks queued one after the other are one
        statement (a write's two or three: one statement for the client and the server, not one each); a select
        list runs in order, so they are taken in the order asked. A lock reads no row, so taking it in the
        statement of the one before it reads nothing early: the statements after them start after every lock."""
        fn = "pg_advisory_xact_lock_shared" if shared else "pg_advisory_xact_lock"
        call = f"{fn}(hashtextextended(%s, 0))"
        pending = self.conn.pending
        if pending and pending[-1][0].startswith(_LOCKS) and id(pending[-1]) not in self.conn._kept:
            sql, args = pending[-1]
            pending[-1] = (f"{sql}, {call}", [*(args or ()), key])
        else:
            pending.append((_LOCKS + call, [key]))

    @contextmanager
    def conflict(self, memory_id: str, base: int) -> Iterator[None]:
        """A commit of ``memory_id`` on ``base``: a unique violation, a serialization failure or a missed
        compare-and-swap (``defer_one``) in it, its ``COMMIT`` included, is a RevisionConflictError."""
        self._local.race = (memory_id, base)
        try:
            with translated(memory_id, base=base, url=self.url):
                yield
        finally:
            self._local.race = None

    def _translated(self) -> AbstractContextManager[None]:
        """The error edge of this thread's transaction (``conflict``'s Memory and base when it is a commit)."""
        memory_id, base = getattr(self._local, "race", None) or ("", 0)
        return translated(memory_id, base=base, url=self.url)

    # ---------------------------------------------------------------- lifecycle
    def open_sync(self, migrate: Migrator) -> tuple[int, ...]:
        def configure(conn: psycopg.Connection[Any]) -> None:
            conn.autocommit = True  # transactions are explicit BEGIN/COMMIT (``_txn``)
            # The level of a write sent as one implicit transaction (``_txn``), whatever the server's default.
            conn.execute("SET default_transaction_isolation TO 'read committed'")

        with translated(url=self.url):
            # One direct connection first: a wrong URL or a server that is down fails now, with the driver's
            # reason, instead of after the pool's retries.
            psycopg.connect(self.url, autocommit=True).close()
            pool: ConnectionPool[psycopg.Connection[Any]] = ConnectionPool(
                self.url,
                min_size=1,
                max_size=self.pool_size,
                configure=configure,
                open=False,
                name="memstone",
                timeout=30.0,
            )
            pool.open(wait=True, timeout=15.0)
        self._pool = pool
        try:
            return self._migrate()
        except BaseException:
            pool.close()
            self._pool = None
            raise

    def _stored_version(self) -> int:
        # pg_tables is read with the statement's snapshot: it sees a table another process committed while this one
        # waited for the migration lock (to_regclass looks in the catalog cache, which may not have caught up yet,
        # and two opens of a new database then both applied migration 1).
        rows = self.conn.q(
            "SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_tables WHERE tablename = 'store_meta' "
            "AND schemaname = current_schema())"
        )
        if not rows or not rows[0][0]:
            return 0
        found = self.conn.q("SELECT value FROM store_meta WHERE key = 'schema_version'")
        return int(found[0][0]) if found else 0

    def _migrate(self) -> tuple[int, ...]:
        with self.read_txn():
            current = self._stored_version()
            has_vector = bool(self.conn.q("SELECT 1 FROM pg_extension WHERE extname = 'vector'"))
        if current > schema.LATEST:
            raise BackendUnavailable(
                f"the store at {self.url.rsplit('@', 1)[-1]} has schema version {current}, newer than this memstone "
                f"({schema.LATEST})",
                hint="upgrade memstone",
            )
        if current == schema.LATEST:
            self._use_vectors(has_vector)
            return ()  # opening an up-to-date store takes no lock
        if current == 0 and not self._create:
            # Trigger: a read-only command (list, search, show, verify, ...) on a database with no store.
            # Outcome: NotFound naming it; nothing is created.
            raise NotFound(
                f"no memstone store in {self.url.rsplit('@', 1)[-1]}",
                hint="check --url / MEMSTONE_URL; a write (memstone remember) creates a new store",
            )
        if not has_vector:
            has_vector = self._create_extension()
        self._use_vectors(has_vector)
        applied: list[int] = []
        for step in schema.MIGRATIONS:
            if step.version <= current:
                continue
            with self.write_txn():
                self.lock(_MIGRATION_LOCK)
                if self._stored_version() >= step.version:  # another process migrated it while we waited
                    continue
                self.conn.flush()
                self.conn.raw.execute(step.ddl)
                if step.version == 1:
                    self.conn.x("INSERT INTO store_meta (key, value) VALUES ('analyzer', 'v1') ON CONFLICT DO NOTHING")
                self.conn.x(
                    "INSERT INTO store_meta (key, value) VALUES ('schema_version', ?) "
                    "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                    (str(step.version),),
                )
            applied.append(step.version)
        return tuple(applied)

    def _create_extension(self) -> bool:
        """``CREATE EXTENSION vector`` (a superuser's right, once per database); False when it cannot be done."""
        try:
            with self.write_txn():
                self.conn.x("CREATE EXTENSION IF NOT EXISTS vector")
            return True
        except BackendError:
            # Not a superuser, or pgvector is not installed on this server: the store works without vectors
            # (capabilities say so) until an administrator runs CREATE EXTENSION vector.
            return False

    def _use_vectors(self, available: bool) -> None:
        if not available:
            self.vectors = None
            self.capabilities = replace(
                self.capabilities, vector=False, hybrid=False, org_embedding=False, vector_later=False
            )

    async def aclose(self) -> None:
        def close() -> None:
            if self._pool is not None:
                self._pool.close()
                self._pool = None

        await self.run(close)
        self._workers.shutdown()
        if self._beside is not None:
            self._beside.shutdown(wait=True)


__all__ = ["DEFAULT_POOL_SIZE", "PostgresEngine"]
