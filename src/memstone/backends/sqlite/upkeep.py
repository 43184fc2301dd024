"""SQLite's storage upkeep (``backends/sql/upkeep.py``): FTS5 ``optimize`` merges both indexes' segments into one
(fewer segments to read per query), ``wal_checkpoint(TRUNCATE)`` copies the WAL into the file and empties it, and
``VACUUM`` runs only when at least a quarter of the file is free pages (it rewrites the whole file, so it is not
worth it for a few freed pages)."""

from __future__ import annotations

import apsw

from ..sql.engine import Engine
from .file import SQLiteFile
from .fts import FTS_TABLES

VACUUM_FREE_SHARE = 0.25


class SQLiteUpkeep:
    """The SQLite upkeep codec (``SQLiteEngine.upkeep``)."""

    def __init__(self, file: SQLiteFile) -> None:
        self.file = file

    def upkeep(self, engine: Engine) -> dict[str, object]:
        with engine.write_txn():
            for fts in FTS_TABLES:
                engine.conn.x(f"INSERT INTO {fts} ({fts}) VALUES ('optimize')")
        done: dict[str, object] = {"fts_optimized": list(FTS_TABLES)}
        if self.file.path == ":memory:":
            return done
        raw = self.file.raw
        pages = _pragma(raw, "page_count")
        free = _pragma(raw, "freelist_count")
        done["pages"], done["free_pages"] = pages, free
        done["vacuumed"] = bool(pages and free / pages >= VACUUM_FREE_SHARE)
        if done["vacuumed"]:
            try:
                raw.execute("VACUUM")
            except apsw.BusyError:  # another connection reads or writes: the next upkeep tries again
                done["vacuumed"] = "busy: another connection holds the file; tried again next time"
        row = raw.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        done["checkpoint"] = {"busy": bool(row[0]), "wal_pages": row[1], "copied": row[2]} if row else None
        return done


def _pragma(raw: apsw.Connection, name: str) -> int:
    row = raw.execute(f"PRAGMA {name}").fetchone()
    return int(row[0]) if row else 0


__all__ = ["SQLiteUpkeep"]
