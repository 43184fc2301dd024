"""The OceanBase engine parts for the store core: execution, DDL and migrations, transactions and locks.

Execution: one PyMySQL connection served by one worker thread (the core's jobs never run on the event loop's
thread: every statement is a network round trip). Several processes or machines share one database.

The isolation contract (``backends/sql/engine.py``), met with OceanBase's row locks at READ COMMITTED:

- ``memory:<id>``: ``SELECT … FOR UPDATE`` on the Memory's ``artifact_heads`` row. Writers of one Memory queue
  there and each then reads the head its predecessor committed; writers of other Memories never wait. A Memory
  that has no head yet has no row to lock: two first writes of one id meet on the head's primary key instead (the
  core's insert-or-ignore then fails the compare-and-swap: RevisionConflictError).
- ``scope:<uri>`` and ``source:<id>``: nothing more to take. The unique key refuses a second binding, and
  MySQL-mode ``INSERT IGNORE`` of a key another open transaction inserted waits for that transaction, then
  inserts nothing; the core reads back what won.
- ``meta:<key>`` exclusive: ``SELECT … FOR UPDATE`` on that key's row of ``store_locks``. ``meta:migration``
  exclusive also locks every head row, so a model migration's start and swap (and a rebuild) wait for the writes
  in flight and run alone. Shared ``meta:migration`` (every commit) takes nothing: OceanBase's
  ``LOCK IN SHARE MODE`` conflicts with itself (found on seekdb 1.4.0), which would serialize every write of the
  store; a write that starts after a migration started sees its marker and is refused, and one that started
  before is waited for by the exclusive lock above.

A read transaction is ``REPEATABLE READ`` + ``START TRANSACTION READ ONLY``: one snapshot for all its statements.
DDL never runs inside a transaction (MySQL mode would commit it implicitly): migrations run it between
transactions, and the vector codec runs it on a side connection (connection.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import TypeVar

from ...domain.errors import BackendUnavailable, NotFound
from ..sql.engine import SHARED_HYBRID, Dialect, Migrator
from ..sql.workers import Workers
from . import schema
from .connection import UNKNOWN_DATABASE, Connection, translated
from .fts import OceanBaseFullText
from .purge import OceanBasePurge
from .vectors import OceanBaseVectors

T = TypeVar("T")
_ALREADY_EXISTS = (1050, 1060, 1061, 1826)  # table / column / key / foreign key exists: a racing migration
MIN_VERSION = (4, 3, 5)


class OceanBaseDialect(Dialect):
    """MySQL mode: ``ON DUPLICATE KEY UPDATE``, ``INSERT IGNORE``, ``JSON_CONTAINS``."""

    name = "oceanbase"

    def column(self, name: str) -> str:
        return f"`{name}`"

    def upsert(self, table: str, columns: Sequence[str], key: Sequence[str], update: Sequence[str]) -> str:
        sets = ", ".join(f"{self.column(c)} = VALUES({self.column(c)})" for c in update)
        return f"{self.insert_into(table, columns)} ON DUPLICATE KEY UPDATE {sets}"

    def insert_ignore(self, table: str, columns: Sequence[str], key: Sequence[str]) -> str:
        return self.insert_into(table, columns, "INSERT IGNORE")

    def json_array_has(self, column: str) -> str:
        return f"JSON_CONTAINS({column}, JSON_ARRAY(?))"


class OceanBaseEngine:
    """The engine parts for one OceanBase (MySQL-mode) database."""

    def __init__(self, url: str, *, create: bool = True) -> None:
        self.url = url
        self._create = create
        self.db = Connection(url)
        self._workers = Workers("OceanBaseEngine")
        self.dialect = OceanBaseDialect()
        self.vectors = OceanBaseVectors(self.db)
        self.fts = OceanBaseFullText(self.vectors)
        self.purge = OceanBasePurge(self._ddl_sync)
        self.server_version = ""
        self.schema_version = schema.LATEST
        self.capabilities = SHARED_HYBRID

    @property
    def conn(self) -> Connection:
        return self.db

    # ---------------------------------------------------------------- execution: one worker thread
    async def run(self, fn: Callable[..., T], *args: object) -> T:
        return await self._workers.run(fn, *args)

    async def run_short(self, fn: Callable[..., T], *args: object) -> T:
        return await self.run(fn, *args)  # a round trip to the server: never on the event loop's thread

    # ---------------------------------------------------------------- transactions and locks
    def write_txn(self) -> AbstractContextManager[None]:
        return self._txn(self.db.write)

    def read_txn(self) -> AbstractContextManager[None]:
        return self._txn(self.db.read)

    @contextmanager
    def _txn(self, begin: Callable[[], AbstractContextManager[None]]) -> Iterator[None]:
        """A transaction of the connection (``begin``: its ``write`` or ``read``), its errors translated."""
        with translated(database=self.db.database), begin():
            yield

    def lock(self, key: str, *, shared: bool = False) -> None:
        if self.db.txn != "write":
            raise AssertionError(f"lock({key!r}) outside a write transaction")
        kind, _, name = key.partition(":")
        if kind == "memory":
            self.db.execute("SELECT revision FROM artifact_heads WHERE artifact_id = %s FOR UPDATE", (name,))
        elif kind == "meta":
            if shared:
                return  # see the module docstring: a shared row lock would serialize every write
            self.db.execute(
                "INSERT INTO store_locks (lock_key) VALUES (%s) ON DUPLICATE KEY UPDATE lock_key = lock_key", (key,)
            )
            if name == "migration":
                self.db.execute("SELECT artifact_id FROM artifact_heads FOR UPDATE")
        # scope: and source: are guarded by their unique keys (module docstring).

    @contextmanager
    def _conflict(self, memory_id: str, base: int) -> Iterator[None]:
        with translated(memory_id, base=base, database=self.db.database):
            yield

    def conflict(self, memory_id: str, base: int) -> AbstractContextManager[None]:
        return self._conflict(memory_id, base)

    # ---------------------------------------------------------------- lifecycle
    def open_sync(self, migrate: Migrator) -> tuple[int, ...]:
        with translated(database=self.db.database):
            self._connect_sync()
            self._probe_sync()
            applied = self._migrate_sync()
            self.vectors.refresh()
            return applied

    def _connect_sync(self) -> None:
        import pymysql

        try:
            self.db.q("SELECT 1")
        except pymysql.err.OperationalError as exc:
            if not (exc.args and exc.args[0] == UNKNOWN_DATABASE and self._create):
                raise
            # Trigger: a write on a URL naming a database that does not exist yet.
            # Why: a new store is created by its first write, as a SQLite file is.
            # Outcome: CREATE DATABASE (it needs the privilege); a read never creates anything.
            server = self.db.connect(with_database=False)
            try:
                with server.cursor() as cur:
                    cur.execute(f"CREATE DATABASE IF NOT EXISTS `{self.db.database}`")
            finally:
                server.close()
            self.db.close()
            self.db.q("SELECT 1")

    def _probe_sync(self) -> None:
        """The RFC's startup check: an OceanBase MySQL-mode server, 4.3.5 or newer."""
        version, comment = self.db.q("SELECT version(), @@version_comment")[0]
        self.server_version = str(comment)
        if "OceanBase" not in f"{version} {comment}":
            raise BackendUnavailable(f"{self.db.database} is not on an OceanBase server ({version})")
        found = kernel_version(str(comment))
        if found is not None and found < MIN_VERSION:
            raise BackendUnavailable(
                f"OceanBase {'.'.join(map(str, found))} is older than 4.3.5 (FULLTEXT SPACE parser, HNSW)",
                hint="use an OceanBase 4.3.5+ MySQL-mode tenant",
            )

    def _stored_version_sync(self) -> int:
        tables = self.db.q(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = ? AND table_name = 'store_meta'",
            (self.db.database,),
        )
        if not tables:
            return 0
        rows = self.db.q("SELECT value FROM store_meta WHERE key = 'schema_version'")
        return int(rows[0][0]) if rows else 0

    def _migrate_sync(self) -> tuple[int, ...]:
        current = self._stored_version_sync()
        if current > schema.LATEST:
            raise BackendUnavailable(
                f"{self.db.database} has schema version {current}, newer than this memstone ({schema.LATEST})",
                hint="upgrade memstone",
            )
        if current == schema.LATEST:
            return ()
        if not self._create:
            raise NotFound(
                f"no memstone store in database {self.db.database}",
                hint="check --url / MEMSTONE_URL; a write (memstone remember) creates a new store",
            )
        applied: list[int] = []
        for step in schema.MIGRATIONS:
            if step.version <= current:
                continue
            # DDL commits implicitly in MySQL mode: each statement runs on its own, outside any transaction, and
            # each is idempotent (IF NOT EXISTS), so a migration interrupted or raced by another process is
            # finished by the next open. The version is recorded last, in a transaction of its own.
            for statement in step.statements():
                self._ddl_sync(statement)
            with self.write_txn():
                for key, value in schema.SEED_META:
                    self.db.x(self.dialect.insert_ignore("store_meta", ("key", "value"), ("key",)), (key, value))
                for lock in schema.SEED_LOCKS:
                    self.db.x(self.dialect.insert_ignore("store_locks", ("lock_key",), ("lock_key",)), (lock,))
                self.db.x(
                    self.dialect.upsert("store_meta", ("key", "value"), ("key",), ("value",)),
                    ("schema_version", str(step.version)),
                )
            applied.append(step.version)
        return tuple(applied)

    def _ddl_sync(self, sql: str) -> None:
        import pymysql

        try:
            self.db.ddl(sql)
        except pymysql.err.Error as exc:
            if not (exc.args and exc.args[0] in _ALREADY_EXISTS):
                raise

    async def aclose(self) -> None:
        await self.run(self.db.close)
        self._workers.shutdown()


def kernel_version(comment: str) -> tuple[int, ...] | None:
    """``(4, 3, 5, 3)`` from ``OceanBase 4.3.5.3 seekdb (r1.4.0.0) …`` (None when it names no version)."""
    found = re.search(r"\b(\d+)\.(\d+)\.(\d+)(?:\.(\d+))?\b", comment)
    return tuple(int(g) for g in found.groups() if g is not None) if found else None


__all__ = ["OceanBaseDialect", "OceanBaseEngine", "kernel_version"]
