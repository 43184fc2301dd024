"""``CaseFree``: a ``(?i)`` word pattern run as its case-sensitive twin over an ASCII text's lower() (issue 13)."""

from __future__ import annotations

import re

import pytest

from memstone.domain import secrets
from memstone.domain.secret_formats import CaseFree

TEXTS = [
    "The API_KEY and the Password are in the vault; AWS creds rotate weekly.",
    "my passwd: hunter2, the SECRET token is next to the Kennwort",
    "no words of note here, only prose about lunch",
    "Clé du wifi: xyz, пароль: abc, パスワード: def",  # not ASCII: the pattern itself runs
    "paſsword and the \u212aey",  # long s and Kelvin sign: (?i) folds them to s and k
]


@pytest.mark.parametrize("name", ["_CREDENTIAL_WORD", "_PASSWORD_WORD", "_AWS_CONTEXT"])
def test_the_twin_finds_the_patterns_spans(name: str) -> None:
    free: CaseFree = getattr(secrets, name)
    for text in TEXTS:
        expected = [m.span() for m in free.pattern.finditer(text)]
        assert [m.span() for m in free.finditer(text, text.lower())] == expected
        assert (free.search(text) is None) == (free.pattern.search(text) is None)


@pytest.mark.parametrize(
    "pattern",
    [
        r"key|token",  # not (?i)
        r"(?i)key(?-i:X)",  # a case-sensitive group would be lowered
        r"(?i)(?P<Name>key)",  # a group name would be lowered
        r"(?i)\u017fecret",  # an escaped code point is not checked
        r"(?i)[ā-ž]ecret",  # a range with a non-ASCII end (its inside is not checked)
        r"(?i)paſs",  # ſ matches s by case folding
        "(?i)\u212aey",  # the Kelvin sign matches k
    ],
)
def test_a_pattern_without_a_safe_twin_is_refused(pattern: str) -> None:
    with pytest.raises(ValueError):
        CaseFree(pattern)


def test_uppercase_literals_are_lowered_and_escapes_kept() -> None:
    free = CaseFree(r"(?i)\bAKIA\S+|\Dx")
    assert free.twin.pattern == r"\bakia\S+|\Dx"
    assert [m.span() for m in free.finditer("id AKIAXYZ 7x", "id akiaxyz 7x")] == [
        m.span() for m in re.finditer(r"(?i)\bAKIA\S+|\Dx", "id AKIAXYZ 7x")
    ]
