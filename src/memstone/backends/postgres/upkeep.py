"""PostgreSQL's storage upkeep (``backends/sql/upkeep.py``): a plain ``VACUUM (ANALYZE)`` of the tables that churn
(head rows, postings, vectors): it marks dead rows' space reusable and refreshes the planner's statistics
without the exclusive lock of ``VACUUM FULL`` (a purge's compaction), so writers go on meanwhile. The postings
are rows, so there is no separate full-text index to optimize."""

from __future__ import annotations

from collections.abc import Callable

from ..sql.engine import Engine

CHURN = (
    "artifact_heads",
    "memory_entry_heads",
    "memory_entry_postings",
    "memory_entry_archive",
    "memory_entry_archive_postings",
    "memory_entry_vector_metadata",
    "memory_entry_vectors",
    "maintenance_lease",
    "store_meta",
)


class PostgresUpkeep:
    """The PostgreSQL upkeep codec (``PostgresEngine.upkeep``)."""

    def __init__(self, autocommit: Callable[[str], list[tuple[object, ...]]]) -> None:
        self._autocommit = autocommit  # one statement outside any transaction (VACUUM cannot run inside one)

    def upkeep(self, engine: Engine) -> dict[str, object]:
        present = {
            str(r[0]) for r in self._autocommit("SELECT tablename FROM pg_tables WHERE schemaname = current_schema()")
        }
        tables = [t for t in CHURN if t in present]
        if tables:
            self._autocommit(f"VACUUM (ANALYZE) {', '.join(tables)}")
        return {"vacuumed": tables, "analyzed": bool(tables)}


__all__ = ["PostgresUpkeep"]
