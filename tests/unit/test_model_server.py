"""The option checks and token counts every model-server client (chat model, embedder, extractor) shares."""

from __future__ import annotations

import pytest

from memstone.chat import OpenAICompatibleChat
from memstone.domain.errors import InvalidInput
from memstone.embedding.http import OpenAICompatibleEmbedder
from memstone.model_server import positive_int, usage_tokens


@pytest.mark.parametrize(
    ("usage", "expected"),
    [
        ({"prompt_tokens": 12}, 12),
        ({"prompt_tokens": 0}, 0),
        ({"prompt_tokens": -3}, 0),
        ({"prompt_tokens": True}, 0),
        ({"prompt_tokens": 1.5}, 0),
        ({"prompt_tokens": "12"}, 0),
        ({}, 0),
        (None, 0),
        ([12], 0),
    ],
)
def test_a_token_count_is_a_non_negative_integer_or_zero(usage: object, expected: int) -> None:
    assert usage_tokens(usage, "prompt_tokens") == expected


@pytest.mark.parametrize("value", [0, -1, True, 2.0, "3", None])
def test_a_positive_integer_option_refuses_anything_else_by_name(value: object) -> None:
    with pytest.raises(InvalidInput, match=r"^batch_size must be a positive integer, got "):
        positive_int("batch_size", value)
    assert positive_int("batch_size", 7) == 7


def test_the_chat_model_and_the_embedder_check_their_counts_alike() -> None:
    with pytest.raises(InvalidInput, match="max_tokens must be a positive integer, got 0"):
        OpenAICompatibleChat("http://127.0.0.1:9/v1", "m", max_tokens=0)
    with pytest.raises(InvalidInput, match="window_chars must be a positive integer, got False"):
        OpenAICompatibleEmbedder("http://127.0.0.1:9/v1", "m", 8, window_chars=False)
