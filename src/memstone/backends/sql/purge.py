"""Purge (real erasure, issue 12), written once for every engine: tombstones, and the purged bytes gone.

One purge, in one write transaction: a tombstone row per version (``memory_purges``, append-only), the version's
text replaced by the purge mark (its original hash kept there, so the manifests and Revisions that name it still
verify), its title and tags cleared, evidence that only purged versions cite erased, its archive row re-derived
from the purged version, and its vectors deleted (those a model migration has staged too). The purge bumps
``store_meta.purge_generation``, so every process's cache of decoded versions (``rows.AuthorityRows``) is dropped at
its next read. What differs between engines is the :class:`PurgeCodec`
(``engine.purge``): how the append-only guard lets exactly these UPDATEs through, how the engine's full-text index
forgets the old tokens, and how the old bytes leave the engine's files afterwards (SQLite: ``VACUUM`` and an empty
WAL; PostgreSQL: ``VACUUM FULL`` of the touched tables; OceanBase: a major compaction).

A copy or an import writes tombstones with the versions they belong to (``WritePlan.tombstones``): the version
arrives already purged, and :func:`insert_tombstones` runs in the same transaction as its Revision.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from ...domain.errors import InvalidInput, NotFound
from ...domain.ids import EntryId, EntryVersionId, MemoryId
from ...domain.purge import PURGED_TEXT, Tombstone
from .engine import Conn, Engine
from .parts import StoreParts
from .records import archive_text
from .rows import stored_purge

COLUMNS = (
    "purge_id, memory_artifact_id, entry_id, entry_version_id, version, entry_content_hash, reason, author, "
    "surface, purged_at"
)


@runtime_checkable
class PurgeCodec(Protocol):
    """The engine part of a purge (``engine.purge``; an engine without one cannot purge)."""

    def allow_rewrite(self, conn: Conn) -> None:
        """Let this transaction UPDATE ``memory_entry_versions`` and ``sources`` (the append-only guard)."""
        ...

    def restore(self, conn: Conn) -> None:
        """Put the append-only guard back (still inside the transaction)."""
        ...

    def drop_archive(self, conn: Conn, version_ids: Sequence[str]) -> None:
        """Forget the archive index entries of these versions before their rows are deleted and re-derived."""
        ...

    def erase_fulltext(self, conn: Conn) -> None:
        """Make the full-text indexes hold no token of the erased texts (inside the transaction)."""
        ...

    def compact(self, engine: Engine) -> bool:
        """After COMMIT: rewrite what still holds the old bytes; False when it could not finish yet."""
        ...


def codec_of(engine: Engine) -> PurgeCodec | None:
    part = getattr(engine, "purge", None)
    return part if isinstance(part, PurgeCodec) else None


def tombstone_from_row(row: Sequence[Any]) -> Tombstone:
    return Tombstone(
        purge_id=row[0], memory_id=MemoryId(row[1]), entry_id=EntryId(row[2]),
        entry_version_id=EntryVersionId(row[3]), version=int(row[4]), entry_content_hash=row[5], reason=row[6],
        author=row[7], surface=row[8], purged_at=row[9],
    )  # fmt: skip


def insert_tombstones(conn: Conn, tombstones: Sequence[Tombstone]) -> None:
    conn.many(
        f"INSERT INTO memory_purges ({COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?)",
        [
            (t.purge_id, t.memory_id, t.entry_id, t.entry_version_id, t.version, t.entry_content_hash, t.reason,
             t.author, t.surface, t.purged_at)
            for t in tombstones
        ],
    )  # fmt: skip


def read_tombstones(conn: Conn, entry_id: str | None = None) -> list[Tombstone]:
    """The tombstones of an entry (or all), oldest version first (inside the caller's transaction)."""
    where, args = ("WHERE entry_id = ?", [entry_id]) if entry_id is not None else ("", [])
    rows = conn.q(f"SELECT {COLUMNS} FROM memory_purges {where} ORDER BY entry_id, version", args)
    return [tombstone_from_row(r) for r in rows]


class PurgePart:
    """The purge of one store, over its engine's :class:`PurgeCodec`."""

    def __init__(self, parts: StoreParts) -> None:
        self.p = parts

    @property
    def codec(self) -> PurgeCodec | None:
        return codec_of(self.p.engine)

    def purged_hashes_sync(self) -> dict[str, str]:
        """Purged version id → the hash its tombstone records (for verify, inside its read transaction)."""
        return {t.entry_version_id: t.entry_content_hash for t in read_tombstones(self.p.engine.conn)}

    def tombstones_sync(self, entry_id: EntryId | None) -> tuple[Tombstone, ...]:
        with self.p.engine.read_txn():
            return tuple(read_tombstones(self.p.engine.conn, entry_id))

    def purge_sync(self, tombstones: tuple[Tombstone, ...]) -> bool:
        """Purge these versions in one transaction, then rewrite what held their bytes (``codec.compact``). With
        no tombstones only the rewrite runs: it finishes what an earlier purge's failed compaction left."""
        codec = self.codec
        assert codec is not None
        engine = self.p.engine
        if tombstones:
            with engine.write_txn():
                for mid in sorted({t.memory_id for t in tombstones}):
                    engine.lock(f"memory:{mid}")
                self._purge_in_txn(codec, tombstones)
        return codec.compact(engine)

    def _purge_in_txn(self, codec: PurgeCodec, tombstones: Sequence[Tombstone]) -> None:
        conn = self.p.engine.conn
        marks = self.p.engine.dialect.marks
        ids = [t.entry_version_id for t in tombstones]
        found = {
            r[0]: tuple(r[1:])
            for r in conn.q(
                "SELECT entry_version_id, entry_id, memory_artifact_id, entry_content_hash FROM memory_entry_versions "
                f"WHERE entry_version_id IN ({marks(len(ids))})",
                ids,
            )
        }
        for t in tombstones:
            if found.get(t.entry_version_id) != (t.entry_id, t.memory_id, t.entry_content_hash):
                raise NotFound(f"no version {t.entry_version_id} of {t.entry_id} to purge")
        if conn.q(f"SELECT 1 FROM memory_entry_heads WHERE entry_version_id IN ({marks(len(ids))})", ids):
            raise InvalidInput("a version to purge is still in the head projection", hint="forget the entry first")
        versions = self.p.rows.versions(None, ids)  # read before the rewrite: their evidence
        insert_tombstones(conn, tombstones)
        codec.allow_rewrite(conn)
        conn.many(
            "UPDATE memory_entry_versions SET text = ?, title = ?, tags = '[]' WHERE entry_version_id = ?",
            [(*stored_purge(t.entry_content_hash), t.entry_version_id) for t in tombstones],
        )
        self._erase_sources(conn, sorted({s for v in versions for s in v.content.sources}))
        codec.restore(conn)
        for vid in ids:  # before the projections are re-derived from the purged rows
            self.p.rows.forget_cached(vid)
            self.p.verified.pop(vid, None)
        self.p.rows.bump_purge_generation()  # every other process's version cache, at its next read
        self._purge_projections(codec, conn, ids)
        codec.erase_fulltext(conn)

    def _erase_sources(self, conn: Conn, cited: list[str]) -> None:
        """Evidence that only purged versions cite (a captured prompt holds the same words) is erased too; its id
        and hash stay, so the lineage that names it still resolves."""
        keep = self.p.engine.dialect.json_array_has("v.source_refs")
        marks = self.p.engine.dialect.marks
        erase = [
            sid
            for sid in cited
            if not conn.q(
                f"SELECT 1 FROM memory_entry_versions v WHERE {keep} AND NOT EXISTS "
                "(SELECT 1 FROM memory_purges p WHERE p.entry_version_id = v.entry_version_id) LIMIT 1",
                (sid,),
            )
        ]
        if erase:
            conn.x(
                f"UPDATE sources SET content = ?, uri = NULL WHERE source_id IN ({marks(len(erase))})",
                [PURGED_TEXT, *erase],
            )

    def _purge_projections(self, codec: PurgeCodec, conn: Conn, ids: list[EntryVersionId]) -> None:
        dialect = self.p.engine.dialect
        marks = dialect.marks(len(ids))
        archived = [
            EntryVersionId(v) for v in _of_versions(conn, marks, ids, "entry_version_id", "memory_entry_archive")
        ]
        if archived:
            codec.drop_archive(conn, archived)
            conn.x(
                f"DELETE FROM memory_entry_archive WHERE entry_version_id IN ({dialect.marks(len(archived))})",
                archived,
            )
            for version in self.p.rows.versions(None, archived):
                self.p.proj.put_archive(version, archive_text(version))
        vectors = self.p.engine.vectors
        if vectors is not None and vectors.exists(conn):
            rowids = [int(v) for v in _of_versions(conn, marks, ids, "vector_rowid", "memory_entry_vector_metadata")]
            if rowids:
                vectors.delete(conn, rowids)
                conn.x(f"DELETE FROM memory_entry_vector_metadata WHERE entry_version_id IN ({marks})", ids)
        if vectors is not None and self.p.rows.meta("migration") is not None:  # a model migration's staged rows
            conn.x(f"DELETE FROM memory_vector_staging WHERE entry_version_id IN ({marks})", ids)


def _of_versions(conn: Conn, marks: str, ids: Sequence[EntryVersionId], column: str, table: str) -> list[Any]:
    """``column`` of the rows of ``table`` that belong to the versions ``ids`` (``marks``: their placeholders)."""
    return [r[0] for r in conn.q(f"SELECT {column} FROM {table} WHERE entry_version_id IN ({marks})", ids)]


__all__ = ["COLUMNS", "PurgeCodec", "PurgePart", "codec_of", "insert_tombstones", "read_tombstones"]
