"""``PostgresMemoryBackend``: the store core (``backends/sql``) over the PostgreSQL engine (``engine.py``)."""

from __future__ import annotations

from ..sql.core import StoreCore
from .engine import DEFAULT_POOL_SIZE, PostgresEngine


def libpq_url(url: str) -> str:
    """The libpq URI psycopg takes: ``postgres://`` is an alias of ``postgresql://``."""
    scheme, sep, rest = url.partition("://")
    return f"postgresql://{rest}" if sep and scheme.lower() in ("postgres", "postgresql") else url


class PostgresMemoryBackend(StoreCore):
    """PostgreSQL + pgvector through psycopg 3 and a connection pool. Many processes and machines may share it."""

    def __init__(self, url: str, *, create: bool = True, pool_size: int = DEFAULT_POOL_SIZE) -> None:
        self.postgres = PostgresEngine(libpq_url(url), create=create, pool_size=pool_size)
        super().__init__(self.postgres)

    async def open(self) -> PostgresMemoryBackend:
        await super().open()
        return self


__all__ = ["PostgresMemoryBackend", "libpq_url"]
