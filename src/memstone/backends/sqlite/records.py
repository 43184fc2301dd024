"""SQLite primitives of the record surface: slug and link queries, catalogue filters, the archive projection.

Plain SQL only; every rule that uses these lives in ``backends/records.py``.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Iterator, Sequence
from typing import Any

import apsw

from ...domain.ids import EntryId, EntryVersionId, MemoryId
from ...domain.model import EntryVersion
from . import schema


def _marks(values: Sequence[object]) -> str:
    return ",".join("?" * len(values))


class SQLiteRecordsMixin:
    """Mixed into ``SQLiteMemoryBackend``."""

    @property
    @abstractmethod
    def conn(self) -> apsw.Connection: ...

    @abstractmethod
    def _q(self, sql: str, args: Sequence[object] | None = None) -> list[Any]: ...

    @abstractmethod
    def _fts_integrity_sync(self, table: str) -> str | None: ...

    # ---------------------------------------------------------------- schema
    def _records_missing_sync(self) -> bool:
        present = self._q(
            f"SELECT count(*) FROM sqlite_master WHERE name IN ({_marks(schema.RECORDS_OBJECTS)})",
            schema.RECORDS_OBJECTS,
        )[0][0]
        return bool(present != len(schema.RECORDS_OBJECTS))

    def _records_create_sync(self) -> None:
        self.conn.execute(schema.RECORDS)

    # ---------------------------------------------------------------- slugs, links, catalogues
    def _slug_holders_sync(self, memory_id: MemoryId, kind: str, slug: str) -> list[EntryId]:
        rows = self._q(
            "SELECT entry_id FROM memory_entry_heads WHERE memory_artifact_id = ? AND kind = ? AND slug = ?",
            (memory_id, kind, slug),
        )
        return [EntryId(r[0]) for r in rows]

    def _slug_version_ids_sync(self, memory_ids: Sequence[str], kind: str, slug: str) -> list[EntryVersionId]:
        if not memory_ids:
            return []
        rows = self._q(
            f"SELECT entry_version_id FROM memory_entry_versions WHERE memory_artifact_id IN ({_marks(memory_ids)}) "
            "AND slug = ? AND kind = ? ORDER BY entry_id, version",
            (*memory_ids, slug, kind),
        )
        return [EntryVersionId(r[0]) for r in rows]

    def _live_slugs_sync(self, memory_ids: Sequence[str]) -> list[tuple[MemoryId, EntryId, EntryVersionId, str, str]]:
        if not memory_ids:
            return []
        rows = self._q(
            "SELECT memory_artifact_id, entry_id, entry_version_id, kind, slug FROM memory_entry_heads "
            f"WHERE memory_artifact_id IN ({_marks(memory_ids)}) AND slug IS NOT NULL "
            "ORDER BY memory_artifact_id, entry_id",
            list(memory_ids),
        )
        return [(MemoryId(r[0]), EntryId(r[1]), EntryVersionId(r[2]), r[3], r[4]) for r in rows]

    def _catalogue_rows_sync(
        self,
        memory_id: MemoryId,
        kinds: Sequence[str],
        tags: Sequence[str],
        important: bool | None,
        mandatory: bool | None,
    ) -> list[tuple[EntryId, EntryVersionId, str]]:
        where = ["h.memory_artifact_id = ?"]
        args: list[object] = [memory_id]
        if kinds:
            where.append(f"h.kind IN ({_marks(kinds)})")
            args.extend(kinds)
        if important is not None:
            where.append("h.important = ?")
            args.append(int(important))
        if mandatory is not None:
            where.append("h.mandatory = ?")
            args.append(int(mandatory))
        for tag in tags:
            where.append("EXISTS (SELECT 1 FROM json_each(h.tags) WHERE json_each.value = ?)")
            args.append(tag)
        rows = self._q(
            "SELECT h.entry_id, h.entry_version_id, h.entry_content_hash FROM memory_entry_heads h "
            f"WHERE {' AND '.join(where)} ORDER BY h.entry_id",
            args,
        )
        return [(EntryId(r[0]), EntryVersionId(r[1]), r[2]) for r in rows]

    def _first_created_sync(self, entry_ids: Sequence[str]) -> dict[EntryId, str]:
        out: dict[EntryId, str] = {}
        ids = sorted(set(entry_ids))
        for i in range(0, len(ids), 500):
            batch = ids[i : i + 500]
            for r in self._q(
                f"SELECT entry_id, created_at FROM memory_entry_versions WHERE entry_id IN ({_marks(batch)}) "
                "AND version = 1",
                batch,
            ):
                out[EntryId(r[0])] = r[1]
        return out

    def _linking_version_ids_sync(self, memory_ids: Sequence[str], targets: Sequence[str]) -> list[EntryVersionId]:
        rows = self._q(
            "SELECT DISTINCT v.entry_version_id FROM memory_entry_versions v, json_each(v.relations) r "
            f"WHERE v.memory_artifact_id IN ({_marks(memory_ids)}) AND v.relations != '[]' "
            f"AND json_extract(r.value, '$.target') IN ({_marks(targets)}) ORDER BY v.entry_version_id",
            (*memory_ids, *targets),
        )
        return [EntryVersionId(r[0]) for r in rows]

    def _memory_version_ids_sync(self, memory_id: MemoryId) -> list[EntryVersionId]:
        rows = self._q(
            "SELECT entry_version_id FROM memory_entry_versions WHERE memory_artifact_id = ? "
            "ORDER BY entry_id, version",
            (memory_id,),
        )
        return [EntryVersionId(r[0]) for r in rows]

    def _superseded_version_ids_sync(self) -> list[EntryVersionId]:
        rows = self._q(
            "SELECT v.entry_version_id FROM memory_entry_versions v WHERE EXISTS (SELECT 1 FROM "
            "memory_entry_versions n WHERE n.memory_artifact_id = v.memory_artifact_id AND n.entry_id = v.entry_id "
            "AND n.version = v.version + 1) ORDER BY v.entry_version_id"
        )
        return [EntryVersionId(r[0]) for r in rows]

    # ---------------------------------------------------------------- the archive projection
    def _archive_put_sync(self, version: EntryVersion, text: str) -> None:
        self.conn.execute(
            "INSERT INTO memory_entry_archive (memory_artifact_id, entry_id, entry_version_id, searchable_text) "
            "VALUES (?, ?, ?, ?) ON CONFLICT (entry_version_id) DO NOTHING",
            (version.memory_id, version.entry_id, version.entry_version_id, text),
        )

    def _archive_rows_sync(self) -> Iterator[tuple[MemoryId, EntryId, EntryVersionId, str]]:
        for r in self._q(
            "SELECT memory_artifact_id, entry_id, entry_version_id, searchable_text FROM memory_entry_archive "
            "ORDER BY archive_id"
        ):
            yield MemoryId(r[0]), EntryId(r[1]), EntryVersionId(r[2]), r[3]

    def _archive_clear_sync(self) -> None:
        # Like the head FTS index, a damaged archive index cannot be trusted with per-row deletes: drop and
        # recreate the table, its index and triggers in the rebuild's transaction.
        for trigger in ("trg_archive_fts_insert", "trg_archive_fts_delete"):
            self.conn.execute(f"DROP TRIGGER IF EXISTS {trigger}")
        self.conn.execute("DROP TABLE IF EXISTS memory_entry_archive_fts")
        self.conn.execute("DROP TABLE IF EXISTS memory_entry_archive")
        self.conn.execute(schema.RECORDS)

    def _archive_fts_check_sync(self) -> list[str]:
        found = self._fts_integrity_sync("memory_entry_archive_fts")
        return [f"archive full-text index does not match the archive projection: {found}"] if found else []

    def _archive_candidates_sync(
        self, memory_ids: Sequence[str], terms: Sequence[str], depth: int
    ) -> list[tuple[MemoryId, EntryId, EntryVersionId, str]]:
        # Raw user input never reaches MATCH: only analyzer tokens, each quoted as a string.
        match = " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)
        rows = self._q(
            "SELECT a.memory_artifact_id, a.entry_id, a.entry_version_id, a.searchable_text "
            "FROM memory_entry_archive_fts f CROSS JOIN memory_entry_archive a ON a.archive_id = f.rowid "
            f"WHERE memory_entry_archive_fts MATCH ? AND a.memory_artifact_id IN ({_marks(memory_ids)}) "
            "ORDER BY f.rank, a.entry_version_id LIMIT ?",
            (match, *memory_ids, depth),
        )
        return [(MemoryId(r[0]), EntryId(r[1]), EntryVersionId(r[2]), r[3]) for r in rows]

    # ---------------------------------------------------------------- store meta
    def _meta_sync(self, key: str) -> str | None:
        rows = self._q("SELECT value FROM store_meta WHERE key = ?", (key,))
        return str(rows[0][0]) if rows else None

    def _set_meta_sync(self, key: str, value: str) -> None:
        self.conn.execute("INSERT INTO store_meta (key, value) VALUES (?, ?)", (key, value))


__all__ = ["SQLiteRecordsMixin"]
