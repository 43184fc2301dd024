"""Storage backends. ``open_store(url)`` is the one way in; only composition roots call it.

URLs are parsed in :mod:`memstone.backends.url` and nowhere else; engines outside this package register under
the ``memstone.backends`` entry-point group.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .bundle import StoreBundle
from .url import ENTRY_POINT_GROUP, StoreURL, local_file, parse_store_url, registered_opener, state_dir, store_location

if TYPE_CHECKING:
    from ..ports import MemoryBackend

DEFAULT_URL = "sqlite:///~/.memstone/memstone.db"


def default_url() -> str:
    """The embedded default ``~/.memstone/memstone.db``. ``MEMSTONE_URL`` is resolved by the composition root
    (memstone.config), which passes the URL down."""
    return DEFAULT_URL


async def open_store(url: str | None = None, *, create: bool = True) -> StoreBundle:
    """Open the store a URL names (``sqlite:///path.db``, ``sqlite:////abs/path.db``, ``sqlite:///:memory:``, or a
    registered engine's URL) as one :class:`StoreBundle`: the memory backend, principals, capture queue and
    settings, and the state location.

    ``create=False`` (every read-only command) refuses a store that does not exist yet instead of creating it.
    """
    parsed = parse_store_url(url or default_url())
    return StoreBundle(parsed, await _open_memory(parsed, create=create))


async def _open_memory(parsed: StoreURL, *, create: bool) -> MemoryBackend:
    if parsed.scheme == "sqlite":
        from .sqlite import open_sqlite

        return await open_sqlite(parsed, create=create)
    return await registered_opener(parsed)(parsed, create=create)


__all__ = [
    "DEFAULT_URL",
    "ENTRY_POINT_GROUP",
    "StoreBundle",
    "StoreURL",
    "default_url",
    "local_file",
    "open_store",
    "parse_store_url",
    "state_dir",
    "store_location",
]
