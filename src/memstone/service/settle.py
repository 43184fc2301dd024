"""After a bulk write, the engine's storage upkeep, once (issue 13).

A bulk operation (``memstone copy``, ``import``, an importer, ``backfill``, ``reembed``) writes thousands of rows
in a few minutes. On PostgreSQL those rows' pages are not yet marked all-visible (only ``VACUUM`` sets the
visibility map), so the full-text statement's index-only scans of the postings fetch every posting's heap row as
well, and the planner's statistics describe the tables as they were before; autovacuum catches up only after 20 %
of a table is new, and at its own pace. So at the end of such an operation the service runs the engine's storage
upkeep (``StoreCore.storage_upkeep``: ``VACUUM (ANALYZE)`` of the written tables on PostgreSQL, FTS5 ``optimize``
and a WAL checkpoint on SQLite; nothing on an engine that keeps its own storage), which leaves the store as fast
as a vacuumed one. ``SETTLE_ROWS``: below a thousand rows (the engine's own write-time merging and autovacuum's
base threshold cover it) a bulk operation leaves the upkeep to them and to the maintenance daemon.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from ..ports import DaemonHealthStore

log = logging.getLogger("memstone.service")

SETTLE_ROWS = 1000


async def settle(backend: object, rows: int, say: Callable[[str, int, int], None] | None = None) -> dict[str, object]:
    """The engine's storage upkeep after a bulk operation that wrote ``rows`` entries or vectors; returns what it did
    (``{}`` when it was not needed). ``say(phase, done, total)``: progress, as ``("upkeep", 0, 1)`` then ``(1, 1)``."""
    if rows < SETTLE_ROWS or not isinstance(backend, DaemonHealthStore):
        return {}
    if say is not None:
        say("upkeep", 0, 1)
    started = time.monotonic()
    done = await backend.storage_upkeep()
    log.info("storage upkeep after a bulk write of %d rows in %.2f s: %s", rows, time.monotonic() - started, done)
    if say is not None:
        say("upkeep", 1, 1)
    return done


__all__ = ["SETTLE_ROWS", "settle"]
