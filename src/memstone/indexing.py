"""The vector side of writes and searches: what to embed, outside every transaction, and how.

The service hands this module the entry versions a write projects; it returns validated unit vectors per
version (one per model window, so a long text never loses its tail), or nothing when the model is missing or
fails — a write is never lost to the model. Backfill and re-embedding (model migration) live here too.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from .domain.errors import MemstoneError
from .domain.ids import EntryVersionId
from .domain.model import EntryVersion
from .domain.rules import check_vector
from .ports import EmbeddingModel, EmbeddingProfile

log = logging.getLogger("memstone.indexing")

Progress = Callable[[int, int], None]


@dataclass(frozen=True, slots=True, kw_only=True)
class Calibration:
    """Per-profile search calibration: the vector admission threshold and RRF channel weights.

    Chosen by ``bench/bench_retrieval.py``; see docs/benchmarks.md for the figures behind each value.
    """

    vector_min_cosine: float = 0.2
    fts_weight: float = 1.0
    vector_weight: float = 1.0
    # The share of a long query's informative terms an FTS candidate must match inside a *hybrid* search
    # (None: the RFC's FTS admission, as in `fts` mode). `fts` mode itself never uses it.
    hybrid_fts_coverage: float | None = None

    def weights(self) -> dict[str, float]:
        out = {"fts": self.fts_weight, "vector": self.vector_weight, "vector_min_cosine": self.vector_min_cosine}
        if self.hybrid_fts_coverage is not None:
            out["hybrid_fts_coverage"] = self.hybrid_fts_coverage
        return out


CALIBRATIONS: Mapping[str, Calibration] = {
    # `bench/bench_retrieval.py --parts quality,sweep --models minilm-l6-int8` (docs/retrieval-benchmark.md): the
    # cell maximising, over MemoryCode/paraphrase/paraphrase+2k, the worst of dR@5, dR@10, dMRR against fts.
    # Hybrid = fts on MemoryCode (R@10 0.975 vs 0.975, MRR 0.877 vs 0.877; weight 1.0 gave 0.967 / 0.848),
    # paraphrase R@10 0.984 vs fts 0.219. Cosine 0.1 (was 0.25) lifts vector R@10 on paraphrase 0.875 -> 0.984.
    #
    # Then the what-if of the same benchmark (FTS admission inside hybrid): with a 2/3 coverage for the FTS
    # channel of hybrid and vector weight 0.1, MemoryCode 0.927 / 0.977 / 0.878 (R@5 / R@10 / MRR) against FTS
    # 0.926 / 0.975 / 0.877, paraphrase R@10 0.984 and paraphrase+2k 0.766 (vector alone: 0.984, 0.766; the
    # weight-0.02 hybrid gave 0.391 there): weak single-term FTS matches no longer outrank the dense answers.
    "minilm-l6-int8": Calibration(vector_min_cosine=0.1, fts_weight=1.0, vector_weight=0.1, hybrid_fts_coverage=0.67),
    # Same rule, `... --models use-multilingual-v3 --dialogues 211-360:5`: hybrid = fts on MemoryCode (R@10 0.973
    # vs 0.973, MRR 0.858 vs 0.857; weight 1.0 gave 0.942 / 0.740), paraphrase R@10 0.938 vs fts 0.219. Cosine 0.1
    # (was 0.2) lifts vector R@10 on paraphrase 0.797 -> 0.938.
    "use-multilingual-v3": Calibration(vector_min_cosine=0.1, fts_weight=1.0, vector_weight=0.02),
}


def calibration_for(profile: EmbeddingProfile) -> Calibration:
    if profile.profile_id.startswith("hashing-"):
        return Calibration(vector_min_cosine=0.05)
    return CALIBRATIONS.get(profile.profile_id, Calibration())


def embedding_text(version: EntryVersion) -> str:
    """What is embedded for an entry: its title and text."""
    c = version.content
    return f"{c.title}\n\n{c.text}" if c.title else c.text


class VectorIndexer:
    """Computes vectors for entry versions and queries with one fixed-profile model."""

    def __init__(self, model: EmbeddingModel) -> None:
        self.model = model
        self.profile = model.profile
        self.calibration = calibration_for(model.profile)
        self.last_error: str | None = None

    async def vectors_for(
        self, versions: Sequence[EntryVersion]
    ) -> dict[EntryVersionId, tuple[tuple[float, ...], ...]]:
        """Unit vectors per version (one per window), or {} when the model is unavailable or fails."""
        if not versions:
            return {}
        texts: list[str] = []
        spans: list[tuple[EntryVersionId, int, int]] = []
        try:
            for v in versions:
                windows = self.model.windows(embedding_text(v)) or (embedding_text(v),)
                spans.append((v.entry_version_id, len(texts), len(texts) + len(windows)))
                texts.extend(windows)
            result = await self.model.embed(tuple(texts))
            if len(result.vectors) != len(texts):
                raise ValueError(f"model returned {len(result.vectors)} vectors for {len(texts)} texts")
            for vec in result.vectors:
                check_vector(vec, dimension=self.profile.dimension)
        except (MemstoneError, ValueError, OSError, RuntimeError, ImportError) as exc:
            # Trigger: the model is missing, failing, or returned bad vectors.
            # Why: no write may be lost to the model, and no stale or placeholder vector may be stored.
            # Outcome: this write commits with FTS only; `memstone embed --backfill` fills the gap later.
            self.last_error = f"{type(exc).__name__}: {exc}"
            log.warning("embedding failed; committing without vectors: %s", self.last_error)
            return {}
        return {vid: tuple(result.vectors[a:b]) for vid, a, b in spans}

    async def query_vector(self, query: str) -> tuple[float, ...]:
        """The query's vector (the first window: queries are short)."""
        windows = self.model.windows(query) or (query,)
        result = await self.model.embed((windows[0],))
        (vec,) = result.vectors
        check_vector(vec, dimension=self.profile.dimension)
        return vec
