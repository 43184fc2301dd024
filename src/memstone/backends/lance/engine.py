"""The LanceDB engine: the authority is a transaction log on LanceDB (``log.py``); every process queries its own
replica, an in-memory SQLite database derived from that log.

Why this shape (docs/engines/lancedb.md has the whole argument): LanceDB commits one table at a time and has no
multi-table transaction, while a memstone write changes a Revision, its entry versions, manifest nodes, the head,
projections and vectors at once. So a write becomes ONE immutable log row plus ONE conditional move of the head,
and everything a query reads is a projection of the log, rebuilt by replaying it. The store core
(``backends/sql``) runs unchanged on the replica: its rules, projections, search and verify are written once;
this engine only adds the log.

A write (``write_txn``):

1. catch up: apply every transaction the log has beyond this replica (``read_txn`` does the same);
2. run the core's statements on the replica inside ``BEGIN IMMEDIATE``, recording them (``ops.py``);
3. append the recorded ops to the log and move its head by CAS (``LanceLog.append``);
4. COMMIT the replica when the head moved; otherwise ROLL BACK and raise ``_LogMoved``: ``run`` catches up and
   runs the whole job again, so the core re-reads the head it decides on. A write whose Memory really moved
   meets the core's own ``RevisionConflictError``; a write of another Memory simply succeeds on the new state.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import TypeVar

import apsw

from ...domain.errors import BackendUnavailable, IntegrityError
from ...domain.ids import EntryId, MemoryId
from ...domain.model import EntryVersion
from ...ports import Capabilities
from ..sql.engine import SHARED_HYBRID, ArchiveRow, Candidates, Conn, Dialect, FtsRow, Migrator
from ..sqlite.engine import SQLiteEngine
from ..sqlite.fts import SQLiteFullText
from ..sqlite.purge import SQLitePurge
from ..sqlite.vectors import SQLiteVectors
from . import ops as logops
from .indexed import IndexedSearch, IndexedVectors
from .log import GENESIS, UNFINISHED_PURGE, LanceLog, Position, Rebased
from .search import LanceSearchTables

T = TypeVar("T")
MAX_ATTEMPTS = 64  # re-runs of one job after the log moved under it


class _LogMoved(Exception):
    """Another writer moved the log's head after this job caught up (internal: ``run`` retries the job)."""


class LoggedFullText:
    """SQLite's FTS5 dialect on the replica; its one statement-free step (``clear``) is logged as a call."""

    def __init__(self, engine: LanceEngine, inner: SQLiteFullText) -> None:
        self._engine = engine
        self.inner = inner

    def put_head(self, conn: Conn, version: EntryVersion, text: str) -> None:
        self.inner.put_head(conn, version, text)

    def drop_head(self, conn: Conn, memory_id: MemoryId, entry_id: EntryId) -> None:
        self.inner.drop_head(conn, memory_id, entry_id)

    def put_archive(self, conn: Conn, version: EntryVersion, text: str) -> None:
        self.inner.put_archive(conn, version, text)

    def head_candidates(self, conn: Conn, ask: Candidates) -> list[FtsRow]:
        return self._engine.indexed.head_candidates(conn, ask, self.inner)  # LanceDB's FTS index chooses

    def head_any(
        self, conn: Conn, terms: Sequence[str], prefixes: Sequence[str], where: Sequence[str], args: Sequence[object]
    ) -> bool:
        return self.inner.head_any(conn, terms, prefixes, where, args)

    def archive_candidates(
        self, conn: Conn, memory_ids: Sequence[str], terms: Sequence[str], depth: int
    ) -> list[ArchiveRow]:
        return self.inner.archive_candidates(conn, memory_ids, terms, depth)

    def clear(self, conn: Conn) -> None:
        self._engine.record_call("fts_clear")
        self.inner.clear(self._engine.replica.conn)  # its statements are the call's: not recorded one by one

    def check(self, conn: Conn) -> list[str]:
        return self.inner.check(conn)


class LoggedPurge:
    """SQLite's purge codec on the replica, its statement-free steps logged as calls; ``compact`` erases the log.

    The purge's own transaction holds no purged byte (tombstones, the purge mark, rebuilt FTS). But every earlier
    transaction that wrote the text still holds it, and so do older checkpoints. So after the purge commits,
    ``compact`` writes a checkpoint of the (vacuumed) replica and rebases the log on it: every transaction at or
    below it and every older checkpoint is deleted, and the LanceDB tables are compacted and their old versions
    removed, so the bytes leave the dataset's files (``LanceLog.rebase``).
    """

    def __init__(self, engine: LanceEngine, inner: SQLitePurge) -> None:
        self._engine = engine
        self.inner = inner

    def allow_rewrite(self, conn: Conn) -> None:
        self._engine.record_call("purge_allow")
        self.inner.allow_rewrite(conn)

    def restore(self, conn: Conn) -> None:
        self._engine.record_call("purge_restore")
        self.inner.restore(conn)

    def drop_archive(self, conn: Conn, version_ids: Sequence[str]) -> None:
        self.inner.drop_archive(conn, version_ids)

    def erase_fulltext(self, conn: Conn) -> None:
        self.inner.erase_fulltext(conn)  # statements through ``conn``: recorded

    def compact(self, engine: object) -> bool:
        try:
            self._engine.search_tables.drop_all()  # they may hold the purged tokens; the next feed rebuilds them
            self._engine.rebase()
        finally:
            self.inner.compact(self._engine.replica)  # an in-memory replica: only resets secure_delete
        return True


