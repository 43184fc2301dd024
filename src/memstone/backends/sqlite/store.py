"""The embedded default backend: one SQLite file through apsw (bundled SQLite, FTS5, sqlite-vec), WAL mode.

``SQLiteMemoryBackend`` is the store core (``backends/sql``) over the SQLite engine (``engine.py``: one connection
on one worker thread, ``fts.py``: FTS5, ``vectors.py``: sqlite-vec plus an in-process exact index).
"""

from __future__ import annotations

from typing import Unpack

import apsw

from ...domain.errors import InvalidInput
from ..sql.core import StoreCore
from ..url import StoreURL, parse_store_url
from .engine import SQLiteEngine, SQLiteEngineArgs
from .options import split_url
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

    def __init__(self, path: str, **engine_args: Unpack[SQLiteEngineArgs]) -> None:
        self.sqlite = SQLiteEngine(path, **engine_args)
        super().__init__(self.sqlite)

    async def open(self) -> SQLiteMemoryBackend:
        await super().open()
        try:
            await import_side_files(self.sqlite)  # an old store's capture files (side_files.py)
        except BaseException:
            await self.aclose()
            raise
        return self

    @property
    def conn(self) -> apsw.Connection:
        return self.sqlite.raw

    @property
    def vec_version(self) -> str | None:
        return self.sqlite.vectors.vec_version

    @property
    def rerank_depth(self) -> int:
        """How many 1-bit prescan candidates a large Memory's vector search scores exactly; 0 scans every row
        (``backends/sqlite/vectors.py``). A tuning knob for benchmarks: results stay exact float32 distances."""
        return self.sqlite.vectors.rerank_depth

    @rerank_depth.setter
    def rerank_depth(self, depth: int) -> None:
        self.sqlite.vectors.rerank_depth = depth


__all__ = ["SQLiteMemoryBackend", "parse_sqlite_url"]
