from memstone.domain.analyzer import analyze, query_terms, searchable_text


def test_cjk_runs_become_unigrams_and_bigrams() -> None:
    assert analyze("中文") == ["u_4e2d", "u_6587", "b_4e2d_6587"]


def test_latin_terms_are_casefolded_and_punctuation_splits() -> None:
    assert analyze("Deploy-with UV, port 5433!") == ["deploy", "with", "uv", "port", "5433"]
    assert analyze("Straße") == ["strasse"]


def test_mixed_scripts_and_nfc() -> None:
    assert analyze("React构建") == ["react", "u_6784", "u_5efa", "b_6784_5efa"]
    assert analyze("cafe\u0301") == analyze("café") == ["café"]


def test_query_syntax_never_survives() -> None:
    assert query_terms('"AND" OR NEAR( * ^ -') == ["and", "or", "near"]
    assert all(t.replace("_", "").isalnum() for t in analyze('col:value ^x "q" (a*) {b} -c +d'))


def test_searchable_text_joins_parts() -> None:
    assert searchable_text("Title", "", "body 中") == "title body u_4e2d"


def test_the_ascii_fast_path_gives_exactly_the_general_rules() -> None:
    from memstone.domain import analyzer

    texts = [
        "We deploy with uv_lock-2.0 (see README.md); don't edit site/!",
        "ALL CAPS and MixedCase42 under_score tab\tnew\nline",
        "",
        "   ...   ",
        "".join(chr(c) for c in range(128)),
    ]
    for text in texts:
        assert analyzer.analyze(text) == _general(text), text


def _general(text: str) -> list[str]:
    """The general (non-ASCII) path of Analyzer v1 on ``text``: a trailing CJK character forces it, then is cut."""
    from memstone.domain import analyzer

    tokens = analyzer.analyze(text + " 中")
    assert tokens[-1] == "u_4e2d"
    return tokens[:-1]
