"""Fixtures for the hook tests: a project folder under Git, a seeded store, and a hook environment."""

from __future__ import annotations

from pathlib import Path

import pytest
from hook_helpers import USER, seed


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "web"
    (root / ".git").mkdir(parents=True)
    (root / ".git" / "config").write_text('[remote "origin"]\n\turl = git@github.com:Acme/Web.git\n', "utf-8")
    return root


@pytest.fixture
def store_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'store' / 'memstone.db'}"


@pytest.fixture
def seeded(store_url: str, project: Path) -> dict[str, str]:
    return seed(store_url, project)


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """The hook's environment: the user scope pinned, the project derived from the payload's cwd."""
    return {"MEMSTONE_USER_SCOPE": USER, "HOME": str(tmp_path)}
