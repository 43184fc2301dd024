"""A real SQLite store per test (FTS only: these tests are about import, not the model)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from textwrap import dedent

import pytest

from memstone import MemoryService, open_service

PROJECT = "memstone://orgs/acme/projects/web"


@pytest.fixture
async def svc(tmp_path: Path) -> AsyncIterator[MemoryService]:
    async with open_service(f"sqlite:///{tmp_path / 'm.db'}", embedding=None) as service:
        yield service


def write(root: Path, rel: str, text: str) -> Path:
    """Write a dedented file under ``root`` (parents created) and return its path."""
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(dedent(text).lstrip("\n"), "utf-8")
    return path


async def revision_count(svc: MemoryService, scope: str = PROJECT) -> int:
    head = await svc.resolve(scope)
    return 0 if head is None else head.revision
