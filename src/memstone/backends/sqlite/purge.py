"""SQLite's part of a purge (issue 12; the engine-neutral steps are in ``backends/sql/purge.py``).

- The authority tables refuse UPDATE by trigger; the purge drops the two it must pass and recreates them inside
  the same transaction, so no other writer ever sees the table writable.
- ``secure_delete`` is on while the purge runs: freed cells and pages are zeroed, not left in the file.
- An FTS5 delete leaves the old tokens in its segments until they merge: both indexes are rebuilt from their
  content tables and optimized into one segment, so no segment holds a purged word.
- After COMMIT, ``VACUUM`` rewrites the file without free pages and ``wal_checkpoint(TRUNCATE)`` empties the WAL,
  so the bytes are gone from the database file and its ``-wal``.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from ..sql.ddl import SQLITE, tombstone_table
from ..sql.engine import Conn, Engine
from . import schema
from .file import SQLiteFile

TOMBSTONES = (
    tombstone_table(SQLITE)
    + """CREATE TRIGGER IF NOT EXISTS trg_memory_purges_no_update BEFORE UPDATE ON memory_purges
BEGIN SELECT RAISE(ABORT, 'memory_purges is append-only'); END;
CREATE TRIGGER IF NOT EXISTS trg_memory_purges_no_delete BEFORE DELETE ON memory_purges
BEGIN SELECT RAISE(ABORT, 'memory_purges is append-only'); END;
"""
)
_CHECKPOINT_TRIES = 50
_GUARDS = ("trg_memory_entry_versions_no_update", "trg_sources_no_update")


class SQLitePurge:
    """The SQLite purge codec (``SQLiteEngine.purge``)."""

    def __init__(self, file: SQLiteFile) -> None:
        self.file = file
        self._secure_before = 0

    def allow_rewrite(self, conn: Conn) -> None:
        raw = self.file.raw
        row = raw.execute("PRAGMA secure_delete").fetchone()
        self._secure_before = int(row[0]) if row else 0
        raw.execute("PRAGMA secure_delete = ON")
        for trigger in _GUARDS:
            raw.execute(f"DROP TRIGGER IF EXISTS {trigger}")

    def restore(self, conn: Conn) -> None:
        self.file.raw.execute(schema.immutability_triggers())  # IF NOT EXISTS: recreates exactly the dropped ones

    def drop_archive(self, conn: Conn, version_ids: Sequence[str]) -> None:
        return None  # trg_archive_fts_delete

    def erase_fulltext(self, conn: Conn) -> None:
        for fts in ("memory_entry_search_fts", "memory_entry_archive_fts"):
            conn.x(f"INSERT INTO {fts} ({fts}) VALUES ('rebuild')")
            conn.x(f"INSERT INTO {fts} ({fts}) VALUES ('optimize')")

    def compact(self, engine: Engine) -> bool:
        """Rewrite the file without free pages and empty the WAL; False when other connections kept it busy."""
        raw = self.file.raw
        try:
            if self.file.path == ":memory:":
                return True
            raw.execute("VACUUM")
            for _ in range(_CHECKPOINT_TRIES):
                done = raw.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
                if done is not None and done[0] == 0:
                    return True
                time.sleep(0.1)
            return False
        finally:
            raw.execute(f"PRAGMA secure_delete = {self._secure_before}")


__all__ = ["TOMBSTONES", "SQLitePurge"]
