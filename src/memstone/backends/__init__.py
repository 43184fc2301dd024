"""Storage backends. ``open_store(url)`` is the one way in; only composition roots call it."""

from __future__ import annotations

from ..domain.errors import InvalidInput
from .base import DatabaseMemoryBackend

DEFAULT_URL = "sqlite:///~/.memstone/memstone.db"


def default_url() -> str:
    """The embedded default ``~/.memstone/memstone.db``. ``MEMSTONE_URL`` is resolved by the composition root
    (memstone.config), which passes the URL down."""
    return DEFAULT_URL


async def open_store(url: str | None = None) -> DatabaseMemoryBackend:
    """Open the backend a URL names: ``sqlite:///path.db`` (or a bare path), ``sqlite:///:memory:``.

    SQLite URLs take ``?mode=ro`` (read-only) and ``?durability=fast`` (see ``backends/sqlite/options.py``).
    """
    target = url or default_url()
    if target.startswith("sqlite:") or "://" not in target:
        from .sqlite import SQLiteMemoryBackend, parse_sqlite_url
        from .sqlite.options import split_url

        _, options = split_url(target)
        return await SQLiteMemoryBackend(parse_sqlite_url(target), options=options).open()
    scheme = target.split("://", 1)[0]
    raise InvalidInput(f"unknown store URL scheme {scheme!r}", hint="use sqlite:///path/to/memstone.db")


__all__ = ["DEFAULT_URL", "default_url", "open_store"]
