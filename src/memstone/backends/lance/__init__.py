"""The LanceDB engine (``lancedb:///folder``, ``lancedb+s3://bucket/prefix``), registered under the
``memstone.backends`` entry points. Its driver is the ``lancedb`` extra: ``pip install 'memstone[lancedb]'``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...domain.errors import BackendUnavailable
from ..url import StoreURL
from .location import parse_location

if TYPE_CHECKING:
    from .store import LanceMemoryBackend


async def open_lance(url: StoreURL, *, create: bool = True) -> LanceMemoryBackend:
    """The ``lancedb`` / ``lancedb+s3`` engine's opener (what ``open_store`` calls for those URLs)."""
    location = parse_location(url)
    try:
        from .store import LanceMemoryBackend
    except ImportError as exc:
        raise BackendUnavailable(
            f"the LanceDB driver is not installed ({exc.name})", hint="pip install 'memstone[lancedb]'"
        ) from exc
    return await LanceMemoryBackend(location, create=create).open()


__all__ = ["open_lance"]
