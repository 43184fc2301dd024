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


async def test_archive_only_hits_carry_real_scores_on_the_head_hits_scale(svc: MemoryService) -> None:
    rev = await svc.remember(
        None,
        entries=[
            EntryInput(kind="fact", text="we deploy with fabric scripts"),
            EntryInput(kind="fact", text="the fabric of the office chairs is grey"),
        ],
    )
    assert rev is not None
    (old,) = [v for v in await svc.entries(rev) if "deploy" in v.text]
    rev = await svc.remember(rev, entries=[EntryInput(kind="fact", text="we deploy with uv", entry=old.entry_id)])
    assert rev is not None
    hits = (await svc.search("fabric scripts", memories=[rev], mode="fts", include_superseded=True)).hits
    # The archived version holds every query word; the live one only "fabric": the archived one ranks first, with
    # a score in [0, 1] and its parts, as a head hit's.
    assert [(h.text, h.superseded) for h in hits] == [
        ("we deploy with fabric scripts", True),
        ("the fabric of the office chairs is grey", False),
    ]
    archived, live = hits
    assert 0.0 < live.score < archived.score <= 1.0
    assert archived.contributions["coverage"] == 1.0 and archived.contributions["bm25"] > 0.0
    assert archived.score == archived.contributions["fusion"] == archived.contributions["lexical"]
    rrf = (await svc.search("fabric scripts", memories=[rev], mode="fts", include_superseded=True, fusion="rrf")).hits
    assert {h.text: h.score for h in rrf}["we deploy with fabric scripts"] == 1.0 / 61  # RRF keeps its ranks
