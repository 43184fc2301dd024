"""Row-level SQL of the projections, written once: head rows and their filters, the archive projection, and the
vector bookkeeping (metadata rows, staging, the migration marker). The engine's FullText and VectorCodec parts
index and store what these rows describe."""

from __future__ import annotations

import struct
from collections.abc import Iterator, Sequence
from typing import Any, NamedTuple

from ...domain.filters import EntryFilter
from ...domain.ids import EntryId, EntryVersionId, MemoryId
from ...domain.model import EntryVersion
from .engine import ArchiveRow, Engine, VectorCodec, VectorMeta, later, snapshot_of
from .rows import dumps_json, json_list


class HeadRow(NamedTuple):
    """A projection row: an active entry of a Memory's current head, as the engine stores it."""

    memory_id: MemoryId
    entry_id: EntryId
    entry_version_id: EntryVersionId
    entry_content_hash: str
    searchable_text: str
    bm25: float = 0.0  # the engine's relevance of a full-text candidate (higher is better), 0 elsewhere


_HEAD_COLUMNS = (
    "memory_artifact_id",
    "head_revision",
    "entry_id",
    "entry_version_id",
    "entry_content_hash",
    "searchable_text",
    "kind",
    "slug",
    "tags",
    "important",
    "mandatory",
    "updated_at",
)
_META_COLUMNS = (
    "memory_artifact_id, entry_id, entry_version_id, chunk, chunk_count, entry_content_hash, "
    "embedding_content_hash, profile_id"
)


def pack_vector(vector: Sequence[float]) -> bytes:
    return struct.pack(f"<{len(vector)}f", *vector)


def unpack_vector(blob: bytes) -> tuple[float, ...]:
    return struct.unpack(f"<{len(blob) // 4}f", bytes(blob))


