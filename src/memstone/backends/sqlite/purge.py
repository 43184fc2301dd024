"""SQLite side of purge (real erasure, issue 12): tombstones, and the purged bytes gone from every file.

One purge, in one write transaction: a tombstone row per version (``memory_purges``, append-only), the
version's text replaced by the purge mark (its original hash kept there, so the manifests and Revisions that name
it still verify), its title and tags cleared, its archive row re-derived from the purged version, its vectors
deleted, and both FTS indexes rebuilt and optimized (an FTS5 delete leaves the old tokens in its segments until
they merge). Then, outside the transaction, ``secure_delete`` has already zeroed the freed cells, ``VACUUM``
rewrites the file without free pages, and ``wal_checkpoint(TRUNCATE)`` empties the WAL, so the bytes are gone
from the database file and its ``-wal``.

The authority tables refuse UPDATE by trigger; the purge drops the one trigger it must pass and recreates it
inside the same transaction, so no other writer ever sees the table writable.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import apsw

from ...domain.errors import InvalidInput, NotFound
from ...domain.ids import EntryId, EntryVersionId, MemoryId
from ...domain.purge import PURGED_TEXT, Tombstone, purge_mark
from ..sql.parts import StoreParts
from ..sql.records import archive_text
from . import schema
from .engine import SQLiteEngine

TOMBSTONES = """
CREATE TABLE IF NOT EXISTS memory_purges (
    purge_id TEXT PRIMARY KEY,
    memory_artifact_id TEXT NOT NULL,
    entry_id TEXT NOT NULL,
    entry_version_id TEXT NOT NULL UNIQUE REFERENCES memory_entry_versions (entry_version_id),
    version INTEGER NOT NULL,
    entry_content_hash TEXT NOT NULL,
    reason TEXT NOT NULL,
    author TEXT,
    surface TEXT NOT NULL,
    purged_at TEXT NOT NULL
) STRICT;
CREATE TRIGGER IF NOT EXISTS trg_memory_purges_no_update BEFORE UPDATE ON memory_purges
BEGIN SELECT RAISE(ABORT, 'memory_purges is append-only'); END;
CREATE TRIGGER IF NOT EXISTS trg_memory_purges_no_delete BEFORE DELETE ON memory_purges
BEGIN SELECT RAISE(ABORT, 'memory_purges is append-only'); END;
"""
_COLUMNS = (
    "purge_id, memory_artifact_id, entry_id, entry_version_id, version, entry_content_hash, reason, author, "
    "surface, purged_at"
)
_CHECKPOINT_TRIES = 50


def _tombstone(row: Sequence[Any]) -> Tombstone:
    return Tombstone(
        purge_id=row[0], memory_id=MemoryId(row[1]), entry_id=EntryId(row[2]),
        entry_version_id=EntryVersionId(row[3]), version=row[4], entry_content_hash=row[5], reason=row[6],
        author=row[7], surface=row[8], purged_at=row[9],
    )  # fmt: skip


class SQLitePurge:
    """The purge of one SQLite store: its engine (connection, transactions, worker) and the core's shared caches."""

    def __init__(self, engine: SQLiteEngine, parts: StoreParts) -> None:
        self.engine = engine
        self.parts = parts

    @property
    def conn(self) -> apsw.Connection:
        return self.engine.raw

    def _q(self, sql: str, args: Sequence[object] = ()) -> list[Any]:
        return self.conn.execute(sql, args).fetchall()

    async def purge_versions(self, tombstones: Sequence[Tombstone]) -> bool:
        """Write the tombstones, erase the versions' content everywhere, compact the file; False when another
        connection kept the WAL from being emptied (the bytes then leave it at the next checkpoint)."""
        return await self.engine.run(self._purge_all_sync, tuple(tombstones))

    async def tombstones(self, entry_id: EntryId | None = None) -> tuple[Tombstone, ...]:
        """The tombstones of an entry (or all), oldest version first."""

        def read() -> tuple[Tombstone, ...]:
            with self.engine.read_txn():
                return tuple(self.tombstones_sync(entry_id))

        return await self.engine.run(read)

    def purged_hashes_sync(self) -> dict[str, str]:
        """Purged version id → the hash its tombstone records (for verify, inside its read transaction)."""
        return {t.entry_version_id: t.entry_content_hash for t in self.tombstones_sync()}

    def tombstones_sync(self, entry_id: str | None = None) -> list[Tombstone]:
        if not self._q("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'memory_purges'"):
            return []
        where, args = ("WHERE entry_id = ?", [entry_id]) if entry_id is not None else ("", [])
        return [_tombstone(r) for r in self._q(f"SELECT {_COLUMNS} FROM memory_purges {where} ORDER BY version", args)]

    def _purge_all_sync(self, tombstones: tuple[Tombstone, ...]) -> bool:
        conn = self.conn
        row = conn.execute("PRAGMA secure_delete").fetchone()
        before = row[0] if row else 0
        conn.execute("PRAGMA secure_delete = ON")  # freed cells and pages are zeroed, not left in the file
        try:
            with self.engine.write_txn():
                self._purge_sync(tombstones)
            return self._compact_sync()
        finally:
            conn.execute(f"PRAGMA secure_delete = {int(before)}")

    def _purge_sync(self, tombstones: Sequence[Tombstone]) -> None:
        """Write the tombstones and erase the versions' content (inside the caller's write transaction)."""
        conn = self.conn
        conn.execute(TOMBSTONES)
        ids = [t.entry_version_id for t in tombstones]
        marks = ",".join("?" * len(ids))
        found = {
            r[0]: r[1:]
            for r in self._q(
                "SELECT entry_version_id, entry_id, memory_artifact_id, entry_content_hash FROM memory_entry_versions "
                f"WHERE entry_version_id IN ({marks})",
                ids,
            )
        }
        for t in tombstones:
            row = found.get(t.entry_version_id)
            if row is None or row[0] != t.entry_id or row[1] != t.memory_id or row[2] != t.entry_content_hash:
                raise NotFound(f"no version {t.entry_version_id} of {t.entry_id} to purge")
        if self._q(f"SELECT 1 FROM memory_entry_heads WHERE entry_version_id IN ({marks})", ids):
            raise InvalidInput("a version to purge is still in the head projection", hint="forget the entry first")
        for t in tombstones:
            conn.execute(
                f"INSERT INTO memory_purges ({_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?)",
                (t.purge_id, t.memory_id, t.entry_id, t.entry_version_id, t.version, t.entry_content_hash,
                 t.reason, t.author, t.surface, t.purged_at),
            )  # fmt: skip
        conn.execute("DROP TRIGGER trg_memory_entry_versions_no_update")
        for t in tombstones:
            conn.execute(
                "UPDATE memory_entry_versions SET text = ?, title = NULL, tags = '[]' WHERE entry_version_id = ?",
                (purge_mark(t.entry_content_hash), t.entry_version_id),
            )
        self._purge_sources_sync(ids)
        conn.execute(schema.immutability_triggers())  # IF NOT EXISTS: recreates exactly the dropped ones
        for vid in ids:  # before the projections are re-derived from the purged rows
            self.parts.rows.forget_cached(vid)
            self.parts.verified.pop(vid, None)
        self._purge_projections_sync(ids)

    def _purge_sources_sync(self, ids: list[EntryVersionId]) -> None:
        """Evidence that only purged versions cite (a captured prompt holds the same words) is erased too; its id
        and hash stay, so the lineage that names it still resolves."""
        marks = ",".join("?" * len(ids))
        cited = {
            str(r[0])
            for r in self._q(
                f"SELECT DISTINCT j.value FROM memory_entry_versions v, json_each(v.source_refs) j "
                f"WHERE v.entry_version_id IN ({marks})",
                ids,
            )
        }
        erase = [
            sid
            for sid in sorted(cited)
            if not self._q(
                "SELECT 1 FROM memory_entry_versions v, json_each(v.source_refs) j WHERE j.value = ? AND NOT EXISTS "
                "(SELECT 1 FROM memory_purges p WHERE p.entry_version_id = v.entry_version_id) LIMIT 1",
                (sid,),
            )
        ]
        if erase:
            self.conn.execute("DROP TRIGGER trg_sources_no_update")
            self.conn.execute(
                f"UPDATE sources SET content = ?, uri = NULL WHERE source_id IN ({','.join('?' * len(erase))})",
                [PURGED_TEXT, *erase],
            )

    def _purge_projections_sync(self, ids: list[EntryVersionId]) -> None:
        conn = self.conn
        marks = ",".join("?" * len(ids))
        archived = self._q(
            f"SELECT entry_version_id FROM memory_entry_archive WHERE entry_version_id IN ({marks})", ids
        )
        if archived:
            conn.execute(f"DELETE FROM memory_entry_archive WHERE entry_version_id IN ({marks})", ids)
            for version in self.parts.rows.versions(None, [r[0] for r in archived]):
                conn.execute(
                    "INSERT INTO memory_entry_archive "
                    "(memory_artifact_id, entry_id, entry_version_id, searchable_text) VALUES (?, ?, ?, ?)",
                    (version.memory_id, version.entry_id, version.entry_version_id, archive_text(version)),
                )
        tables = {r[0] for r in self._q("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if "memory_entry_vector_metadata" in tables:
            rowids = [
                r[0]
                for r in self._q(
                    f"SELECT vector_rowid FROM memory_entry_vector_metadata WHERE entry_version_id IN ({marks})", ids
                )
            ]
            conn.execute(f"DELETE FROM memory_entry_vector_metadata WHERE entry_version_id IN ({marks})", ids)
            if rowids and "memory_entry_search_vector" in tables:
                conn.execute(
                    f"DELETE FROM memory_entry_search_vector WHERE rowid IN ({','.join('?' * len(rowids))})", rowids
                )
        for fts in ("memory_entry_search_fts", "memory_entry_archive_fts"):
            # The old tokens stay in an FTS5 index's segments after a delete; a rebuild writes new segments from
            # the content table and an optimize merges them into one, so no segment holds the purged words.
            conn.execute(f"INSERT INTO {fts} ({fts}) VALUES ('rebuild')")
            conn.execute(f"INSERT INTO {fts} ({fts}) VALUES ('optimize')")

    def _compact_sync(self) -> bool:
        """Rewrite the file without free pages and empty the WAL; False when other connections kept it busy."""
        if self.engine.path == ":memory:":
            return True
        conn = self.conn
        conn.execute("VACUUM")
        for _ in range(_CHECKPOINT_TRIES):
            done = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
            if done is not None and done[0] == 0:
                return True
            time.sleep(0.1)
        return False


__all__ = ["TOMBSTONES", "SQLitePurge"]
