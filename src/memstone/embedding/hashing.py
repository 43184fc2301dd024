"""Dependency-free embedders for tests: a deterministic feature-hashing model and a wrapper that fails on cue.

They live in the package, not under ``tests/``, so the backend conformance suite (``memstone.testing``) can use
them. Neither is meant for real retrieval.
"""

from __future__ import annotations

import hashlib
import math
from functools import lru_cache

from ..domain.analyzer import analyze
from ..domain.errors import BackendUnavailable, InvalidInput
from ..ports import EmbeddingModel, EmbeddingProfile, EmbeddingResult, InferenceUsage
from ._text import check_texts, split_by_chars
from .profiles import hashing_profile

_WORD_WEIGHT = 1.0
_TRIGRAM_WEIGHT = 0.5
_EMPTY_FEATURE = "e:\x00"  # gives the empty text (no tokens) a fixed, non-zero vector


@lru_cache(maxsize=65536)
def _bucket(feature: str, dimension: int) -> tuple[int, float]:
    digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8, person=b"memstone-hash-v1").digest()
    index = int.from_bytes(digest[:6], "big") % dimension
    sign = 1.0 if digest[7] & 1 else -1.0
    return index, sign


def _features(tokens: list[str]) -> list[tuple[str, float]]:
    feats: list[tuple[str, float]] = []
    for tok in tokens:
        feats.append((f"w:{tok}", _WORD_WEIGHT))
        if "_" in tok:  # a CJK unigram/bigram from the analyzer (Latin tokens never contain "_")
            continue
        padded = f"#{tok}#"
        for k in range(len(padded) - 2):
            feats.append((f"c:{padded[k : k + 3]}", _TRIGRAM_WEIGHT))
    return feats


class HashingEmbedder:
    """A deterministic, stdlib-only model: signed feature hashing of words and character trigrams.

    The text goes through the shared analyzer (:func:`memstone.domain.analyzer.analyze`); every token adds
    weight 1 and every character trigram of a Latin token (padded ``#word#``) adds 0.5 to the bucket that
    ``blake2b(feature)`` picks, with a hashed sign; the sum is L2-normalised. Texts that share words get a high
    cosine; unrelated texts land near 0 (with collision noise at small dimensions). The same text always gives
    bit-identical vectors, in any process. ``windows()`` splits at ``window_chars`` characters (sentence
    boundaries preferred) so tests can exercise windowing.
    """

    def __init__(self, dimension: int = 64, *, window_chars: int = 1000) -> None:
        if isinstance(dimension, bool) or not isinstance(dimension, int) or dimension < 2:
            raise InvalidInput(f"dimension must be an integer >= 2, got {dimension!r}")
        if isinstance(window_chars, bool) or not isinstance(window_chars, int) or window_chars < 1:
            raise InvalidInput(f"window_chars must be a positive integer, got {window_chars!r}")
        self._profile = hashing_profile(dimension)
        self._window_chars = window_chars

    @property
    def profile(self) -> EmbeddingProfile:
        return self._profile

    def __repr__(self) -> str:
        return f"HashingEmbedder(dimension={self._profile.dimension}, window_chars={self._window_chars})"

    def windows(self, text: str) -> tuple[str, ...]:
        return split_by_chars(text, self._window_chars)

    def vector(self, text: str) -> tuple[tuple[float, ...], int]:
        """The unit vector of one text and its number of analyzer tokens (synchronous)."""
        dim = self._profile.dimension
        tokens = analyze(text)
        acc = [0.0] * dim
        for feature, weight in _features(tokens):
            index, sign = _bucket(feature, dim)
            acc[index] += sign * weight
        norm = math.hypot(*acc)
        if norm == 0.0:  # no tokens, or features that cancelled out exactly
            index, sign = _bucket(_EMPTY_FEATURE, dim)
            acc = [0.0] * dim
            acc[index] = sign
            norm = 1.0
        return tuple(v / norm for v in acc), len(tokens)

    async def embed(self, texts: tuple[str, ...]) -> EmbeddingResult:
        check_texts(texts)
        if not texts:
            return EmbeddingResult(vectors=())
        vectors: list[tuple[float, ...]] = []
        tokens = 0
        for text in texts:
            vec, n = self.vector(text)
            vectors.append(vec)
            tokens += n
        return EmbeddingResult(vectors=tuple(vectors), usage=InferenceUsage(calls=1, input_tokens=tokens))


class FailingEmbedder:
    """Wraps a model and raises :class:`BackendUnavailable` once ``fail_after`` texts have been embedded in total.

    A call whose texts cross the limit embeds the texts up to the limit through the inner model (so they count,
    as on a real server that died mid-batch), then raises without returning anything; every later call raises
    at once. ``fail_after=0`` fails on the first text. ``embedded`` is the running total.
    """

    def __init__(self, inner: EmbeddingModel, fail_after: int) -> None:
        if isinstance(fail_after, bool) or not isinstance(fail_after, int) or fail_after < 0:
            raise InvalidInput(f"fail_after must be a non-negative integer, got {fail_after!r}")
        self._inner = inner
        self._fail_after = fail_after
        self.embedded = 0
        self.failures = 0

    @property
    def profile(self) -> EmbeddingProfile:
        return self._inner.profile

    @property
    def inner(self) -> EmbeddingModel:
        return self._inner

    def windows(self, text: str) -> tuple[str, ...]:
        return self._inner.windows(text)

    async def embed(self, texts: tuple[str, ...]) -> EmbeddingResult:
        remaining = self._fail_after - self.embedded
        if len(texts) <= remaining:
            result = await self._inner.embed(texts)
            self.embedded += len(texts)
            return result
        if remaining > 0:
            await self._inner.embed(texts[:remaining])
            self.embedded += remaining
        self.failures += 1
        raise BackendUnavailable(
            f"embedding model {self.profile.profile_id} failed after {self._fail_after} texts "
            f"(FailingEmbedder: {len(texts)} requested, {max(remaining, 0)} embedded in this call)"
        )
