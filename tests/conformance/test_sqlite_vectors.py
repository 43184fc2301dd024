"""Vector-projection conformance on SQLite: a small deterministic model, and the real default model."""

from __future__ import annotations

from pathlib import Path

import pytest

from memstone.testing import VectorConformance


class TestSQLiteVectorsHashing(VectorConformance):
    model_name = "hashing-64"
    semantic = False

    @pytest.fixture
    def store_url(self, tmp_path: Path) -> str:
        return f"sqlite:///{tmp_path / 'v.db'}"


class TestSQLiteVectorsMiniLM(VectorConformance):
    """The real default model (all-MiniLM-L6-v2 int8 ONNX, shipped in a wheel, offline)."""

    model_name = "minilm-l6-int8"

    @pytest.fixture
    def store_url(self, tmp_path: Path) -> str:
        return f"sqlite:///{tmp_path / 'v.db'}"
