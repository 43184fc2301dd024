"""A deliberately incomplete engine, run through the conformance suite by ``test_incomplete_engine.py``.

Not collected on its own (no ``test_`` prefix): its tests are meant to fail. The engine is SQLite with one part
left permissive, the way a new adapter could get it wrong: it answers "yes" to "does this vector hit pass the
kind, tag and flag filters?" without looking.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from memstone.backends.sql import VectorCandidate
from memstone.backends.sqlite import SQLiteMemoryBackend, parse_sqlite_url
from memstone.domain.filters import EntryFilter
from memstone.ports import MemoryBackend
from memstone.testing import BackendFactory, VectorConformance


class FilterBlindSQLite(SQLiteMemoryBackend):
    def _head_matches_sync(self, cand: VectorCandidate, filters: EntryFilter) -> bool:
        return True


async def open_filter_blind(url: str) -> MemoryBackend:
    return await FilterBlindSQLite(parse_sqlite_url(url)).open()


class TestFilterBlindVectors(VectorConformance):
    model_name = "hashing-64"
    semantic = False

    @pytest.fixture
    def store_url(self, tmp_path: Path) -> str:
        return f"sqlite:///{tmp_path / 'v.db'}"

    @pytest.fixture
    def backend_factory(self) -> BackendFactory:
        return open_filter_blind
