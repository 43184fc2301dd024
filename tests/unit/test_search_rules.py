"""The search rules every backend shares: candidate depth, FTS admission and RRF fusion."""

from __future__ import annotations

from memstone.domain.search import (
    Candidate,
    candidate_depth,
    fts_admits,
    fts_required_terms,
    rrf_fuse,
)


def test_candidate_depth_is_four_times_the_limit_but_never_below_32() -> None:
    assert [candidate_depth(n) for n in (1, 8, 9, 25)] == [32, 32, 36, 100]


def test_fts_admission_needs_one_term_for_short_queries_and_a_share_of_long_ones() -> None:
    assert fts_required_terms(["deploy"]) == 1
    assert fts_required_terms(["deploy", "staging"]) == 1
    seven = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf"]
    assert fts_required_terms(seven) == 2  # ceil(0.15 * 7)
    assert fts_required_terms(seven, coverage=0.67) == 5  # ceil(0.67 * 7): hybrid's calibrated channel
    assert fts_required_terms(["deploy", "staging"], coverage=0.67) == 1  # short queries are never stricter
    assert fts_admits(seven[:4], {"alpha"}) and not fts_admits(seven[:4], {"alpha"}, coverage=0.67)
    assert fts_admits(seven[:4], {"alpha", "bravo", "charlie"}, coverage=0.67)


def test_rrf_weights_scale_each_channel_and_ties_break_by_ids() -> None:
    a, b, c = (Candidate("m", e, e + "v") for e in ("a", "b", "c"))
    fused = rrf_fuse({"fts": [a, b], "vector": [c, a]})
    assert [f[0] for f in fused] == [a, c, b]  # a: 1/61 + 1/62; c and b: 1/61 and 1/62
    assert fused[0][2] == {"fts": 1, "vector": 2}
    down = rrf_fuse({"fts": [b], "vector": [c]}, weights={"fts": 1.0, "vector": 0.1})
    assert [f[0] for f in down] == [b, c] and abs(down[1][1] - 0.1 / 61) < 1e-12
    tie = rrf_fuse({"fts": [c], "vector": [b]})
    assert [f[0] for f in tie] == [b, c]  # equal scores: memory id, then entry id
