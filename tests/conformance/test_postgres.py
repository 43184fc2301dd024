"""The conformance suite, unchanged, on PostgreSQL 18 + pgvector: a real server the test session starts
(``tests/conftest.py``), a fresh database per test. Skipped without the server; failing under
``MEMSTONE_REQUIRE_SERVERS=1``."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from memstone.testing import MemoryBackendConformance, VectorConformance


class PostgresStores:
    """A fresh PostgreSQL database per test, and further ones, one per name, dropped after the test."""

    @pytest.fixture
    def store_url(self, postgres_url: str) -> str:
        return postgres_url

    @pytest.fixture
    def empty_stores(self, postgres_empty_stores: Callable[[str], str]) -> Callable[[str], str]:
        return postgres_empty_stores


class TestPostgres(PostgresStores, MemoryBackendConformance):
    embedding = "hashing-64"


class TestPostgresWithoutModel(PostgresStores, MemoryBackendConformance):
    embedding = None  # FTS only, as a store with no model


class TestPostgresVectorsHashing(PostgresStores, VectorConformance):
    model_name = "hashing-64"
    semantic = False


class TestPostgresVectorsMiniLM(PostgresStores, VectorConformance):
    """The real default model (all-MiniLM-L6-v2 int8 ONNX, shipped in a wheel, offline)."""

    model_name = "minilm-l6-int8"
