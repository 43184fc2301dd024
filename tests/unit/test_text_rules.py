"""Text validation of Analyzer-facing input: lone surrogates are refused with the project's error."""

from __future__ import annotations

import pytest

from memstone.domain.errors import InvalidInput
from memstone.domain.rules import normalize_text


@pytest.mark.parametrize("text", ["bad \ud800 half", "\udfff", "ok then \udc80"])
def test_a_lone_surrogate_is_refused(text: str) -> None:
    with pytest.raises(InvalidInput, match="lone surrogate"):
        normalize_text(text)


def test_valid_unicode_passes_unchanged_but_trimmed() -> None:
    assert normalize_text("  中文 and emoji 🙂  ") == "中文 and emoji 🙂"
