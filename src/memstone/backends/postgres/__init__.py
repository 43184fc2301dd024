"""The PostgreSQL + pgvector engine (``postgresql://…`` URLs), registered under the ``memstone.backends`` entry
points. Its driver (psycopg 3 and psycopg-pool) is the ``postgres`` extra: ``pip install 'memstone[postgres]'``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...domain.errors import BackendUnavailable
from ..url import StoreURL

if TYPE_CHECKING:
    from .store import PostgresMemoryBackend


async def open_postgres(url: StoreURL, *, create: bool = True) -> PostgresMemoryBackend:
    """The ``postgresql`` engine's opener (what ``open_store`` calls for a ``postgresql:`` URL)."""
    try:
        from .store import PostgresMemoryBackend
    except ImportError as exc:
        raise BackendUnavailable(
            f"the PostgreSQL driver is not installed ({exc.name})", hint="pip install 'memstone[postgres]'"
        ) from exc
    return await PostgresMemoryBackend(url.url, create=create).open()


__all__ = ["open_postgres"]
