"""Fixtures for the MCP server tests: a real SQLite store in tmp_path, seeded through the service."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from mcp_helpers import PROJECT, USER, seed

from memstone import MemoryService, open_service
from memstone.agents.settings import AgentSettings


@pytest.fixture
def store_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'store' / 'memstone.db'}"


@pytest.fixture
def settings(store_url: str, tmp_path: Path) -> AgentSettings:
    return AgentSettings(url=store_url, project_scope=PROJECT, user_scope=USER, home=tmp_path / "store")


@pytest.fixture
async def seeded(store_url: str) -> dict[str, str]:
    return await seed(store_url)


@pytest.fixture
async def service(store_url: str, seeded: dict[str, str]) -> AsyncIterator[MemoryService]:
    async with open_service(store_url, embedding=None, surface="agent-session") as svc:
        yield svc


@pytest.fixture
def server_env(store_url: str, tmp_path: Path) -> dict[str, str]:
    """The environment of a server subprocess: the test store, FTS only, pinned scopes, an isolated home."""
    return {
        "MEMSTONE_URL": store_url,
        "MEMSTONE_EMBEDDING": "none",
        "MEMSTONE_PROJECT_SCOPE": PROJECT,
        "MEMSTONE_USER_SCOPE": USER,
        "HOME": str(tmp_path),
        "PYTHONUNBUFFERED": "1",
    }
