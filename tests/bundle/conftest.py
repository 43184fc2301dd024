"""``store_url``: a fresh store on each engine (SQLite file, PostgreSQL, OceanBase on seekdb) for the store bundle.

OceanBase opens a store in ~5 s: its tests are few and each does a lot.
"""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(params=["sqlite", "postgres", "oceanbase"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'm.db'}"
    url: str = request.getfixturevalue(f"{request.param}_url")  # skipped (or failed, in CI) without the server
    return url


@pytest.fixture(params=["sqlite", "postgres"])
def engine_store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """SQLite and PostgreSQL only: for tests that open many stores (OceanBase takes ~5 s for each)."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'm.db'}"
    url: str = request.getfixturevalue("postgres_url")
    return url
