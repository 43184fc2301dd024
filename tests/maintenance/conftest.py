"""Fixtures for the maintenance tests: a real store and the real service, no embedding model by default.

Every test runs on SQLite and PostgreSQL (the maintenance records live in each engine, ``backends/sql/
maintenance.py``); tests marked ``@pytest.mark.oceanbase`` run on OceanBase too (a few: a store opens in ~5 s).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

import memstone
from memstone import MemoryService


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "engine" in metafunc.fixturenames:
        engines = ["sqlite", "postgres"]
        if metafunc.definition.get_closest_marker("oceanbase") is not None:
            engines.append("oceanbase")
        metafunc.parametrize("engine", engines)


@pytest.fixture
def db_url(engine: str, request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if engine == "sqlite":
        return f"sqlite:///{tmp_path / 'memstone.db'}"
    url: str = request.getfixturevalue(f"{engine}_url")  # skipped (or failed, in CI) without the server
    return url


@pytest.fixture
async def svc(db_url: str) -> AsyncIterator[MemoryService]:
    async with memstone.open_service(db_url, embedding=None) as service:
        yield service
