"""The conformance suite, unchanged, on the LanceDB engine: a local folder per test (``lancedb:///…``) and a fresh
prefix per test on the session's S3 server (``lancedb+s3://…``, SeaweedFS on loopback; skipped without it,
failing under ``MEMSTONE_REQUIRE_SERVERS=1``)."""

from __future__ import annotations

import secrets
from collections.abc import Callable
from pathlib import Path

import pytest

from memstone.testing import MemoryBackendConformance, VectorConformance
from memstone.testing.s3server import S3Server

pytest.importorskip("lancedb")


class LocalStores:
    options = ""  # the URL's ?… part

    @pytest.fixture
    def store_url(self, tmp_path: Path) -> str:
        return f"lancedb:///{tmp_path / 'store'}{self.options}"

    @pytest.fixture
    def empty_stores(self, tmp_path: Path) -> Callable[[str], str]:
        """Further fresh stores, one folder per name."""
        return lambda name: f"lancedb:///{tmp_path / ('other-' + name)}{self.options}"


class S3Stores:
    options = ""  # the URL's ?… part

    @pytest.fixture
    def store_url(self, s3_env: S3Server) -> str:
        return s3_env.url("lancedb+s3", f"t-{secrets.token_hex(6)}") + self.options

    @pytest.fixture
    def empty_stores(self, s3_env: S3Server) -> Callable[[str], str]:
        made: dict[str, str] = {}

        def make(name: str) -> str:
            url = s3_env.url("lancedb+s3", f"t-{secrets.token_hex(6)}-{name}") + self.options
            return made.setdefault(name, url)

        return make


class TestLanceLocal(LocalStores, MemoryBackendConformance):
    embedding = "hashing-64"


class TestLanceLocalVectors(LocalStores, VectorConformance):
    model_name = "hashing-64"
    semantic = False


class TestLanceS3(S3Stores, MemoryBackendConformance):
    embedding = "hashing-64"


class IndexedStores(LocalStores):
    """Stores whose every write also feeds LanceDB's search tables (``?search=eager``): every search of the suite
    then takes its candidates from LanceDB's FTS index and vector table (docs/engines/lancedb.md, "Search")."""

    options = "?search=eager"


class TestLanceLocalIndexed(IndexedStores, MemoryBackendConformance):
    embedding = "hashing-64"


class TestLanceLocalIndexedVectors(IndexedStores, VectorConformance):
    model_name = "hashing-64"
    semantic = False


class TestLanceS3Indexed(S3Stores, MemoryBackendConformance):
    """The suite on S3 with the search tables fed on every write (``?search=eager``)."""

    embedding = "hashing-64"
    options = "?search=eager"
