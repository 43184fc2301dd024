"""Search semantics shared by every backend: candidate depth, per-channel admission, fusion and tie-breaks.

Two fusions (issue 15). ``convex`` (the default) puts each channel on [0, 1] and adds them with a per-profile
share: the lexical score of a candidate is its BM25 over the query's best BM25, times the share of the query's
informative terms it matches (so a one-word match of a long question weighs little: the channel's own
confidence, per candidate); the dense score is the cosine above the profile's floor, rescaled to [0, 1]. The
hybrid score is ``(1 - a) * lexical + a * dense``; one-channel modes use that channel's score. Every score is in
[0, 1] and comes with its parts (``bm25``, ``coverage``, ``lexical``, ``cosine``, ``dense``, ``fusion``).
``rrf`` is the RFC's reciprocal rank fusion with k = 60, kept for conformance.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Literal, NamedTuple

from .analyzer import STOPWORDS, informative_terms, query_terms
from .calibration import FTS_COVERAGE_POWER
from .errors import InvalidInput

RRF_K = 60
FTS_MIN_TERMS = 1  # the fixed baseline of matched informative terms for queries of more than two terms
FTS_MIN_COVERAGE = 0.15  # and the share of informative terms a hit must match


def check_query(query: str) -> list[str]:
    """The query's analyzed terms; an empty query, or one of stopwords only, is refused: it matches nothing."""
    terms = query_terms(query)
    if not terms:
        raise InvalidInput("the search query is empty", hint="pass the words to search for")
    if all(t in STOPWORDS for t in terms):
        raise InvalidInput(
            f"the search query {query.strip()!r} has only stopwords",
            hint="add a word that names what you are looking for",
        )
    return terms


def searchable(query: str) -> bool:
    """Whether :func:`check_query` accepts ``query`` (callers with free text skip a search that would be refused)."""
    terms = query_terms(query)
    return bool(terms) and not all(t in STOPWORDS for t in terms)


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
    ordered = sorted((-score, cand) for cand, score in scores.items())  # ties: ids in UTF-8 (= code point) order
    return [(cand, -neg, ranks[cand]) for neg, cand in ordered]


Fusion = Literal["convex", "rrf"]


class Fused(NamedTuple):
    """One fused candidate: its score in [0, 1], its 1-based rank per channel and the parts of its score."""

    candidate: Candidate
    score: float
    ranks: dict[str, int]
    parts: dict[str, float]


def matched_share(informative: Sequence[str], tokens: set[str]) -> float:
    """The share of a query's informative terms a candidate's tokens contain (0 for an empty query)."""
    if not informative:
        return 0.0
    return sum(1 for t in informative if t in tokens) / len(informative)


def matched_share_in(informative: Sequence[str], searchable_text: str) -> float:
    """:func:`matched_share` over a projection's searchable text (tokens joined by single spaces), without
    splitting it: a term is matched when it stands between spaces (a few substring scans instead of a set of
    every token of a long entry)."""
    return matched_shares(informative, (searchable_text,))[0]


def matched_shares(informative: Sequence[str], searchable_texts: Sequence[str]) -> list[float]:
    """:func:`matched_share_in` of each text, with the query's needles built once."""
    if not informative:
        return [0.0] * len(searchable_texts)
    needles = [f" {t} " for t in informative]
    n = len(needles)
    out = []
    for text in searchable_texts:
        padded = f" {text} "
        hits = 0
        for needle in needles:
            if needle in padded:
                hits += 1
        out.append(hits / n)
    return out


SUPPORT_PREFIX_LETTERS = "abcdefghijklmnopqrstuvwxyz"


def support_terms(informative: Sequence[str], prefix: int) -> tuple[list[str], list[str]]:
    """What lexical support looks for: the query's informative terms, and (``prefix`` > 0) the first ``prefix``
    letters of each longer all-letter Latin term, so ``merges`` is supported by a stored ``merged``."""
    exact = list(dict.fromkeys(informative))
    prefixes: list[str] = []
    if prefix > 0:
        prefixes = sorted(
            {t[:prefix] for t in exact if len(t) > prefix and all(ch in SUPPORT_PREFIX_LETTERS for ch in t)}
        )
    return exact, prefixes


def dense_bar(terms: Sequence[str], min_top: float, min_top_prose: float) -> float:
    """The no-match bar of a query's best cosine: ``min_top_prose`` for a query written as prose (it holds a
    stopword: "when is the database snapshotted"), ``min_top`` for a bare list of words ("vorzek plimu")."""
    return min_top_prose if any(t in STOPWORDS for t in terms) else min_top


