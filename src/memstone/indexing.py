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
    """Per-profile search calibration: the vector channel's admission and hybrid's convex fusion.

    ``vector_min_cosine``: a vector candidate below it is not admitted; ``vector_min_top``: when the query's best
    cosine is below it and the query has no lexical support in the searched Memories (none of its informative
    terms, nor for ``support_prefix`` > 0 a word sharing their first ``support_prefix`` letters) the dense channel
    admits nothing: a query that matches nothing gets no dense hit (``bench_retrieval.py --parts nonsense``);
    ``vector_min_top_prose`` is that bar for a query written as prose (it holds a stopword). Hybrid
    scores ``(1 - a) * lexical + a * dense`` where the dense share ``a`` follows the lexical channel's confidence
    in the query (domain/search.py ``query_share``): ``share_low`` when the query's words are all found,
    ``share_high`` when few are, a logistic step of ``share_width`` at ``share_pivot`` between;
    ``coverage_power``: how strongly a lexical candidate's score follows the share of the query's informative
    terms it matches. Fitted on the dev halves of ``bench/bench_retrieval.py --parts families`` and reported on
    its held-out halves (docs/benchmarks.md).
    """

    vector_min_cosine: float = 0.2
    vector_min_top: float = -1.0
    vector_min_top_prose: float | None = None  # None: the same as vector_min_top
    support_prefix: int = 0
    share_low: float = 0.5
    share_high: float = 0.5
    share_pivot: float = 0.5
    share_width: float = 0.05
    coverage_power: float = 1.0

    def weights(self) -> dict[str, float]:
        return {
            "vector_min_cosine": self.vector_min_cosine,
            "vector_min_top": self.vector_min_top,
            "vector_min_top_prose": self.vector_min_top
            if self.vector_min_top_prose is None
            else self.vector_min_top_prose,
            "support_prefix": float(self.support_prefix),
            "share_low": self.share_low,
            "share_high": self.share_high,
            "share_pivot": self.share_pivot,
            "share_width": self.share_width,
            "coverage_power": self.coverage_power,
        }

    def share(self) -> tuple[float, float, float, float]:
        return (self.share_low, self.share_high, self.share_pivot, self.share_width)


CALIBRATIONS: Mapping[str, Calibration] = {
    # `bench/bench_retrieval.py --parts families --models minilm-l6-int8 --dialogues 211-360:5`, fitted on the dev
    # halves (docs/benchmarks.md): the cell maximising the worst dev margin of hybrid R@10 over max(fts, vector)
    # across families, ties by mean MRR. The no-match bars and their lexical support: `--parts nonsense` (the
    # cell rejecting >= 99% of the dev pseudo-word queries with the smallest worst dev loss of dense R@10, then
    # the prose bar trading dev off-topic questions against that loss).
    "minilm-l6-int8": Calibration(
        vector_min_cosine=0.0,
        vector_min_top=0.4,
        vector_min_top_prose=0.25,
        support_prefix=5,
        share_low=0.1,
        share_high=0.9,
        share_pivot=0.4,
        share_width=0.02,
        coverage_power=1.0,
    ),
    # Not refitted on the families (issue 15): the same rule as MiniLM's, unmeasured for USE; no no-match bar
    # (its cosines were not measured against nonsense queries).
    "use-multilingual-v3": Calibration(
        vector_min_cosine=0.1, share_low=0.1, share_high=0.9, share_pivot=0.4, share_width=0.02, coverage_power=1.0
    ),
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
