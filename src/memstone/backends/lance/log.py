"""The store's authority on LanceDB: an append-only table of transactions and a one-row head, moved by CAS.

Two tables in the LanceDB database the URL names (a local folder or an ``s3://`` prefix):

``memstone_txns``
    One immutable row per write transaction: ``txn`` (a fresh id), ``seq`` (its position in the log), ``parent``
    (the txn it was written on top of), the writer, the time, ``payload`` (the transaction's row changes,
    zlib-compressed; see ``ops.py``) and ``payload_hash`` (SHA-256 of the payload). Rows are only ever appended;
    appends never conflict with each other.
``memstone_head``
    One row: the ``seq`` and ``txn`` of the last committed transaction.

A commit appends its row first (unreachable: no head names it), then moves the head from ``(seq, parent)`` to
``(seq + 1, txn)`` with a conditional ``merge_insert`` (``WHERE target.seq = … AND target.txn = …``). LanceDB
re-checks the condition against any version committed concurrently, so of two writers on one parent exactly one
moves the head; the other sees ``num_updated_rows == 0`` and its row stays an orphan. The log is the chain of
parents from the head back to genesis: a row not on it (a lost race, a writer killed between its two steps) is
never read, and ``sweep`` deletes it.
"""

from __future__ import annotations

import hashlib
import os
import socket
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import lancedb
import pyarrow as pa

from ...domain.errors import BackendUnavailable, IntegrityError, NotFound

GENESIS = "genesis"
HEAD_TABLE = "memstone_head"
TXN_TABLE = "memstone_txns"
CHECKPOINT_TABLE = "memstone_checkpoints"
LOG_FORMAT = 1  # the payload format (ops.py); a log written in a newer one is refused

_HEAD_SCHEMA = pa.schema([("key", pa.string()), ("seq", pa.int64()), ("txn", pa.string()), ("format", pa.int64())])
_TXN_SCHEMA = pa.schema(
    [
        ("txn", pa.string()),
        ("seq", pa.int64()),
        ("parent", pa.string()),
        ("writer", pa.string()),
        ("created_at", pa.float64()),
        ("payload_hash", pa.string()),
        ("payload", pa.large_binary()),
    ]
)
_CHECKPOINT_SCHEMA = pa.schema(
    [
        ("seq", pa.int64()),
        ("txn", pa.string()),
        ("schema", pa.int64()),
        ("created_at", pa.float64()),
        ("snapshot_hash", pa.string()),
        ("snapshot", pa.large_binary()),
    ]
)


# What a purge whose erasure failed after its commit (an object store failing partway) leaves, and the way out.
UNFINISHED_PURGE = (
    "the purge is committed and shown everywhere, but the log's older transactions may still hold the erased "
    "bytes: run the purge of the entry again (it redoes the erasure) once the store is reachable"
)


@dataclass(frozen=True, slots=True)
class Position:
    """Where a replica (or the head) stands in the log."""

    seq: int
    txn: str


@dataclass(frozen=True, slots=True)
class LogEntry:
    seq: int
    txn: str
    parent: str
    payload: bytes


class Rebased(Exception):
    """The transactions a replica needs were deleted by a rebase (a purge): start from a checkpoint instead."""


def sql_quote(text: str) -> str:
    """A string literal for a LanceDB filter."""
    return "'" + text.replace("'", "''") + "'"


