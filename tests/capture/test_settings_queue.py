"""Capture settings: per-scope modes, validated by name, and their JSON form (the queue: tests/bundle/)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memstone import InvalidInput
from memstone.capture import CaptureSettings


def test_settings_round_trip_and_defaults(tmp_path: Path) -> None:
    path = tmp_path / "x.capture.json"
    assert CaptureSettings.load(path) == CaptureSettings()  # a missing file means the defaults
    settings = CaptureSettings(record_sources="when_used", working_notes=False).with_mode("memstone://orgs/a", "off")
    settings = settings.with_mode(None, "review")
    settings.save(path)
    assert CaptureSettings.load(path) == settings
    assert settings.mode_for("memstone://orgs/a") == "off" and settings.mode_for(None) == "review"
    assert json.loads(path.read_text())["modes"] == {"memstone://orgs/a": "off"}


@pytest.mark.parametrize(
    "data",
    [
        pytest.param({"default_mode": "sometimes"}, id="bad-mode"),
        pytest.param({"modes": {"memstone://orgs/a": "maybe"}}, id="bad-scope-mode"),
        pytest.param({"colour": "blue"}, id="unknown-key"),
        pytest.param({"record_sources": "never"}, id="bad-record"),
        pytest.param({"extractor": {"model": "m"}}, id="extractor-without-url"),
        pytest.param({"extractor": {"base_url": "http://x", "model": "m", "timeout": -1}}, id="bad-timeout"),
    ],
)
def test_bad_settings_are_refused_by_name(data: dict[str, object]) -> None:
    with pytest.raises(InvalidInput):
        CaptureSettings.from_dict(data)


def test_invalid_settings_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_text("{nope")
    with pytest.raises(InvalidInput):
        CaptureSettings.load(path)
