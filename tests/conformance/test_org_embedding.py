"""Embedding profiles per organization (issue 13, item 6) on PostgreSQL, with two real models of different
dimensions (MiniLM 384-d, USE 512-d); SQLite has no per-org tables and must refuse an org migration by name."""

from __future__ import annotations

import pytest

from memstone.testing.org_embedding import OrgEmbeddingConformance, OrgEmbeddingRefused


class TestPostgresOrgEmbedding(OrgEmbeddingConformance):
    @pytest.fixture
    def store_url(self, postgres_url: str) -> str:
        return postgres_url


class TestSQLiteOrgEmbeddingRefused(OrgEmbeddingRefused):
    @pytest.fixture
    def store_url(self, tmp_path: object) -> str:
        return f"sqlite:///{tmp_path}/org.db"


class TestPostgresOrgEmbeddingCapability(OrgEmbeddingRefused):
    """On PostgreSQL the refusal test skips itself: the engine has the capability."""

    @pytest.fixture
    def store_url(self, postgres_url: str) -> str:
        return postgres_url