def admit_dense(
    candidates: Sequence[tuple[Candidate, float]],
    *,
    floor: float,
    min_top: float = -1.0,
    supported: bool | Callable[[], bool] = False,
) -> list[tuple[Candidate, float]]:
    """The vector channel's admission: every candidate at or above ``floor``, in order, unless the query matches
    nothing: its best cosine is below ``min_top`` (no strong semantic support) and it has no lexical support
    either (``supported``: no word of the query, nor a word sharing its first letters, occurs in the searched
    Memories; a callable is asked only when the best cosine is below the bar). That is the calibrated "no match"
    of issue 15: a nonsense query gets no dense hit rather than the least bad ones."""
    if not candidates:
        return []
    if max(c for _, c in candidates) < min_top and not (supported() if callable(supported) else supported):
        return []
    return [(cand, c) for cand, c in candidates if c >= floor]


def dense_score(cosine: float, floor: float) -> float:
    """A cosine on [0, 1]: 0 at or below the profile's floor, 1 for an identical direction."""
    if floor >= 1.0:
        return 0.0
    return min(1.0, max(0.0, (cosine - floor) / (1.0 - floor)))


def _order(scored: Mapping[Candidate, float]) -> list[Candidate]:
    # Score descending, then memory id, entry id, version id: a Candidate is a tuple of those strings, and code
    # point order of str is the UTF-8 byte order the RFC's tie-break names, so tuples compare as required.
    return [c for _, c in sorted((-score, c) for c, score in scored.items())]


def query_share(best_coverage: float, *, low: float, high: float, pivot: float, width: float) -> float:
    """The dense channel's share for one query, from the lexical channel's confidence in it.

    ``best_coverage`` is the largest share of the query's informative terms any lexical candidate matches: a
    query whose words are all found (a convention, a name, a quoted value) leans on BM25 (``low``), one whose words
    are mostly absent (a paraphrase) leans on the dense channel (``high``); a logistic step of ``width`` at
    ``pivot`` joins the two.
    """
    if width <= 0:
        return low if best_coverage >= pivot else high
    z = (pivot - best_coverage) / width
    return low + (high - low) / (1.0 + math.exp(-max(-60.0, min(60.0, z))))


def convex_fuse(
    fts: Sequence[tuple[Candidate, float, float]] | None,
    vector: Sequence[tuple[Candidate, float]] | None,
    *,
    vector_share: float | tuple[float, float, float, float] = 0.5,
    coverage_power: float = 1.0,
    cosine_floor: float = 0.0,
) -> list[Fused]:
    """Convex fusion of admitted candidates; a channel that is ``None`` is not part of the search.

    ``fts``: (candidate, BM25 >= 0, matched share of informative terms) in the engine's order; ``vector``:
    (candidate, cosine) nearest first. Only one channel given: that channel's score, in its own order. Both:
    ``(1 - a) * lexical + a * dense``, where ``a`` is ``vector_share``, or per query :func:`query_share` of the
    best lexical coverage when it is given as (low, high, pivot, width); a candidate absent from a channel gets 0
    from it. Ties break by memory id, entry id, version id (UTF-8), as RRF's do.
    """
    if isinstance(vector_share, tuple):
        low, high, pivot, width = vector_share
        best = max((share for _, _, share in fts or ()), default=0.0)
        vector_share = query_share(best, low=low, high=high, pivot=pivot, width=width)
    if not 0.0 <= vector_share <= 1.0:
        raise ValueError(f"vector_share must be in [0, 1], got {vector_share}")
    if vector is None:
        return list(lexical_fused(fts or (), coverage_power))
    lexical: dict[Candidate, float] = {}
    dense: dict[Candidate, float] = {}
    ranks: dict[Candidate, dict[str, int]] = {}
    parts: dict[Candidate, dict[str, float]] = {}
    if fts:
        top = max(max(bm25 for _, bm25, _ in fts), 0.0)
        for rank, (cand, bm25, share) in enumerate(fts, start=1):
            if cand in lexical:
                continue
            rel = (bm25 / top if top > 0 else 1.0) * (share**coverage_power if coverage_power else 1.0)
            lex = 1.0 if rel > 1.0 else (rel if rel > 0.0 else 0.0)
            lexical[cand] = lex
            ranks[cand] = {"fts": rank}
            parts[cand] = {"bm25": bm25, "coverage": share, "lexical": lex}
    if vector:
        for rank, (cand, cosine) in enumerate(vector, start=1):
            if cand in dense:
                continue
            dense[cand] = d = dense_score(cosine, cosine_floor)
            got = ranks.get(cand)
            if got is None:
                ranks[cand] = {"vector": rank}
                parts[cand] = {"cosine": cosine, "dense": d}
            else:
                got["vector"] = rank
                parts[cand].update(cosine=cosine, dense=d)
    both = fts is not None and vector is not None
    if both:
        scores = {c: (1.0 - vector_share) * lexical.get(c, 0.0) + vector_share * dense.get(c, 0.0) for c in ranks}
        ordered = _order(scores)
    elif fts is not None:
        scores = lexical
        ordered = _order(scores) if coverage_power else list(lexical)
    else:
        scores = dense
        ordered = list(dense)  # nearest first already; the dense score is monotone in the cosine
    out: list[Fused] = []
    for cand in ordered:
        p = parts[cand]
        score = scores[cand]
        p["fusion"] = score
        if both:
            p["vector_share"] = vector_share
        out.append(Fused(cand, score, ranks[cand], p))
    return out


