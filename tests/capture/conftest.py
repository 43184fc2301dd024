"""Fixtures for the capture tests: a real SQLite file in tmp_path, no embedding model (the hook path)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

import memstone
from memstone import MemoryService


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "memstone.db"


@pytest.fixture
async def service(db_path: Path) -> AsyncIterator[MemoryService]:
    async with memstone.open_service(f"sqlite:///{db_path}", embedding=None) as svc:
        yield svc
