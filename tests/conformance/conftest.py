"""``engine_url``: a fresh store URL on each engine (SQLite file, PostgreSQL database) for engine-neutral tests."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(params=["sqlite", "postgresql"])
def engine_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'm.db'}"
    url: str = request.getfixturevalue("postgres_url")  # skipped (or failed, in CI) without the server
    return url
