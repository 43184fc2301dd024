"""The vector projection's upkeep: ``backfill`` of missing vectors and ``reembed`` (the no-loss model migration)."""

from __future__ import annotations

from ..domain.errors import (
    CapabilityNotSupportedError,
)
from ..domain.ids import MemoryId
from ..indexing import Progress, VectorIndexer
from ..ports import (
    EmbeddingModel,
)
from .core import (
    ServiceCore,
)


class Vectors:
    """Backfill and model migration of the vector projection."""

    def __init__(self, core: ServiceCore) -> None:
        self._core = core

    async def backfill(
        self, *, batch: int = 64, progress: Progress | None = None, memory: MemoryId | None = None
    ) -> int:
        """Embed every active entry (of one Memory, when given) that has no vector yet; resumable (a rerun picks
        up what is missing)."""
        if self._core.indexer is None:
            raise CapabilityNotSupportedError("vector", "backfill needs an embedding model")
        done = 0
        total = await self._core.backend.vector_backlog(memory)
        while True:
            pending = await self._core.backend.missing_vectors(batch, memory)
            if not pending:
                break
            vectors = await self._core.indexer.vectors_for(pending)
            if not vectors:
                raise CapabilityNotSupportedError(
                    "vector",
                    f"the embedding model failed: {self._core.indexer.last_error}",
                    hint="fix the model, rerun",
                )
            done += await self._core.backend.put_vectors(vectors)
            if progress is not None:
                progress(done, max(total, done))
        return done

    async def reembed(self, model: EmbeddingModel, *, batch: int = 64, progress: Progress | None = None) -> int:
        """Migrate the store to another embedding model: writes pause, every active head is re-embedded into
        staging, completeness is checked, then one transaction swaps the projection and the recorded profile.

        An interrupted migration leaves the store on its old profile. Returns how many entries were embedded.
        """
        indexer = VectorIndexer(model)
        total = sum(h.active_count for h in await self._core.memories())
        await self._core.backend.start_migration(model.profile)
        done = 0
        try:
            while True:
                pending = await self._core.backend.unstaged_versions(batch)
                if not pending:
                    break
                vectors = await indexer.vectors_for(pending)
                if len(vectors) != len(pending):
                    raise CapabilityNotSupportedError(
                        "vector", f"the new model failed: {indexer.last_error}", hint="the store keeps its old profile"
                    )
                await self._core.backend.stage_vectors(vectors)
                done += len(pending)
                if progress is not None:
                    progress(done, max(total, done))
            await self._core.backend.finish_migration(model.profile)
        except BaseException:
            await self._core.backend.abort_migration()
            raise
        self._core.indexer = indexer
        return done


__all__ = ["Vectors"]
