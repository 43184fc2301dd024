"""``PostgresMemoryBackend``: the store core (``backends/sql``) over the PostgreSQL engine (``engine.py``)."""

from __future__ import annotations

from urllib.parse import parse_qsl, urlencode, urlsplit

from ...domain.errors import InvalidInput
from ..sql.core import StoreCore
from .engine import DEFAULT_POOL_SIZE, PostgresEngine

MAX_POOL_SIZE = 100
POOL_OPTION = "pool_size"


def libpq_url(url: str) -> str:
    """The libpq URI psycopg takes: ``postgres://`` is an alias of ``postgresql://``; memstone's own options
    (``?pool_size=N``) are removed, since libpq refuses a query parameter it does not know."""
    scheme, sep, rest = url.partition("://")
    url = f"postgresql://{rest}" if sep and scheme.lower() in ("postgres", "postgresql") else url
    parts = urlsplit(url)
    if POOL_OPTION not in parts.query:
        return url
    kept = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k != POOL_OPTION]
    return parts._replace(query=urlencode(kept)).geturl()


def pool_size_of(url: str) -> int:
    """``?pool_size=N`` (1..100) of a PostgreSQL URL: the connections (and threads) one process uses at most.

    >>> pool_size_of("postgresql://db/memstone?pool_size=16")
    16
    >>> pool_size_of("postgresql://db/memstone") == DEFAULT_POOL_SIZE
    True
    """
    values = [v for k, v in parse_qsl(urlsplit(url).query, keep_blank_values=True) if k == POOL_OPTION]
    if not values:
        return DEFAULT_POOL_SIZE
    text = values[-1]
    if len(values) > 1 or not text.isascii() or not text.isdigit() or not 1 <= int(text) <= MAX_POOL_SIZE:
        # Trigger: ?pool_size=0, =abc, =1000 or the option given twice. Outcome: refused before connecting.
        raise InvalidInput(
            f"pool_size must be one whole number from 1 to {MAX_POOL_SIZE}, not {', '.join(values)!r}",
            hint=f"e.g. ?pool_size=16 (the default is {DEFAULT_POOL_SIZE}; each is one server connection)",
        )
    return int(text)


class PostgresMemoryBackend(StoreCore):
    """PostgreSQL + pgvector through psycopg 3 and a connection pool. Many processes and machines may share it."""

    def __init__(self, url: str, *, create: bool = True, pool_size: int | None = None) -> None:
        size = pool_size_of(url) if pool_size is None else pool_size
        self.postgres = PostgresEngine(libpq_url(url), create=create, pool_size=size)
        super().__init__(self.postgres)

    async def open(self) -> PostgresMemoryBackend:
        await super().open()
        return self


__all__ = ["PostgresMemoryBackend", "libpq_url", "pool_size_of"]