def lexical_fused(fts: Sequence[tuple[Candidate, float, float]], coverage_power: float) -> Iterator[Fused]:
    """:func:`convex_fuse` of the lexical channel alone, best first: the same scores, parts and order. The scores
    are computed and sorted at once; each :class:`Fused` (and its parts) is built only when it is taken, so a
    search that returns its first ``limit`` candidates builds no more."""
    if not fts:
        return
    top = max(max(bm25 for _, bm25, _ in fts), 0.0)
    seen: set[Candidate] = set()
    scored: list[tuple[float, Candidate, int, float, float]] = []
    for rank, (cand, bm25, share) in enumerate(fts, start=1):
        if cand in seen:
            continue
        seen.add(cand)
        rel = (bm25 / top if top > 0 else 1.0) * (share**coverage_power if coverage_power else 1.0)
        lex = 1.0 if rel > 1.0 else (rel if rel > 0.0 else 0.0)
        scored.append((-lex, cand, rank, bm25, share))
    if coverage_power:
        scored.sort()  # score descending, then the ids (each candidate once, so no two entries tie past them)
    for neg, cand, rank, bm25, share in scored:
        yield Fused(cand, -neg, {"fts": rank}, {"bm25": bm25, "coverage": share, "lexical": -neg, "fusion": -neg})


def archived_scores(
    matches: Sequence[tuple[float, float]],
    head_parts: Sequence[Mapping[str, float]],
    *,
    coverage_power: float = FTS_COVERAGE_POWER,
    vector_share: float | tuple[float, float, float, float] | None = None,
) -> list[tuple[float, dict[str, float]]]:
    """Scores of archive-only matches on the head hits' scale, with their parts.

    ``matches``: (BM25 >= 0, matched share of informative terms) per archived version; ``head_parts``: the
    contributions of the search's head hits. An archived version is scored as a head hit found by the lexical
    channel alone: BM25 over the query's best BM25 (among head and archived matches) times its share, times the
    lexical channel's weight ``1 - a`` when the search fused a dense channel (``vector_share``: the head hits'
    own ``a`` is used when they carry one, else ``a`` of the best coverage seen, as :func:`convex_fuse` does).
    """
    best = max([bm25 for bm25, _ in matches] + [p.get("bm25", 0.0) for p in head_parts] + [0.0])
    a = 0.0
    if vector_share is not None:
        shared = [p["vector_share"] for p in head_parts if "vector_share" in p]
        if shared:
            a = shared[0]
        elif isinstance(vector_share, tuple):
            low, high, pivot, width = vector_share
            coverage = max([s for _, s in matches] + [p.get("coverage", 0.0) for p in head_parts] + [0.0])
            a = query_share(coverage, low=low, high=high, pivot=pivot, width=width)
        else:
            a = vector_share
    out = []
    for bm25, share in matches:
        lexical = min(1.0, max(0.0, (bm25 / best if best > 0 else 1.0) * share**coverage_power))
        parts = {"bm25": bm25, "coverage": share, "lexical": lexical}
        score = (1.0 - a) * lexical
        if vector_share is not None:
            parts["vector_share"] = a
        parts["fusion"] = score
        out.append((score, parts))
    return out
