"""Shared CLI fixtures."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from memstone.cli.main import cli

JsonRun = Callable[..., dict[str, object]]


@pytest.fixture
def json_cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[[str], JsonRun]:
    """``json_cli(url)``: a runner of ``memstone --url URL ARGS --json`` in a clean environment (no MEMSTONE_*
    variables, HOME in the test's folder) that checks the exit code (``code=``) and returns the parsed JSON."""
    for name in ("MEMSTONE_URL", "MEMSTONE_SCOPE", "MEMSTONE_AUTHOR", "MEMSTONE_EMBEDDING"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))

    def bind(url: str) -> JsonRun:
        def invoke(*args: str, code: int = 0) -> dict[str, object]:
            result = CliRunner().invoke(cli, ["--url", url, *args, "--json"], catch_exceptions=False)
            assert result.exit_code == code, result.output
            out = json.loads(result.stdout)
            assert isinstance(out, dict)
            return out

        return invoke

    return bind