class LanceLog:
    """The transaction log of one store, in one LanceDB database (``uri`` with its ``storage_options``)."""

    def __init__(self, uri: str, storage_options: Mapping[str, str], *, where: str) -> None:
        self.uri = uri
        self.where = where  # what error messages name (never credentials)
        self._options = dict(storage_options)
        self._db: Any = None
        self._head: Any = None
        self._txns: Any = None
        self.writer = f"{socket.gethostname()}:{os.getpid()}"
        self._seen: tuple[int, Position] | None = None  # (head table version, head) last read

    # ---------------------------------------------------------------- opening
    def open(self, *, create: bool) -> None:
        try:
            # read_consistency_interval=0: every read sees the latest committed version of a table.
            self._db = lancedb.connect(
                self.uri, storage_options=self._options or None, read_consistency_interval=timedelta(0)
            )
            names = set(self.table_names())
            if HEAD_TABLE not in names:
                if not create:
                    raise NotFound(
                        f"no memstone store at {self.where}",
                        hint="check --url / MEMSTONE_URL; a write (memstone remember) creates a new store",
                    )
                self._create()
            self._head = self._db.open_table(HEAD_TABLE)
            self._txns = self._db.open_table(TXN_TABLE)
        except (NotFound, BackendUnavailable):
            raise
        except Exception as exc:  # the driver's errors (object store, IO) at the engine's edge
            raise BackendUnavailable(
                f"cannot open the LanceDB store at {self.where}: {exc}",
                orig=exc,
                hint="check the URL, and for S3 the AWS_* credentials and AWS_ENDPOINT_URL in the environment",
            ) from exc

    @property
    def db(self) -> Any:
        """The LanceDB connection (the search tables live beside the log)."""
        return self._db

    def table_names(self) -> list[str]:
        listed = self._db.list_tables()
        tables = getattr(listed, "tables", listed)
        return [str(t) for t in tables]

    def _create(self) -> None:
        # The transactions table first: a head without it would be a store that cannot be read.
        try:
            self._db.create_table(TXN_TABLE, schema=_TXN_SCHEMA, exist_ok=True)
        except Exception:
            if TXN_TABLE not in self.table_names():
                raise
        # The head is created with its genesis row in ONE commit (version 1): two processes creating the store
        # at once cannot both add a row. The loser of the create race opens the winner's table.
        genesis = pa.table({"key": ["head"], "seq": [0], "txn": [GENESIS], "format": [LOG_FORMAT]}, schema=_HEAD_SCHEMA)
        try:
            self._db.create_table(HEAD_TABLE, data=genesis)
        except Exception:
            if HEAD_TABLE not in self.table_names():
                raise

    # ---------------------------------------------------------------- reading
    def head(self) -> Position:
        # Checking the table's latest version is one listing; reading the row is a scan. The head row changes only
        # with a new table version, so an unchanged version means an unchanged head.
        version = int(self._head.version)
        if self._seen is not None and self._seen[0] == version:
            return self._seen[1]
        rows = self._head.to_arrow().to_pylist()
        if len(rows) != 1:
            raise IntegrityError(f"the log head of {self.where} has {len(rows)} rows, not 1")
        row = rows[0]
        if int(row["format"]) > LOG_FORMAT:
            raise BackendUnavailable(
                f"the store at {self.where} was written by a newer memstone (log format {row['format']})",
                hint="upgrade memstone",
            )
        found = Position(int(row["seq"]), str(row["txn"]))
        self._seen = (version, found)
        return found

    def entries(self, after: Position, head: Position) -> list[LogEntry]:
        """The committed transactions after ``after`` up to ``head``, oldest first (the parent chain)."""
        if head.seq <= after.seq:
            return []
        table = self._txns.search().where(f"seq > {after.seq} AND seq <= {head.seq}").limit(None).to_arrow()
        by_txn: dict[str, dict[str, Any]] = {r["txn"]: r for r in table.to_pylist()}
        chain: list[LogEntry] = []
        txn, seq = head.txn, head.seq
        while seq > after.seq:
            row = by_txn.get(txn)
            if row is None and self._is_base(Position(seq, txn)):
                raise Rebased(f"the log of {self.where} starts at {seq} since a rebase")
            if row is None or int(row["seq"]) != seq:
                raise IntegrityError(f"the transaction log of {self.where} is missing transaction {seq} ({txn})")
            payload = bytes(row["payload"])
            if hashlib.sha256(payload).hexdigest() != row["payload_hash"]:
                raise IntegrityError(f"transaction {seq} of {self.where} does not match its hash")
            chain.append(LogEntry(seq, txn, str(row["parent"]), payload))
            txn, seq = str(row["parent"]), seq - 1
        if txn != after.txn:
            raise IntegrityError(
                f"the transaction log of {self.where} forks at {after.seq}: this replica applied {after.txn}, "
                f"the log has {txn}"
            )
        chain.reverse()
        return chain

    def chain_ids(self, head: Position) -> tuple[set[str], list[str]]:
        """The txn ids on the committed chain, and damage found walking it (for verify and sweep)."""
        table = self._txns.search().select(["txn", "seq", "parent"]).limit(None).to_arrow()
        by_txn = {r["txn"]: r for r in table.to_pylist()}
        chain: set[str] = set()
        damage: list[str] = []
        txn, seq = head.txn, head.seq
        while seq > 0:
            row = by_txn.get(txn)
            if row is None and self._is_base(Position(seq, txn)):
                return chain, damage  # the chain starts at the checkpoint of a rebase
            if row is None or int(row["seq"]) != seq:
                damage.append(f"the transaction log is missing transaction {seq} ({txn})")
                break
            chain.add(txn)
            txn, seq = str(row["parent"]), seq - 1
        if not damage and txn != GENESIS:
            damage.append(f"the transaction log does not start at genesis (it reaches {txn})")
        return chain, damage

    # ---------------------------------------------------------------- writing
    def append(self, parent: Position, payload: bytes) -> Position | None:
        """Commit ``payload`` on top of ``parent``; the new head, or None when another writer moved it first."""
        txn = uuid.uuid4().hex
        seq = parent.seq + 1
        row = {
            "txn": [txn],
            "seq": [seq],
            "parent": [parent.txn],
            "writer": [self.writer],
            "created_at": [time.time()],
            "payload_hash": [hashlib.sha256(payload).hexdigest()],
            "payload": [payload],
        }
        # Step 1: the immutable row. No head names it yet, so no reader applies it.
        try:
            self._txns.add(pa.table(row, schema=_TXN_SCHEMA))
        except Exception as exc:  # nothing is reachable yet: the write simply did not happen
            raise BackendUnavailable(f"cannot write to the LanceDB store at {self.where}: {exc}", orig=exc) from exc
        # Step 2: the conditional commit. Exactly one writer on this parent moves the head.
        try:
            moved = (
                self._head.merge_insert("key")
                .when_matched_update_all(where=f"target.seq = {parent.seq} AND target.txn = {sql_quote(parent.txn)}")
                .execute(
                    pa.table({"key": ["head"], "seq": [seq], "txn": [txn], "format": [LOG_FORMAT]}, schema=_HEAD_SCHEMA)
                )
            )
        except Exception as exc:
            if "conflict" in str(exc).lower():
                return None  # LanceDB refused the commit (a concurrent compaction or update): nothing moved
            # Trigger: the object store failed while the head was being moved.
            # Why: the conditional put may have landed before the failure; the head may name this row now.
            # Outcome: the caller gets an error; the next read shows whether the write is committed.
            raise BackendUnavailable(
                f"moving the head of the LanceDB store at {self.where} failed: {exc}",
                orig=exc,
                hint="the write may or may not have been committed: read the Memory's head before retrying",
            ) from exc
        if int(moved.num_updated_rows) == 1:
            return Position(seq, txn)
        return None

    # ---------------------------------------------------------------- checkpoints (a replica's snapshot)
    def _checkpoints(self) -> Any:
        if CHECKPOINT_TABLE not in self.table_names():
            return None
        return self._db.open_table(CHECKPOINT_TABLE)

    def latest_checkpoint(self, head: Position, schema: int) -> tuple[Position, bytes] | None:
        """The newest checkpoint at or below ``head`` written on replica schema ``schema`` (hash checked)."""
        table = self._checkpoints()
        if table is None:
            return None
        rows = table.search().where(f"seq <= {head.seq} AND schema = {schema}").select(["seq", "txn"]).to_arrow()
        candidates = sorted(rows.to_pylist(), key=lambda r: -int(r["seq"]))
        for cand in candidates:
            found = (
                table.search()
                .where(f"seq = {int(cand['seq'])} AND txn = {sql_quote(cand['txn'])}")
                .limit(1)
                .to_arrow()
                .to_pylist()
            )
            if not found:
                continue
            snapshot = bytes(found[0]["snapshot"])
            if hashlib.sha256(snapshot).hexdigest() != found[0]["snapshot_hash"]:
                continue  # a damaged checkpoint is skipped: the log itself is the authority
            return Position(int(cand["seq"]), str(cand["txn"])), snapshot
        return None

    def write_checkpoint(self, at: Position, schema: int, snapshot: bytes, *, keep: int = 2) -> None:
        """Store a replica snapshot taken at ``at`` (a committed position); keep the newest ``keep``."""
        row = {
            "seq": [at.seq],
            "txn": [at.txn],
            "schema": [schema],
            "created_at": [time.time()],
            "snapshot_hash": [hashlib.sha256(snapshot).hexdigest()],
            "snapshot": [snapshot],
        }
        data = pa.table(row, schema=_CHECKPOINT_SCHEMA)
        table = self._checkpoints()
        if table is None:
            try:
                self._db.create_table(CHECKPOINT_TABLE, data=data)
                return
            except Exception:
                table = self._checkpoints()
                if table is None:
                    raise
        table.add(data)
        seqs = sorted({int(r["seq"]) for r in table.search().select(["seq"]).limit(None).to_arrow().to_pylist()})
        if len(seqs) > keep:
            base = self.base()  # the checkpoint a rebased log starts at is kept: the chain ends there
            table.delete(f"seq < {seqs[-keep]}" + (f" AND seq != {base.seq}" if base is not None else ""))

    def checkpoint_seq(self) -> int:
        table = self._checkpoints()
        if table is None:
            return 0
        seqs = [int(r["seq"]) for r in table.search().select(["seq"]).limit(None).to_arrow().to_pylist()]
        return max(seqs, default=0)

    def _is_base(self, at: Position) -> bool:
        """Whether a checkpoint stands at ``at`` (where a walk down the chain found no transaction row)."""
        table = self._checkpoints()
        return table is not None and int(table.count_rows(f"seq = {at.seq} AND txn = {sql_quote(at.txn)}")) > 0

    def base(self) -> Position | None:
        """The checkpoint a rebased log starts at (its own transaction row is gone), or None: the log starts at
        genesis."""
        table = self._checkpoints()
        if table is None:
            return None
        rows = table.search().select(["seq", "txn"]).limit(None).to_arrow().to_pylist()
        for r in sorted(rows, key=lambda r: int(r["seq"])):
            if int(self._txns.count_rows(f"txn = {sql_quote(str(r['txn']))}")) == 0:
                return Position(int(r["seq"]), str(r["txn"]))
        return None

    # ---------------------------------------------------------------- rebase (purge) and maintenance
    def rebase(self, at: Position) -> None:
        """Make the checkpoint at ``at`` the start of the log and erase everything older from the dataset.

        Deletes every transaction at or below ``at`` (committed or orphaned) and every older checkpoint, then
        compacts all three tables and removes every old table version at once, so that no data file the tables
        still reference, and none they referenced before, holds those rows' bytes. A replica that stood below
        ``at`` starts again from a checkpoint (``Rebased``). A purge calls this right after its commit; a read of
        an old table version in flight at that moment may fail (``BackendUnavailable``) and succeeds when retried.
        """
        table = self._checkpoints()
        if table is None or not self._is_base(at):
            raise IntegrityError(f"no checkpoint at {at.seq} of {self.where} to rebase the log on")
        try:
            self._txns.delete(f"seq <= {at.seq}")
            table.delete(f"seq < {at.seq}")
            for t in (self._txns, self._head, table):
                t.optimize(cleanup_older_than=timedelta(milliseconds=1))  # 0 is refused
        except Exception as exc:
            raise BackendUnavailable(
                f"erasing old transactions from the LanceDB store at {self.where} failed: {exc}",
                orig=exc,
                hint=UNFINISHED_PURGE,
            ) from exc

    def sweep(self, *, grace_s: float = 600.0) -> int:
        """Delete orphaned transactions (not on the chain, at or below the head, older than ``grace_s``)."""
        head = self.head()
        chain, damage = self.chain_ids(head)
        if damage:
            return 0  # never delete from a log that does not verify
        table = self._txns.search().select(["txn", "seq", "created_at"]).limit(None).to_arrow()
        cutoff = time.time() - grace_s
        orphans = [
            r["txn"]
            for r in table.to_pylist()
            if r["txn"] not in chain and int(r["seq"]) <= head.seq and float(r["created_at"]) < cutoff
        ]
        for i in range(0, len(orphans), 200):
            batch = orphans[i : i + 200]
            self._txns.delete("txn IN (" + ", ".join(sql_quote(t) for t in batch) + ")")
        return len(orphans)

    def optimize(self, *, keep_versions_s: float) -> None:
        """Compact both tables' fragments and remove table versions older than ``keep_versions_s``.

        No Revision needs an old table version: every committed transaction is a row of the latest version
        (rows are never updated or deleted, except orphans). Old versions only serve readers that opened one
        moments ago, so they are kept for ``keep_versions_s``.
        """
        checkpoints = self._checkpoints()
        for table in (self._txns, self._head, *([checkpoints] if checkpoints is not None else [])):
            try:
                table.optimize(cleanup_older_than=timedelta(seconds=keep_versions_s))
            except Exception as exc:  # a compaction that lost a race with a concurrent write commits nothing
                raise BackendUnavailable(
                    f"compacting the LanceDB store at {self.where} failed: {exc}", orig=exc, hint="retry later"
                ) from exc

    def stats(self) -> dict[str, int]:
        return {
            "transactions": int(self._txns.count_rows()),
            "txn_table_version": int(self._txns.version),
            "head_table_version": int(self._head.version),
        }


__all__ = ["GENESIS", "LOG_FORMAT", "UNFINISHED_PURGE", "LanceLog", "LogEntry", "Position", "Rebased", "sql_quote"]
