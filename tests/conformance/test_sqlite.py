"""The conformance suite on SQLite: a file in tmp_path (many processes) and an in-memory database."""

from __future__ import annotations

from pathlib import Path

import pytest

from memstone.testing import MemoryBackendConformance


class TestSQLiteFile(MemoryBackendConformance):
    embedding = "hashing-64"  # a small deterministic model keeps the suite fast; see test_sqlite_minilm.py

    @pytest.fixture
    def store_url(self, tmp_path: Path) -> str:
        return f"sqlite:///{tmp_path / 'memstone.db'}"


class TestSQLiteMemory(MemoryBackendConformance):
    embedding = None  # no model at all: FTS only

    @pytest.fixture
    def store_url(self) -> str:
        return "sqlite:///:memory:"
