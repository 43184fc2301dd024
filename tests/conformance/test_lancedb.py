"""The conformance suite, unchanged, on the LanceDB engine: a local folder per test (``lancedb:///…``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from memstone.testing import MemoryBackendConformance, VectorConformance

pytest.importorskip("lancedb")


class TestLanceLocal(MemoryBackendConformance):
    embedding = "hashing-64"

    @pytest.fixture
    def store_url(self, tmp_path: Path) -> str:
        return f"lancedb:///{tmp_path / 'store'}"


class TestLanceLocalVectors(VectorConformance):
    model_name = "hashing-64"
    semantic = False

    @pytest.fixture
    def store_url(self, tmp_path: Path) -> str:
        return f"lancedb:///{tmp_path / 'store'}"
