"""The embedded default backend: one SQLite file through apsw (bundled SQLite, FTS5, sqlite-vec), WAL mode.

``SQLiteMemoryBackend`` is the store core (``backends/sql``) over the SQLite engine (``engine.py``: one connection
on one worker thread, ``fts.py``: FTS5, ``vectors.py``: sqlite-vec plus an in-process exact index).
"""

from __future__ import annotations

from collections.abc import Sequence

import apsw

from ...domain.errors import InvalidInput
from ...domain.ids import EntryId
from ...domain.purge import Tombstone
from ..sql.core import StoreCore
from ..url import StoreURL, parse_store_url
from .engine import DEFAULT_BUSY_TIMEOUT_MS, SQLiteEngine
from .options import StoreOptions, split_url
from .purge import SQLitePurge
from .side_files import import_side_files


def parse_sqlite_url(url: str) -> str:
    """The file path (or ``:memory:``) a ``sqlite:`` URL names; other URLs are refused with the correct form."""
    parsed = parse_store_url(url)
    if parsed.scheme != "sqlite":
        raise InvalidInput(f"{url!r} is not a SQLite store URL", hint="write sqlite:///path/to/memstone.db")
    return parsed.path


async def open_sqlite(url: StoreURL, *, create: bool = True) -> SQLiteMemoryBackend:
    """The ``sqlite`` engine's opener (what ``open_store`` calls for a ``sqlite:`` URL)."""
    _, options = split_url(url.url)
    return await SQLiteMemoryBackend(url.path, options=options, create=create).open()


class SQLiteMemoryBackend(StoreCore):
    """SQLite + FTS5 + sqlite-vec through apsw. Many processes may share one file."""

    def __init__(
        self,
        path: str,
        *,
        busy_timeout_ms: int = DEFAULT_BUSY_TIMEOUT_MS,
        options: StoreOptions | None = None,
        create: bool = True,
    ) -> None:
        self.sqlite = SQLiteEngine(path, busy_timeout_ms=busy_timeout_ms, options=options, create=create)
        super().__init__(self.sqlite)
        self._purge = SQLitePurge(self.sqlite, self.parts)
        self.parts.purged_hashes = self._purge.purged_hashes_sync

    async def purge_versions(self, tombstones: Sequence[Tombstone]) -> bool:
        """Erase these versions' content from every file, keeping their tombstones (sqlite/purge.py)."""
        return await self._purge.purge_versions(tombstones)

    async def tombstones(self, entry_id: EntryId | None = None) -> tuple[Tombstone, ...]:
        return await self._purge.tombstones(entry_id)

    async def open(self) -> SQLiteMemoryBackend:
        await super().open()
        try:
            await import_side_files(self.sqlite)  # an old store's capture files (side_files.py)
        except BaseException:
            await self.aclose()
            raise
        return self

    @property
    def path(self) -> str:
        return self.sqlite.path

    @property
    def read_only(self) -> bool:
        return self.sqlite.read_only

    @property
    def conn(self) -> apsw.Connection:
        return self.sqlite.raw

    @property
    def vec_version(self) -> str | None:
        return self.sqlite.vectors.vec_version


__all__ = ["SQLiteMemoryBackend", "parse_sqlite_url"]
