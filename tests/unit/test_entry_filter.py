"""The catalogue and search filters as one value (``domain/filters.py``, issue 11): one check for every read that
takes them, and its SQL form on head rows agreeing with ``EntryFilter.passes`` on content."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from memstone import EntryInput, MemoryService, open_service
from memstone.domain.errors import InvalidInput
from memstone.domain.filters import EntryFilter
from memstone.domain.model import EntryContent

SCOPE = "memstone://users/anonymous"
ENTRIES = [
    EntryInput(kind="lesson", text="deploy with make", tags=["ops"]),
    EntryInput(kind="lesson", text="deploy on monday", tags=["ops", "calendar"], important=True),
    EntryInput(kind="constraint", text="deploy never on friday", mandatory=True, important=True),
    EntryInput(kind="fact", text="deploy logs live in s3", tags=["calendar"]),
]
FILTERS: list[dict[str, Any]] = [
    {},
    {"kinds": ["LESSON "]},
    {"kinds": ["lesson", "constraint"]},
    {"tags": [" Ops"]},
    {"tags": ["ops", "calendar"]},
    {"important": True},
    {"important": False},
    {"mandatory": True, "important": True},
    {"kinds": ["lesson"], "important": False},
    {"kinds": ["fact"], "tags": ["ops"]},
]


@pytest.fixture
async def svc(tmp_path: Path) -> AsyncIterator[MemoryService]:
    async with open_service(f"sqlite:///{tmp_path / 'm.db'}", embedding=None) as service:
        yield service


@pytest.mark.parametrize("filters", FILTERS, ids=lambda f: repr(f))
async def test_list_and_search_select_what_the_filter_passes(svc: MemoryService, filters: dict[str, Any]) -> None:
    await svc.remember(None, entries=ENTRIES, scope=SCOPE)
    f = EntryFilter.of(**filters)
    expected = {
        e.text
        for e in ENTRIES
        if f.passes(
            EntryContent(kind=e.kind, text=e.text, tags=tuple(e.tags), important=e.important, mandatory=e.mandatory)
        )
    }
    listed = {r.text for r in await svc.list(scopes=[SCOPE], **filters)}
    found = {h.text for h in await svc.search("deploy", scopes=[SCOPE], mode="fts", **filters)}
    assert listed == expected
    assert found == expected


@pytest.mark.parametrize(
    "bad",
    [{"kinds": "lesson"}, {"kinds": [5]}, {"tags": "ops"}, {"tags": [""]}, {"important": "yes"}, {"mandatory": 1}],
    ids=lambda b: repr(b),
)
async def test_list_and_search_refuse_the_same_bad_filters(svc: MemoryService, bad: dict[str, Any]) -> None:
    await svc.remember(None, entries=ENTRIES, scope=SCOPE)
    with pytest.raises(InvalidInput) as listed:
        await svc.list(scopes=[SCOPE], **bad)
    with pytest.raises(InvalidInput) as searched:
        await svc.search("deploy", scopes=[SCOPE], mode="fts", **bad)
    assert str(listed.value) == str(searched.value)


def test_an_empty_filter_is_inactive_and_passes_everything() -> None:
    f = EntryFilter.of()
    assert not f.active and f == EntryFilter()
    assert f.passes(EntryContent(kind="x", text="y"))
    assert EntryFilter.of(important=False).active
