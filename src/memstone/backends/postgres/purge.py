"""PostgreSQL's part of a purge (issue 12; the engine-neutral steps are in ``backends/sql/purge.py``).

- The append-only trigger lets an UPDATE through only when the transaction set ``memstone.purge`` (``SET LOCAL``,
  so it ends with the transaction); DELETE stays refused.
- The archive's posting rows of a purged version are deleted before its archive row is re-derived; a purged
  version is never at a head (the service forgets it first), so no head posting holds its tokens.
- After COMMIT the old row versions are dead tuples, still in the table files until they are overwritten:
  ``VACUUM FULL`` rewrites every table that held the text (versions, sources, heads, postings, archive, vectors)
  into new files, then ``CHECKPOINT``. The WAL segments written before keep the old bytes until PostgreSQL
  recycles them, as do base backups and replicas' WAL (docs/engines/postgresql.md says so).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ...domain.errors import BackendError
from ..sql.ddl import POSTGRES, tombstone_table
from ..sql.engine import Conn, Engine

TOMBSTONES = (
    tombstone_table(POSTGRES)
    + """CREATE OR REPLACE FUNCTION memstone_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'UPDATE' AND TG_TABLE_NAME IN ('memory_entry_versions', 'sources')
       AND current_setting('memstone.purge', true) = 'on' THEN
        RETURN NEW;
    END IF;
    RAISE EXCEPTION '% is append-only', TG_TABLE_NAME;
END $$;
CREATE OR REPLACE TRIGGER trg_memory_purges_append_only BEFORE UPDATE OR DELETE ON memory_purges
    FOR EACH ROW EXECUTE FUNCTION memstone_append_only();
"""
)

_REWRITE = (
    "memory_entry_versions",
    "sources",
    "memory_entry_heads",
    "memory_entry_postings",
    "memory_entry_archive",
    "memory_entry_archive_postings",
    "memory_entry_vector_metadata",
)


class PostgresPurge:
    """The PostgreSQL purge codec (``PostgresEngine.purge``)."""

    def __init__(self, autocommit: Callable[[str], list[tuple[object, ...]]]) -> None:
        self._autocommit = autocommit  # runs one statement outside any transaction

    def allow_rewrite(self, conn: Conn) -> None:
        conn.q("SELECT set_config('memstone.purge', 'on', true)")

    def restore(self, conn: Conn) -> None:
        conn.q("SELECT set_config('memstone.purge', 'off', true)")

    def drop_archive(self, conn: Conn, version_ids: Sequence[str]) -> None:
        conn.x(
            "DELETE FROM memory_entry_archive_postings WHERE entry_version_id = ANY(?::text[])", (list(version_ids),)
        )

    def erase_fulltext(self, conn: Conn) -> None:
        return None  # postings are rows: deleted with the rows they index

    def compact(self, engine: Engine) -> bool:
        present = {
            str(r[0]) for r in self._autocommit("SELECT tablename FROM pg_tables WHERE schemaname = current_schema()")
        }
        tables = [t for t in (*_REWRITE, "memory_entry_vectors", "memory_vector_staging") if t in present]
        self._autocommit(f"VACUUM (FULL) {', '.join(tables)}")
        try:
            self._autocommit("CHECKPOINT")
        except BackendError:
            return True  # CHECKPOINT needs pg_checkpoint; the table files are rewritten either way
        return True


__all__ = ["TOMBSTONES", "PostgresPurge"]