class LanceEngine:
    """The engine parts over one LanceDB log and this process's replica of it."""

    def __init__(
        self,
        log: LanceLog,
        *,
        create: bool = True,
        eager_feed: bool = False,
        use_index: bool = False,
        vector_index_rows: int = 10_000,
    ) -> None:
        self.log = log
        self._create = create
        # Search candidates from LanceDB's own indexes (``?search=gated|eager``); off, the replica answers alone.
        self.use_index = use_index or eager_feed
        self.eager_feed = eager_feed  # feed the search tables after every write (else maintenance feeds them)
        self.replica = SQLiteEngine(":memory:", create=True)
        self.dialect: Dialect = self.replica.dialect
        self.fts = LoggedFullText(self, self.replica.fts)
        self.search_tables = LanceSearchTables(log, vector_index_rows=vector_index_rows)
        self.indexed = IndexedSearch(self)
        inner_vectors: SQLiteVectors | None = self.replica.vectors
        self.vectors = IndexedVectors(self.indexed, inner_vectors) if inner_vectors is not None else None
        self.purge = LoggedPurge(self, self.replica.purge)
        self._rec: logops.RecordingConn | None = None
        self.applied = Position(0, GENESIS)
        self._stats_lock = threading.Lock()
        self.stats = {
            "commits": 0,
            "lost_races": 0,
            "applied": 0,
            "text_index": 0,  # full-text candidate lists chosen by LanceDB's FTS index (``indexed.py``)
            "text_replica": 0,  # … by the replica's exact search (no usable search tables)
            "vector_index": 0,
            "vector_replica": 0,
            "feed_failed": 0,
        }

    @property
    def capabilities(self) -> Capabilities:
        return SHARED_HYBRID

    @property
    def schema_version(self) -> int:
        return self.replica.schema_version

    @property
    def conn(self) -> logops.RecordingConn:
        inner = self.replica.conn
        if self._rec is None or self._rec.inner is not inner:
            self._rec = logops.RecordingConn(inner)
        return self._rec

    def count(self, name: str) -> None:
        with self._stats_lock:
            self.stats[name] += 1

    def record_call(self, name: str) -> None:
        rec = self.conn
        if rec.ops is not None:
            rec.ops.append(["call", name])

    # ---------------------------------------------------------------- execution
    async def run(self, fn: Callable[..., T], *args: object) -> T:
        return await self.replica.run(self._retrying, fn, *args)

    async def run_short(self, fn: Callable[..., T], *args: object) -> T:
        # Not on the caller's thread (SQLite's shortcut): a read may catch up with the log, an object-store trip.
        return await self.run(fn, *args)

    def _retrying(self, fn: Callable[..., T], *args: object) -> T:
        for _ in range(MAX_ATTEMPTS):
            try:
                return fn(*args)
            except _LogMoved:
                continue  # the next transaction catches up first
        raise BackendUnavailable(
            f"the log of {self.log.where} moved under this write {MAX_ATTEMPTS} times in a row",
            hint="too many writers at once; retry",
        )

    # ---------------------------------------------------------------- catching up with the log
    def catch_up(self) -> None:
        head = self.log.head()
        if head == self.applied:
            return
        try:
            entries = self.log.entries(self.applied, head)
        except Rebased:
            # A purge rebased the log above this replica: the transactions it needs are gone (they held the
            # purged bytes). Start again from the newest checkpoint, which stands at or above the rebase.
            if not self._restore_checkpoint():
                raise IntegrityError(
                    f"the log of {self.log.where} was rebased but no usable checkpoint is on its chain",
                    hint="the store is damaged: restore it from a backup",
                ) from None
            entries = self.log.entries(self.applied, head)
        calls: dict[str, Callable[[Conn], None]] = {
            "fts_clear": self.replica.fts.clear,
            "purge_allow": self.purge.inner.allow_rewrite,  # secure_delete stays on: harmless in memory
            "purge_restore": self.purge.inner.restore,
        }
        with self.replica.write_txn():
            conn = self.replica.conn
            raw = self.replica.raw
            raw.authorizer = logops.refuse_outside_the_replica
            try:
                for entry in entries:
                    try:
                        logops.replay(conn, logops.decode(entry.payload, self.schema_version), calls)
                    except apsw.Error as exc:
                        raise IntegrityError(
                            f"transaction {entry.seq} of the log of {self.log.where} does not apply: {exc}",
                            hint="the log is damaged or was written by something other than memstone; nothing changed",
                        ) from exc
            finally:
                raw.authorizer = None
        self.applied = head
        with self._stats_lock:
            self.stats["applied"] += len(entries)

    # ---------------------------------------------------------------- transactions
    @contextmanager
    def _write(self) -> Iterator[None]:
        if self.replica.raw.in_transaction:
            yield  # nested: joins the outer transaction
            return
        self.catch_up()
        moved_to: Position | None = None
        with self.replica.write_txn():
            rec = self.conn
            rec.ops = []
            try:
                yield
                recorded = rec.ops
            finally:
                rec.ops = None
            if recorded:
                payload = logops.encode(recorded, self.schema_version)
                moved_to = self.log.append(self.applied, payload)
                if moved_to is None:
                    with self._stats_lock:
                        self.stats["lost_races"] += 1
                    raise _LogMoved()  # rolls the replica back; ``run`` catches up and runs the job again
        if moved_to is not None:
            self.applied = moved_to
            with self._stats_lock:
                self.stats["commits"] += 1
            if self.eager_feed:
                try:
                    self.feed_search()
                except Exception:  # a projection: the write is committed; the next feed catches up
                    self.count("feed_failed")

    def write_txn(self) -> AbstractContextManager[None]:
        return self._write()

    @contextmanager
    def _read(self) -> Iterator[None]:
        if self.replica.raw.in_transaction:
            yield
            return
        self.catch_up()
        with self.replica.read_txn():
            yield

    def read_txn(self) -> AbstractContextManager[None]:
        return self._read()

    def lock(self, key: str, *, shared: bool = False) -> None:
        return None  # the replica's BEGIN IMMEDIATE serializes this process; the log's CAS serializes the rest

    def conflict(self, memory_id: str, base: int) -> AbstractContextManager[None]:
        return self.replica.conflict(memory_id, base)

    # ---------------------------------------------------------------- lifecycle
    def open_sync(self, migrate: Migrator) -> tuple[int, ...]:
        self.log.open(create=self._create)
        applied = self.replica.open_sync(migrate)
        self._restore_checkpoint()
        self.catch_up()
        return applied

    def _restore_checkpoint(self) -> bool:
        """Start the replica from the newest checkpoint on the log's chain, if any (else it replays from genesis)."""
        head = self.log.head()
        found = self.log.latest_checkpoint(head, self.schema_version)
        if found is None:
            return False
        at, snapshot = found
        try:
            self.log.entries(at, head)  # the checkpoint's position must be on the committed chain
        except (IntegrityError, Rebased):
            return False  # not on the chain: replay from genesis instead
        self.replica.raw.deserialize("main", snapshot)
        self.replica.raw.execute("PRAGMA foreign_keys = ON")
        self.applied = at
        return True

    def feed_search(self) -> dict[str, int]:
        """Bring LanceDB's search tables up to this replica and build or update their indexes (``search.py``);
        nothing when this store searches its replica only."""
        if not self.use_index:
            return {"search_text_fed": 0, "search_vectors_fed": 0}
        self.catch_up()
        base = self.log.base()
        with self.replica.read_txn():
            conn = self.replica.conn
            meta = dict(
                conn.q("SELECT key, value FROM store_meta WHERE key IN ('vector_generation', 'embedding_profile')")
            )
            dimension = None
            if self.vectors is not None and self.vectors.exists(conn) and "embedding_profile" in meta:
                dimension = int(json.loads(meta["embedding_profile"])["dimension"])
            done = self.search_tables.feed(conn, self.applied.seq, str(meta.get("vector_generation") or "0"), dimension)
        if self.log.base() != base:
            self.search_tables.drop_all()  # a purge rebased the log meanwhile: what was fed may hold its bytes
        return done

    def checkpoint(self) -> Position | None:
        """Write a snapshot of the replica at the position it stands at (None: nothing new since the last one)."""
        self.catch_up()
        if self.applied.seq == 0 or self.applied.seq <= self.log.checkpoint_seq():
            return None
        with self.replica.read_txn():
            snapshot = self.replica.raw.serialize("main")
        self.log.write_checkpoint(self.applied, self.schema_version, snapshot)
        return self.applied

    def rebase(self) -> Position:
        """Checkpoint the replica where it stands, vacuumed (no free page keeps an old byte), and rebase the log on
        that checkpoint: what a purge calls after its commit (``LoggedPurge``)."""
        self.catch_up()
        raw = self.replica.raw
        raw.execute("VACUUM")  # INTEGER PRIMARY KEYs (every key a statement names) survive it unchanged
        with self.replica.read_txn():
            snapshot = raw.serialize("main")
        try:
            self.log.write_checkpoint(self.applied, self.schema_version, snapshot)
        except Exception as exc:
            raise BackendUnavailable(
                f"writing a checkpoint of the LanceDB store at {self.log.where} failed: {exc}",
                orig=exc,
                hint=UNFINISHED_PURGE,
            ) from exc
        self.log.rebase(self.applied)
        return self.applied

    async def aclose(self) -> None:
        await self.replica.aclose()


__all__ = ["LanceEngine", "LoggedFullText", "LoggedPurge"]
