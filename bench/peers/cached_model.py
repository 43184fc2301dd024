"""memstone's EmbeddingModel port around its real MiniLM, serving the embedding cache's vectors in bulk loads only.

``compare.py --embed-cache`` (see ``embcache.py``). The memstone adapter passes this object to
``memstone.open_service(url, embedding=...)``: ``profile``, ``windows`` and everything else are the real model's
(so the store records the real ``minilm-l6-int8`` profile and windows long texts exactly as without the cache),
and ``embed`` returns the staged cached vectors when the call happens inside ``write_bulk`` and every text of
the call is staged. Any other call (single writes, updates, queries, a partly staged batch) goes to the real
model. The staged vectors are float32, as memstone's own ``MiniLMEmbedder`` returns them, and were computed by
the same model (memstone's, or ``embedder.py``, which is bit-identical to it), so the store holds the same
vectors either way.
"""

from __future__ import annotations

from embcache import BulkStage
from embedder import MAX_TOKENS, MODEL_SHA256


class CachedBulkModel:
    def __init__(self, inner, stage: BulkStage) -> None:
        from memstone.embedding import minilm

        if inner.profile.profile_id != "minilm-l6-int8" or (minilm.MODEL_SHA256, minilm.MAX_TOKENS) != (
            MODEL_SHA256,
            MAX_TOKENS,
        ):
            raise RuntimeError("the embedding cache holds minilm-l6-int8 vectors; this memstone model differs")
        self.inner = inner
        self.stage = stage

    @property
    def profile(self):
        return self.inner.profile

    def windows(self, text: str) -> tuple[str, ...]:
        return self.inner.windows(text)

    async def embed(self, texts: tuple[str, ...]):
        staged = self.stage.take(list(texts))  # None unless inside write_bulk with every text staged
        if staged is None:
            return await self.inner.embed(texts)
        from memstone.ports import EmbeddingResult

        return EmbeddingResult(vectors=tuple(tuple(row) for row in staged.tolist()))

    def __getattr__(self, name: str):  # threads, load, token_count, ... of the real model
        return getattr(self.inner, name)

    def __repr__(self) -> str:
        return f"CachedBulkModel({self.inner!r})"
