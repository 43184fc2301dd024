"""Search semantics shared by every backend: candidate depth, per-channel admission, RRF and tie-breaks."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import NamedTuple

from .analyzer import informative_terms

RRF_K = 60
FTS_MIN_TERMS = 1  # the fixed baseline of matched informative terms for queries of more than two terms
FTS_MIN_COVERAGE = 0.15  # and the share of informative terms a hit must match


def candidate_depth(limit: int) -> int:
    """How many candidates each channel fetches: max(limit · 4, 32)."""
    return max(limit * 4, 32)


def fts_required_terms(terms: Sequence[str], coverage: float = FTS_MIN_COVERAGE) -> int:
    """Matched informative terms an FTS candidate needs to be admitted.

    A query of one or two informative terms needs one; a longer one needs ``ceil(coverage · n)`` of its ``n``.
    ``coverage`` is FTS_MIN_COVERAGE, except for the FTS channel of a hybrid search whose profile calibration
    sets a stricter one (there, weak lexical matches would crowd out the dense channel's answers).
    """
    informative = informative_terms(list(terms))
    n = len(informative)
    if n <= 2:
        return 1
    return max(FTS_MIN_TERMS, math.ceil(coverage * n))


def fts_admits(query_terms: Sequence[str], candidate_tokens: set[str], coverage: float = FTS_MIN_COVERAGE) -> bool:
    """Whether a candidate matches enough informative query terms."""
    informative = informative_terms(list(query_terms))
    matched = sum(1 for t in informative if t in candidate_tokens)
    return matched >= fts_required_terms(query_terms, coverage)


def l2_to_cosine(distance: float) -> float:
    """Cosine similarity of two unit vectors from their L2 distance."""
    return 1.0 - (distance * distance) / 2.0


class Candidate(NamedTuple):
    """A channel candidate: the anchor key of one entry version (a tuple: cheap to build, hash and compare)."""

    memory_id: str
    entry_id: str
    entry_version_id: str


def rrf_fuse(
    channels: Mapping[str, Sequence[Candidate]], *, weights: Mapping[str, float] | None = None
) -> list[tuple[Candidate, float, dict[str, int]]]:
    """Reciprocal rank fusion: score = Σ w_c / (60 + rank_c). Ties break by memory id, entry id, version id.

    With no weights every channel weighs 1, which is the RFC's formula exactly.
    """
    if len(channels) == 1:
        # One channel: its own order is the RRF order (scores strictly decrease with rank).
        ((name, cands),) = channels.items()
        w = 1.0 if weights is None else float(weights.get(name, 1.0))
        out: list[tuple[Candidate, float, dict[str, int]]] = []
        seen: set[Candidate] = set()
        for cand in cands:
            if cand not in seen:
                seen.add(cand)
                out.append((cand, w / (RRF_K + len(out) + 1), {name: len(out) + 1}))
        return out
    scores: dict[Candidate, float] = {}
    ranks: dict[Candidate, dict[str, int]] = {}
    for name, cands in channels.items():
        w = 1.0 if weights is None else float(weights.get(name, 1.0))
        for rank, cand in enumerate(cands, start=1):
            if name in ranks.get(cand, {}):
                continue
            scores[cand] = scores.get(cand, 0.0) + w / (RRF_K + rank)
            ranks.setdefault(cand, {})[name] = rank
    ordered = sorted(
        scores.items(),
        key=lambda kv: (
            -kv[1],
            kv[0].memory_id.encode("utf-8"),
            kv[0].entry_id.encode("utf-8"),
            kv[0].entry_version_id.encode("utf-8"),
        ),
    )
    return [(cand, score, ranks[cand]) for cand, score in ordered]
