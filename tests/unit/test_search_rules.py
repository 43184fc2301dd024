"""The search rules every backend shares: candidate depth, FTS admission, convex and RRF fusion."""

from __future__ import annotations

import pytest

from memstone.domain.analyzer import query_terms
from memstone.domain.errors import InvalidInput
from memstone.domain.search import (
    Candidate,
    admit_dense,
    archived_scores,
    candidate_depth,
    check_query,
    convex_fuse,
    dense_bar,
    dense_score,
    fts_admits,
    fts_required_terms,
    matched_share,
    query_share,
    rrf_fuse,
    searchable,
    support_terms,
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


def _c(e: str) -> Candidate:
    return Candidate("m", e, e + "v")


def test_convex_fusion_scores_lie_in_unit_range_and_carry_their_parts() -> None:
    a, b, c = _c("a"), _c("b"), _c("c")
    fused = convex_fuse([(a, 8.0, 1.0), (b, 4.0, 0.25)], [(c, 0.7), (a, 0.4)], vector_share=0.5, cosine_floor=0.1)
    by = {f.candidate: f for f in fused}
    assert [f.candidate for f in fused] == [a, c, b]
    # a: lexical 8/8 * 1.0, dense (0.4 - 0.1) / 0.9; c: dense only; b: lexical 4/8 * 0.25
    assert abs(by[a].score - (0.5 * 1.0 + 0.5 * (0.3 / 0.9))) < 1e-12
    assert abs(by[c].score - 0.5 * (0.6 / 0.9)) < 1e-12
    assert abs(by[b].score - 0.5 * 0.125) < 1e-12
    assert by[a].ranks == {"fts": 1, "vector": 2} and by[b].ranks == {"fts": 2}
    assert by[a].parts["bm25"] == 8.0 and by[a].parts["coverage"] == 1.0 and by[a].parts["fusion"] == by[a].score
    assert all(0.0 <= f.score <= 1.0 for f in fused)


def test_convex_fusion_weighs_a_one_word_match_of_a_long_query_below_a_close_dense_answer() -> None:
    weak, dense = _c("weak"), _c("dense")
    fused = convex_fuse([(weak, 5.0, 0.2)], [(dense, 0.8)], vector_share=0.5, coverage_power=1.0, cosine_floor=0.1)
    assert fused[0].candidate == dense
    # Without the coverage factor the top lexical candidate is always 1 and outranks it.
    flat = convex_fuse([(weak, 5.0, 0.2)], [(dense, 0.8)], vector_share=0.5, coverage_power=0.0, cosine_floor=0.1)
    assert flat[0].candidate == weak


def test_one_channel_fusion_keeps_that_channels_score_and_order() -> None:
    a, b = _c("a"), _c("b")
    vec = convex_fuse(None, [(a, 0.9), (b, 0.05)], cosine_floor=0.1)
    assert [f.candidate for f in vec] == [a, b] and vec[1].score == 0.0 and abs(vec[0].score - 0.8 / 0.9) < 1e-12
    fts = convex_fuse([(b, 2.0, 1.0), (a, 1.0, 1.0)], None, coverage_power=0.0)
    assert [f.candidate for f in fts] == [b, a] and [f.score for f in fts] == [1.0, 0.5]
    assert convex_fuse([], None) == [] and convex_fuse(None, []) == []


def test_convex_fusion_ties_break_by_ids_and_the_share_is_checked() -> None:
    a, b = _c("a"), _c("b")
    tie = convex_fuse([(b, 1.0, 1.0)], [(a, 1.0)], vector_share=0.5, cosine_floor=0.0)
    assert [f.candidate for f in tie] == [a, b]
    with pytest.raises(ValueError):
        convex_fuse([(a, 1.0, 1.0)], None, vector_share=1.5)


def test_matched_share_and_dense_score() -> None:
    assert matched_share(["deploy", "staging"], {"deploy", "prod"}) == 0.5
    assert matched_share([], {"x"}) == 0.0
    assert dense_score(0.1, 0.1) == 0.0 and dense_score(1.0, 0.1) == 1.0 and dense_score(-0.5, 0.0) == 0.0


@pytest.mark.parametrize(
    "query",
    [pytest.param("", id="empty"), pytest.param("  *  ", id="punctuation"), pytest.param("what is it", id="stopwords")],
)
def test_an_empty_or_all_stopword_query_is_refused(query: str) -> None:
    with pytest.raises(InvalidInput) as err:
        check_query(query)
    assert err.value.hint


def test_a_query_with_one_informative_word_or_cjk_is_accepted() -> None:
    assert check_query("what is the port") == ["what", "is", "the", "port"]
    assert check_query("数据库") == query_terms("数据库")


def test_the_dense_share_follows_the_lexical_channels_confidence_in_the_query() -> None:
    # All the query's words found: BM25 leads; few found: the dense channel leads.
    assert abs(query_share(1.0, low=0.1, high=0.9, pivot=0.4, width=0.02) - 0.1) < 1e-3
    assert abs(query_share(0.2, low=0.1, high=0.9, pivot=0.4, width=0.02) - 0.9) < 1e-3
    assert query_share(0.4, low=0.1, high=0.9, pivot=0.4, width=0.02) == 0.5
    assert query_share(0.3, low=0.1, high=0.9, pivot=0.4, width=0.0) == 0.9
    lexical, dense = _c("lexical"), _c("dense")
    per_query = (0.1, 0.9, 0.4, 0.02)
    # One word of five found: the dense answer wins; every word found: the lexical one does.
    weak = convex_fuse([(lexical, 3.0, 0.2)], [(dense, 0.6)], vector_share=per_query, cosine_floor=0.0)
    assert weak[0].candidate == dense and abs(weak[0].parts["vector_share"] - 0.9) < 1e-3
    strong = convex_fuse([(lexical, 3.0, 1.0)], [(dense, 0.6)], vector_share=per_query, cosine_floor=0.0)
    assert strong[0].candidate == lexical


def test_dense_admission_has_a_floor_and_a_query_level_no_match_bar() -> None:
    a, b = _c("a"), _c("b")
    assert admit_dense([(a, 0.5), (b, 0.05)], floor=0.1) == [(a, 0.5)]
    assert admit_dense([(a, 0.2), (b, 0.15)], floor=0.1, min_top=0.3) == []  # the best match is too weak
    assert admit_dense([(a, 0.35), (b, 0.15)], floor=0.1, min_top=0.3) == [(a, 0.35), (b, 0.15)]
    assert admit_dense([], floor=0.0, min_top=0.3) == []
    # Below the bar, lexical support keeps the dense hits; it is asked for only when the bar is not met.
    assert admit_dense([(a, 0.2), (b, 0.15)], floor=0.1, min_top=0.3, supported=True) == [(a, 0.2), (b, 0.15)]
    asked: list[int] = []
    assert admit_dense([(a, 0.2)], floor=0.1, min_top=0.3, supported=lambda: bool(asked.append(1))) == []
    assert admit_dense([(a, 0.35)], floor=0.1, min_top=0.3, supported=lambda: bool(asked.append(1))) == [(a, 0.35)]
    assert asked == [1]


def test_a_prose_query_gets_the_prose_bar() -> None:
    assert dense_bar(query_terms("when is the database snapshotted"), 0.4, 0.25) == 0.25
    assert dense_bar(query_terms("vorzek plimu tarqen"), 0.4, 0.25) == 0.4


def test_support_terms_are_the_informative_terms_and_prefixes_of_longer_latin_words() -> None:
    assert support_terms(["deployment", "ui", "deploys", "u_4e2d", "abc123def"], 5) == (
        ["deployment", "ui", "deploys", "u_4e2d", "abc123def"],
        ["deplo"],
    )
    assert support_terms(["deployment"], 0) == (["deployment"], [])
    assert support_terms(["merge"], 5) == (["merge"], [])  # no longer than the prefix: exact only


def test_archived_scores_are_on_the_head_hits_scale() -> None:
    # fts: BM25 over the query's best (here a head hit's) times the matched share, in [0, 1].
    ((full, parts), (half, _)) = archived_scores([(2.0, 1.0), (4.0, 0.5)], [{"bm25": 4.0, "coverage": 1.0}])
    assert full == 0.5 and parts == {"bm25": 2.0, "coverage": 1.0, "lexical": 0.5, "fusion": 0.5}
    assert half == 0.5
    # The best BM25 may be an archived one; nothing exceeds 1.
    ((top, _),) = archived_scores([(8.0, 1.0)], [{"bm25": 4.0, "coverage": 1.0}])
    assert top == 1.0
    # hybrid: the lexical channel's weight is 1 - the head hits' dense share...
    ((mixed, parts),) = archived_scores([(4.0, 1.0)], [{"bm25": 4.0, "vector_share": 0.25}], vector_share=0.9)
    assert mixed == 0.75 and parts["vector_share"] == 0.25
    # ... or, with no head hit, the share the per-query rule gives for the best coverage seen.
    ((alone, parts),) = archived_scores([(4.0, 1.0)], [], vector_share=(0.1, 0.9, 0.4, 0.02))
    assert abs(alone - 0.9) < 1e-6 and abs(parts["vector_share"] - 0.1) < 1e-6


def test_searchable_says_what_check_query_accepts() -> None:
    for query in ("", "  *  ", "what is it", "do it"):
        assert not searchable(query)
    for query in ("deploy", "what is the port", "数据库"):
        assert searchable(query) and check_query(query)


def test_matched_share_over_text_equals_the_share_over_its_token_set() -> None:
    import random

    from memstone.domain.search import matched_share, matched_share_in

    rng = random.Random(5)
    words = ["uv", "deploy", "u_4e2d", "b_4e2d_6587", "ci", "cis", "i", "tests", "test"]
    for _ in range(500):
        text = " ".join(rng.choice(words) for _ in range(rng.randint(0, 12)))
        query = list(dict.fromkeys(rng.choice(words) for _ in range(rng.randint(0, 5))))
        assert matched_share_in(query, text) == matched_share(query, set(text.split())), (query, text)
