"""The OceanBase backend: the store core (``backends/sql``) over the OceanBase engine parts.

``engine.py``: one PyMySQL connection on one worker thread, migrations, transactions and the isolation contract's
row locks; ``fts.py``: FULLTEXT with the SPACE parser; ``vectors.py``: HNSW on the head table.
"""

from __future__ import annotations

from ...domain.errors import BackendUnavailable
from ...ports import EmbeddingProfile
from ..sql.core import StoreCore
from ..url import StoreURL
from .engine import OceanBaseEngine


async def open_oceanbase(url: StoreURL, *, create: bool = True) -> OceanBaseMemoryBackend:
    """The ``oceanbase`` engine's opener (registered under the ``memstone.backends`` entry-point group)."""
    try:
        import pymysql  # noqa: F401
    except ImportError as exc:
        raise BackendUnavailable(
            "the OceanBase engine needs PyMySQL", hint="pip install 'memstone[oceanbase]'"
        ) from exc
    return await OceanBaseMemoryBackend(url.url, create=create).open()


class OceanBaseMemoryBackend(StoreCore):
    """OceanBase MySQL mode (4.3.5+): FULLTEXT (SPACE parser) and HNSW on the head table, row-lock head CAS."""

    def __init__(self, url: str, *, create: bool = True) -> None:
        self.oceanbase = OceanBaseEngine(url, create=create)
        super().__init__(self.oceanbase)

    async def open(self) -> OceanBaseMemoryBackend:
        await super().open()
        return self

    # A new dimension's column, HNSW index and table are made before the transactions that use them: DDL on the
    # side connection while the transaction holds uncommitted rows of the head table would wait for it.
    async def configure_embedding(self, profile: EmbeddingProfile | None, *, record: bool) -> EmbeddingProfile | None:
        if profile is not None and record and self.oceanbase.vectors.dims == set():
            await self._run(self.oceanbase.vectors.create, self.oceanbase.db, profile.dimension)
        return await super().configure_embedding(profile, record=record)

    async def start_migration(self, profile: EmbeddingProfile, *, org: str | None = None) -> None:
        if org is None:
            await self._run(self.oceanbase.vectors.create, self.oceanbase.db, profile.dimension)
        await super().start_migration(profile, org=org)

    async def finish_migration(self, profile: EmbeddingProfile) -> None:
        await self._run(self.oceanbase.vectors.create, self.oceanbase.db, profile.dimension)
        await super().finish_migration(profile)


__all__ = ["OceanBaseMemoryBackend", "open_oceanbase"]
