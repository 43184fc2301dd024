"""Fixtures for the maintenance tests: a real SQLite file and the real service, no embedding model by default."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

import memstone
from memstone import MemoryService


@pytest.fixture
def db_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'memstone.db'}"


@pytest.fixture
async def svc(db_url: str) -> AsyncIterator[MemoryService]:
    async with memstone.open_service(db_url, embedding=None) as service:
        yield service
