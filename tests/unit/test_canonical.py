import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memstone.domain.canonical import ENTRY_CONTENT_TAG, canonical_json, canonical_json_floatless, tagged_sha256
from memstone.domain.errors import InvalidInput
from memstone.domain.ids import EntryId, MemoryId, SourceId
from memstone.domain.model import ArtifactRef, EntryContent, Relation


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param({"b": 1, "a": [True, None, "x"]}, '{"a":[true,null,"x"],"b":1}', id="sorted-keys"),
        pytest.param({"\u20ac": 1, "\r": 2, "1": 3}, '{"\\r":2,"1":3,"€":1}', id="utf16-key-order"),
        pytest.param("\u0007é\n", '"\\u0007é\\n"', id="escapes"),
        pytest.param(1e21, "1e+21", id="big-exponent"),
        pytest.param(1e-7, "1e-7", id="small-exponent"),
        pytest.param(123.456, "123.456", id="decimal"),
        pytest.param(-0.0, "0", id="negative-zero"),
        pytest.param(4.5e-5, "0.000045", id="small-plain"),
        pytest.param(333333333.3333333, "333333333.3333333", id="rfc-sample"),
    ],
)
def test_jcs_vectors(value: object, expected: str) -> None:
    assert canonical_json(value) == expected


def test_rfc8785_key_sorting_sample() -> None:
    # The RFC 8785 §3.2.3 example: keys sorted by UTF-16 code units.
    data = {
        "\u20ac": "Euro Sign",
        "\r": "Carriage Return",
        "\ufb33": "Hebrew Letter Dalet With Dagesh",
        "1": "One",
        "\U0001f600": "Emoji: Grinning Face",
        "\u0080": "Control",
        "\u00f6": "Latin Small Letter O With Diaeresis",
    }
    keys = list(json.loads(canonical_json(data)))
    assert keys == ["\r", "1", "\u0080", "\u00f6", "\u20ac", "\U0001f600", "\ufb33"]


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf, {"x": math.nan}, object()])
def test_refuses_non_json(bad: object) -> None:
    with pytest.raises(InvalidInput):
        canonical_json(bad)


_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)
_json = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | _text,
    lambda inner: (
        st.lists(inner, max_size=5) | st.dictionaries(st.text("abcdefghij_", min_size=1, max_size=8), inner, max_size=5)
    ),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(_json)
def test_fast_encoder_equals_jcs_on_floatless_values(value: object) -> None:
    assert canonical_json_floatless(value) == canonical_json(value)


_refs = st.builds(ArtifactRef, memory_id=st.builds(MemoryId, _text), revision=st.integers(1, 2**40))
_relations = st.builds(Relation, kind=_text, target=st.builds(EntryId, _text))
_content = st.builds(
    EntryContent,
    kind=_text,
    text=_text,
    title=st.none() | _text,
    tags=st.lists(_text, max_size=3).map(tuple),
    slug=st.none() | _text,
    important=st.booleans(),
    mandatory=st.booleans(),
    sources=st.lists(st.builds(SourceId, _text), max_size=3).map(tuple),
    artifacts=st.lists(_refs, max_size=2).map(tuple),
    relations=st.lists(_relations, max_size=2).map(tuple),
)


@settings(max_examples=300, deadline=None)
@given(_content)
def test_entry_content_text_equals_jcs_of_its_canonical_object(content: EntryContent) -> None:
    # The field-by-field writer behind every entry content hash (writes and each search hit's re-check) must give
    # the very text RFC 8785 gives for the canonical object, for the usual content and for every other shape.
    assert content.canonical_text() == canonical_json(content.canonical())


@pytest.mark.parametrize(
    "text", ["plain", 'quote " and \\ backslash', "ctl \u0007\b\f\n\r\t", "é € 😀", "\u2028\u2029", ""]
)
def test_entry_content_hash_is_the_tagged_hash_of_jcs(text: str) -> None:
    content = EntryContent(kind="fact", text=text or "x", title=text or None, tags=("a", text), slug=text or None)
    expected = tagged_sha256(ENTRY_CONTENT_TAG, canonical_json(content.canonical()).encode("utf-8"))
    assert content.content_hash == expected


def test_every_code_point_is_escaped_as_json_dumps_escapes_it() -> None:
    """``_string`` calls the encoder function json.dumps(ensure_ascii=False) uses for a str, without building an
    encoder per string: the same text for every code point but the lone surrogates it refuses."""
    chars = [chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]
    for i in range(0, len(chars), 4096):
        text = "".join(chars[i : i + 4096])
        assert canonical_json(text) == json.dumps(text, ensure_ascii=False)
