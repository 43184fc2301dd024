"""Typed search calibration (issue 11 item 2, issue 15): named fields, checked, each profile's provenance recorded."""

from __future__ import annotations

import dataclasses

import pytest

from memstone.domain.calibration import Calibration
from memstone.indexing import CALIBRATIONS, HASHING, calibration_for
from memstone.ports import EmbeddingProfile, SearchRequest


def test_out_of_range_numbers_are_refused() -> None:
    with pytest.raises(ValueError, match="share_low"):
        Calibration(share_low=1.5)
    with pytest.raises(ValueError, match="support_prefix"):
        Calibration(support_prefix=-1)


def test_the_prose_bar_falls_back_to_the_word_list_bar() -> None:
    assert Calibration(vector_min_top=0.4).prose_bar == 0.4
    assert Calibration(vector_min_top=0.4, vector_min_top_prose=0.25).prose_bar == 0.25


def test_every_profile_says_where_its_numbers_come_from() -> None:
    for name, cal in CALIBRATIONS.items():
        assert cal.fitted != Calibration().fitted, name
    assert "dev halves only" in CALIBRATIONS["minilm-l6-int8"].fitted
    use = CALIBRATIONS["use-multilingual-v3"]
    assert "dev halves only" in use.fitted and "not refitted" in use.fitted  # its bars fitted, its fusion not


def test_a_request_carries_the_model_free_rules_by_default() -> None:
    request = SearchRequest(query="x", memories=(), limit=1, channels=("fts",))
    assert request.calibration == Calibration()
    assert not hasattr(request, "weights")  # the string-keyed map is gone
    assert {f.name for f in dataclasses.fields(Calibration)} >= {"vector_min_cosine", "share_low", "coverage_power"}


def test_profiles_get_their_own_calibration() -> None:
    minilm = EmbeddingProfile(profile_id="minilm-l6-int8", model="m", dimension=384)
    hashing = EmbeddingProfile(profile_id="hashing-64", model="h", dimension=64)
    other = EmbeddingProfile(profile_id="someone-else", model="x", dimension=8)
    assert calibration_for(minilm) is CALIBRATIONS["minilm-l6-int8"]
    assert calibration_for(hashing) is HASHING
    assert calibration_for(other) == Calibration()
