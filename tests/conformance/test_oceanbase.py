"""The conformance suite, unchanged, on OceanBase (MySQL mode), run on the seekdb test server (issue 13).

Each test gets fresh, empty databases of its own on the session's seekdb (``tests/conftest.py``): skipped where
seekdb cannot start, failing instead with ``MEMSTONE_REQUIRE_SERVERS=1`` (as CI sets it).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from memstone.testing import MemoryBackendConformance, VectorConformance


class OceanBaseStores:
    """A fresh OceanBase database per test, and further ones, one per name, dropped after the test."""

    @pytest.fixture
    def store_url(self, oceanbase_url: str) -> str:
        return oceanbase_url

    @pytest.fixture
    def empty_stores(self, oceanbase_empty_stores: Callable[[str], str]) -> Callable[[str], str]:
        return oceanbase_empty_stores


class TestOceanBase(OceanBaseStores, MemoryBackendConformance):
    embedding = "hashing-64"  # a small deterministic model keeps the suite fast (as on SQLite)


class TestOceanBaseWithoutModel(OceanBaseStores, MemoryBackendConformance):
    embedding = None  # no model at all: FTS only


class TestOceanBaseVectorsHashing(OceanBaseStores, VectorConformance):
    model_name = "hashing-64"
    semantic = False


class TestOceanBaseVectorsMiniLM(OceanBaseStores, VectorConformance):
    """The real default model (all-MiniLM-L6-v2 int8 ONNX, shipped in a wheel, offline)."""

    model_name = "minilm-l6-int8"