class ProjectionRows:
    """Head, archive and vector-metadata statements on the engine's current transaction."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.dialect = engine.dialect
        self._put_head_sql = engine.dialect.upsert(
            "memory_entry_heads",
            _HEAD_COLUMNS,
            ("memory_artifact_id", "entry_id"),
            _HEAD_COLUMNS[1:2] + _HEAD_COLUMNS[3:],
        )

    def q(self, sql: str, args: Sequence[object] = ()) -> list[Any]:
        return self.engine.conn.q(sql, args)

    # ---------------------------------------------------------------- the head projection
    def put_head(self, revision: int, version: EntryVersion, text: str) -> None:
        c = version.content
        conn = self.engine.conn
        later(  # nothing is read back (the postings find the row by its key)
            conn,
            self._put_head_sql,
            (
                version.memory_id,
                revision,
                version.entry_id,
                version.entry_version_id,
                version.entry_content_hash,
                text,
                c.kind,
                c.slug,
                dumps_json(list(c.tags)),
                int(c.important),
                int(c.mandatory),
                version.provenance.created_at,
            ),
        )
        self.engine.fts.put_head(conn, version, text)

    def drop_head(self, memory_id: MemoryId, entry_id: EntryId) -> None:
        conn = self.engine.conn
        self.engine.fts.drop_head(conn, memory_id, entry_id)
        later(
            conn, "DELETE FROM memory_entry_heads WHERE memory_artifact_id = ? AND entry_id = ?", (memory_id, entry_id)
        )

    def head_rows(self, memory_id: MemoryId | None) -> Iterator[HeadRow]:
        sql = (
            "SELECT memory_artifact_id, entry_id, entry_version_id, entry_content_hash, searchable_text "
            "FROM memory_entry_heads"
        )
        args: tuple[object, ...] = ()
        if memory_id is not None:
            sql += " WHERE memory_artifact_id = ?"
            args = (memory_id,)
        for r in self.q(sql + " ORDER BY projection_id", args):
            yield HeadRow(MemoryId(r[0]), EntryId(r[1]), EntryVersionId(r[2]), r[3], r[4])

    def head_texts(self, keys: Sequence[int]) -> dict[int, str]:
        if not keys:
            return {}
        rows = self.q(
            "SELECT projection_id, searchable_text FROM memory_entry_heads "
            f"WHERE projection_id IN ({self.dialect.marks(len(keys))})",
            list(keys),
        )
        return {int(k): t for k, t in rows}

    def filters(self, f: EntryFilter, where: list[str], args: list[object]) -> None:
        """The catalogue and search filters as conditions on head rows (alias ``h``): ``EntryFilter.passes`` in SQL."""
        if f.kinds:
            where.append(f"h.kind IN ({self.dialect.marks(len(f.kinds))})")
            args.extend(f.kinds)
        if f.important is not None:
            where.append("h.important = ?")
            args.append(int(f.important))
        if f.mandatory is not None:
            where.append("h.mandatory = ?")
            args.append(int(f.mandatory))
        for tag in f.tags:
            where.append(self.dialect.json_array_has("h.tags"))
            args.append(tag)

    def head_matches(self, memory_id: str, entry_id: str, f: EntryFilter) -> bool:
        where = ["h.memory_artifact_id = ?", "h.entry_id = ?"]
        args: list[object] = [memory_id, entry_id]
        self.filters(f, where, args)
        return bool(self.q(f"SELECT 1 FROM memory_entry_heads h WHERE {' AND '.join(where)}", args))

    def catalogue_rows(self, memory_id: MemoryId, f: EntryFilter) -> list[tuple[EntryId, EntryVersionId, str]]:
        """(entry, version, hash) of head rows of a Memory that pass the filters."""
        where = ["h.memory_artifact_id = ?"]
        args: list[object] = [memory_id]
        self.filters(f, where, args)
        rows = self.q(
            "SELECT h.entry_id, h.entry_version_id, h.entry_content_hash FROM memory_entry_heads h "
            f"WHERE {' AND '.join(where)} ORDER BY h.entry_id",
            args,
        )
        return [(EntryId(r[0]), EntryVersionId(r[1]), r[2]) for r in rows]

    # ---------------------------------------------------------------- slugs and links
    def slug_holders(self, memory_id: MemoryId, kind: str, slug: str) -> list[EntryId]:
        rows = self.q(
            "SELECT entry_id FROM memory_entry_heads WHERE memory_artifact_id = ? AND kind = ? AND slug = ?",
            (memory_id, kind, slug),
        )
        return [EntryId(r[0]) for r in rows]

    def slug_version_ids(self, memory_ids: Sequence[str], kind: str, slug: str) -> list[EntryVersionId]:
        if not memory_ids:
            return []
        rows = self.q(
            "SELECT entry_version_id FROM memory_entry_versions "
            f"WHERE memory_artifact_id IN ({self.dialect.marks(len(memory_ids))}) "
            "AND slug = ? AND kind = ? ORDER BY entry_id, version",
            (*memory_ids, slug, kind),
        )
        return [EntryVersionId(r[0]) for r in rows]

    def live_slugs(self, memory_ids: Sequence[str]) -> list[tuple[MemoryId, EntryId, EntryVersionId, str, str]]:
        if not memory_ids:
            return []
        rows = self.q(
            "SELECT memory_artifact_id, entry_id, entry_version_id, kind, slug FROM memory_entry_heads "
            f"WHERE memory_artifact_id IN ({self.dialect.marks(len(memory_ids))}) AND slug IS NOT NULL "
            "ORDER BY memory_artifact_id, entry_id",
            list(memory_ids),
        )
        return [(MemoryId(r[0]), EntryId(r[1]), EntryVersionId(r[2]), r[3], r[4]) for r in rows]

    def first_created(self, entry_ids: Sequence[str]) -> dict[EntryId, str]:
        """``created_at`` of version 1 of each entry."""
        out: dict[EntryId, str] = {}
        ids = sorted(set(entry_ids))
        for i in range(0, len(ids), 500):
            batch = ids[i : i + 500]
            for r in self.q(
                "SELECT entry_id, created_at FROM memory_entry_versions "
                f"WHERE entry_id IN ({self.dialect.marks(len(batch))}) AND version = 1",
                batch,
            ):
                out[EntryId(r[0])] = r[1]
        return out

    def linking_version_ids(self, memory_ids: Sequence[str], targets: Sequence[str]) -> list[EntryVersionId]:
        """Stored versions of these Memories with a relation whose target is one of ``targets``."""
        if not memory_ids or not targets:
            return []
        wanted = set(targets)
        rows = self.q(
            "SELECT entry_version_id, relations FROM memory_entry_versions "
            f"WHERE memory_artifact_id IN ({self.dialect.marks(len(memory_ids))}) AND relations <> '[]' "
            "ORDER BY entry_version_id",
            list(memory_ids),
        )
        return [EntryVersionId(vid) for vid, rel in rows if any(r.get("target") in wanted for r in json_list(rel))]

    def memory_version_ids(self, memory_id: MemoryId) -> list[EntryVersionId]:
        rows = self.q(
            "SELECT entry_version_id FROM memory_entry_versions WHERE memory_artifact_id = ? "
            "ORDER BY entry_id, version",
            (memory_id,),
        )
        return [EntryVersionId(r[0]) for r in rows]

    def superseded_version_ids(self) -> list[EntryVersionId]:
        """Every version that has a successor (the archived rows)."""
        rows = self.q(
            "SELECT v.entry_version_id FROM memory_entry_versions v WHERE EXISTS (SELECT 1 FROM "
            "memory_entry_versions n WHERE n.memory_artifact_id = v.memory_artifact_id AND n.entry_id = v.entry_id "
            "AND n.version = v.version + 1) ORDER BY v.entry_version_id"
        )
        return [EntryVersionId(r[0]) for r in rows]

    # ---------------------------------------------------------------- the archive projection
    def put_archive(self, version: EntryVersion, text: str) -> None:
        conn = self.engine.conn
        inserted = conn.x(
            self.dialect.insert_ignore(
                "memory_entry_archive",
                ("memory_artifact_id", "entry_id", "entry_version_id", "searchable_text"),
                ("entry_version_id",),
            ),
            (version.memory_id, version.entry_id, version.entry_version_id, text),
        )
        if inserted:
            self.engine.fts.put_archive(conn, version, text)

    def archive_rows(self) -> Iterator[ArchiveRow]:
        for r in self.q(
            "SELECT memory_artifact_id, entry_id, entry_version_id, searchable_text FROM memory_entry_archive "
            "ORDER BY archive_id"
        ):
            yield ArchiveRow(MemoryId(r[0]), EntryId(r[1]), EntryVersionId(r[2]), r[3])

    # ---------------------------------------------------------------- vector metadata
    def vector_tables(self) -> bool:
        codec = self.engine.vectors
        return codec is not None and codec.exists(self.engine.conn)

    def put_vector(self, meta: VectorMeta, vector: tuple[float, ...], codec: VectorCodec | None = None) -> None:
        codec = codec or self.engine.vectors
        assert codec is not None
        conn = self.engine.conn
        rowid = conn.insert_id(
            f"INSERT INTO memory_entry_vector_metadata ({_META_COLUMNS}) VALUES ({self.dialect.marks(8)})",
            (
                meta.memory_id,
                meta.entry_id,
                meta.entry_version_id,
                meta.chunk,
                meta.chunk_count,
                meta.entry_content_hash,
                meta.embedding_content_hash,
                meta.profile_id,
            ),
            "vector_rowid",
        )
        codec.put(conn, rowid, meta.memory_id, vector)

    def drop_vectors(self, memory_id: MemoryId, entry_id: EntryId | None, codec: VectorCodec | None = None) -> None:
        """Delete the vectors of one entry (every entry with ``entry_id=None``) from ``codec``'s table."""
        codec = codec or self.engine.vectors
        if codec is None:
            return
        conn = self.engine.conn
        where, args = (
            ("memory_artifact_id = ?", (memory_id,))
            if entry_id is None
            else (
                "memory_artifact_id = ? AND entry_id = ?",
                (memory_id, entry_id),
            )
        )
        rows = self.q(f"SELECT vector_rowid FROM memory_entry_vector_metadata WHERE {where}", args)
        if rows:
            codec.delete(conn, [int(r[0]) for r in rows])
            conn.x(f"DELETE FROM memory_entry_vector_metadata WHERE {where}", args)

    def windows(self, rowids: Sequence[int]) -> dict[int, tuple[MemoryId, EntryId, EntryVersionId]]:
        if not rowids:
            return {}
        snap = snapshot_of(self.engine.conn)  # the codec's statement may have read them with the distances
        if snap is not None and all(r in snap.windows for r in rowids):
            return {r: snap.windows[r] for r in rowids}
        rows = self.q(
            "SELECT vector_rowid, memory_artifact_id, entry_id, entry_version_id FROM memory_entry_vector_metadata "
            f"WHERE vector_rowid IN ({self.dialect.marks(len(rowids))})",
            list(rowids),
        )
        return {int(r[0]): (MemoryId(r[1]), EntryId(r[2]), EntryVersionId(r[3])) for r in rows}

    def incomplete(
        self, memory_id: MemoryId, profile_id: str, limit: int, codec: VectorCodec | None = None
    ) -> list[HeadRow]:
        """Active head rows of a Memory with no complete vector projection for ``profile_id``."""
        codec = codec or self.engine.vectors
        if codec is None or not codec.exists(self.engine.conn):
            return list(self.head_rows(memory_id))[:limit]
        rows = self.q(
            "SELECT h.memory_artifact_id, h.entry_id, h.entry_version_id, h.entry_content_hash "
            "FROM memory_entry_heads h WHERE h.memory_artifact_id = ? AND NOT EXISTS ("
            "SELECT 1 FROM memory_entry_vector_metadata m WHERE m.memory_artifact_id = h.memory_artifact_id "
            "AND m.entry_id = h.entry_id AND m.entry_version_id = h.entry_version_id "
            "AND m.entry_content_hash = h.entry_content_hash AND m.chunk = 0 AND m.profile_id = ?) "
            "ORDER BY h.projection_id LIMIT ?",
            (memory_id, profile_id, limit),
        )
        return [HeadRow(MemoryId(r[0]), EntryId(r[1]), EntryVersionId(r[2]), r[3], "") for r in rows]

    def vector_rows(self, codecs: Sequence[VectorCodec] = ()) -> Iterator[VectorMeta]:
        """Every metadata row; one whose vector is missing (in every table of ``codecs``, default the store's)
        comes with an empty embedding hash (never valid)."""
        every = list(codecs) if codecs else [c for c in (self.engine.vectors,) if c is not None]
        codecs = [c for c in every if c.exists(self.engine.conn)]
        if not codecs:
            return
        present = set().union(*(c.present(self.engine.conn) for c in codecs))
        for r in self.q(
            f"SELECT {_META_COLUMNS}, vector_rowid FROM memory_entry_vector_metadata ORDER BY vector_rowid"
        ):
            embedding_hash = r[6] if int(r[8]) in present else ""
            yield VectorMeta(
                MemoryId(r[0]), EntryId(r[1]), EntryVersionId(r[2]), int(r[3]), int(r[4]), r[5], embedding_hash, r[7]
            )

    # ---------------------------------------------------------------- model migration staging
    def unstaged(
        self, limit: int, only: Sequence[str] | None = None, but: Sequence[str] = ()
    ) -> list[tuple[MemoryId, EntryVersionId]]:
        """Active head rows with no staged vector: of the Memories ``only`` names (None: every Memory) that
        ``but`` does not."""
        if only is not None and not only:
            return []
        where, args = "", []
        if only is not None:
            where += f" AND h.memory_artifact_id IN ({self.dialect.marks(len(only))})"
            args += list(only)
        if but:
            where += f" AND h.memory_artifact_id NOT IN ({self.dialect.marks(len(but))})"
            args += list(but)
        rows = self.q(
            "SELECT h.memory_artifact_id, h.entry_version_id FROM memory_entry_heads h WHERE NOT EXISTS "
            f"(SELECT 1 FROM memory_vector_staging s WHERE s.entry_version_id = h.entry_version_id){where} "
            "ORDER BY h.projection_id LIMIT ?",
            (*args, limit),
        )
        return [(MemoryId(r[0]), EntryVersionId(r[1])) for r in rows]

    def stage(self, version: EntryVersion, vectors: tuple[tuple[float, ...], ...]) -> None:
        conn = self.engine.conn
        conn.x("DELETE FROM memory_vector_staging WHERE entry_version_id = ?", (version.entry_version_id,))
        conn.many(
            "INSERT INTO memory_vector_staging (entry_version_id, chunk, memory_artifact_id, entry_id, vector) "
            f"VALUES ({self.dialect.marks(5)})",
            [
                (version.entry_version_id, i, version.memory_id, version.entry_id, pack_vector(v))
                for i, v in enumerate(vectors)
            ],
        )

    def staged(self) -> Iterator[tuple[EntryVersionId, tuple[tuple[float, ...], ...]]]:
        grouped: dict[str, list[tuple[float, ...]]] = {}
        for vid, _chunk, blob in self.q(
            "SELECT entry_version_id, chunk, vector FROM memory_vector_staging ORDER BY entry_version_id, chunk"
        ):
            grouped.setdefault(vid, []).append(unpack_vector(blob))
        for vid, vecs in grouped.items():
            yield EntryVersionId(vid), tuple(vecs)


__all__ = ["HeadRow", "ProjectionRows", "pack_vector", "unpack_vector"]
