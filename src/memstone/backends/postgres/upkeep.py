"""PostgreSQL's storage upkeep (``backends/sql/upkeep.py``): a plain ``VACUUM`` and an ``ANALYZE`` of the tables
that churn (head rows, postings, vectors): it marks dead rows' space reusable and refreshes the planner's statistics
without the exclusive lock of ``VACUUM FULL`` (a purge's compaction), so writers go on meanwhile. The postings
are rows, so there is no separate full-text index to optimize.

It also sets the visibility map, which the full-text statement's index-only scans of the postings need (without
it they read each posting's heap row too). VACUUM marks a page all-visible only once the commits of its rows are
flushed to the WAL; on a server with ``synchronous_commit = off`` (the test servers) that is up to a few hundred
ms after they returned, so the upkeep that follows a bulk write (``service/settle.py``) would leave its last
transaction's pages unmarked (a hint bit of a committed row is set only once the WAL holding its commit, and
every later commit of its group of transactions, is flushed; the WAL writer may leave the last page unflushed
while the server is idle): it first flushes the WAL (PostgreSQL 17's ``pg_logical_emit_message(..., flush)``),
then vacuums every table and only then analyzes them, since each table's ``ANALYZE`` commits a transaction of
its own, asynchronously there, which would hold back the hint bits of the rows in the tables vacuumed after it."""

from __future__ import annotations

import contextlib
from collections.abc import Callable

from ...domain.errors import BackendError
from ..sql.engine import Engine

CHURN = (
    "artifact_heads",
    "memory_entry_heads",
    "memory_entry_postings",
    "memory_fts_stats",  # one row per Memory, updated by every write: its dead versions are what a search scans
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
        # the vector tables of organizations with their own profile too (``memory_entry_vectors_d<dimension>``)
        tables = [t for t in CHURN if t in present] + sorted(
            t for t in present if t.startswith("memory_entry_vectors_d")
        )
        if tables:
            self._flushed()
            self._autocommit(f"VACUUM {', '.join(tables)}")
            self._autocommit(f"ANALYZE {', '.join(tables)}")
        return {"vacuumed": tables, "analyzed": bool(tables)}

    def _flushed(self) -> None:
        """Flush the WAL written so far (a no-op with synchronous commits): a logical message with ``flush``. A server
        that refuses it (a role without the function) is vacuumed as it is: the pages are marked by a later upkeep."""
        with contextlib.suppress(BackendError):
            self._autocommit("SELECT pg_logical_emit_message(false, 'memstone', 'upkeep', true)")


__all__ = ["PostgresUpkeep"]
