"""Queries the service refuses (empty, stopwords only) and the callers that must not pass them on (issue 15)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from memstone import EntryInput, MemoryService, open_service
from memstone.domain.errors import InvalidInput

SCOPE = "memstone://users/anonymous"


@pytest.fixture
async def svc(tmp_path: Path) -> AsyncIterator[MemoryService]:
    async with open_service(f"sqlite:///{tmp_path / 'm.db'}", embedding=None) as service:
        yield service


async def test_search_refuses_an_empty_or_stopword_query_in_every_mode(svc: MemoryService) -> None:
    rev = await svc.remember(None, entries=[EntryInput(kind="fact", text="postgres backups run nightly")])
    assert rev is not None
    for mode in ("fts", "auto", "vector", "hybrid"):
        for query in ("", "   ", "what is it"):
            with pytest.raises(InvalidInput):
                await svc.search(query, memories=[rev], mode=mode)  # type: ignore[arg-type]
    with pytest.raises(InvalidInput):
        await svc.search("postgres", memories=[rev], fusion="max")  # type: ignore[arg-type]
    hits = (await svc.search("postgres backups", memories=[rev], mode="fts")).hits
    assert hits[0].score == 1.0 and hits[0].contributions["coverage"] == 1.0


async def test_recall_with_a_stopword_context_loads_the_mandatory_tier_and_skips_the_search(
    svc: MemoryService,
) -> None:
    await svc.remember(
        None, entries=[EntryInput(kind="constraint", text="Never push to main.", mandatory=True)], scope=SCOPE
    )
    bundle = await svc.recall("do it", scopes=[SCOPE])
    assert [r.text for r in bundle.mandatory] == ["Never push to main."]
