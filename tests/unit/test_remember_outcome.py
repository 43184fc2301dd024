"""``remember_outcome``: what a remember did, as a value, naming the live entry a no-op matched (issue 11)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from memstone import EntryInput, MemoryService, open_service

WEB = "memstone://orgs/acme/projects/web"


@pytest.fixture
async def svc(tmp_path: Path) -> AsyncIterator[MemoryService]:
    async with open_service(f"sqlite:///{tmp_path / 'm.db'}", embedding=None) as service:
        yield service


def fact(text: str) -> EntryInput:
    return EntryInput(kind="fact", text=text)


async def test_a_new_entry_is_created_and_named(svc: MemoryService) -> None:
    done = await svc.remember_outcome(scope=WEB, entries=[fact("We deploy with uv.")])
    assert done.status == "created"
    assert done.revision is not None and done.revision.revision == 1
    assert done.added == tuple(c.entry_id for c in done.revision.changes)
    assert done.existing == ()


async def test_an_identical_text_writes_nothing_and_names_the_live_entry(svc: MemoryService) -> None:
    first = await svc.remember_outcome(scope=WEB, entries=[fact("We deploy with uv.")])
    again = await svc.remember_outcome(scope=WEB, entries=[fact("We deploy with uv.")])
    assert again.status == "unchanged"
    assert again.added == () and again.revised == ()
    assert again.existing == first.added
    assert again.revision == first.revision  # the current head: nothing was written
    assert (await svc.resolve(WEB)).revision == 1  # type: ignore[union-attr]


async def test_a_mixed_write_adds_the_new_entry_and_names_the_known_one(svc: MemoryService) -> None:
    known = await svc.remember_outcome(scope=WEB, entries=[fact("We deploy with uv.")])
    done = await svc.remember_outcome(scope=WEB, entries=[fact("We deploy with uv."), fact("CI runs on Linux.")])
    assert done.status == "created"
    assert len(done.added) == 1 and done.added != known.added
    assert done.existing == known.added


async def test_a_forgotten_entry_is_not_existing(svc: MemoryService) -> None:
    known = await svc.remember_outcome(scope=WEB, entries=[fact("We deploy with uv.")])
    assert known.revision is not None
    await svc.forget(await svc.resolve(WEB), entries=list(known.added))  # type: ignore[arg-type]
    again = await svc.remember_outcome(scope=WEB, entries=[fact("We deploy with uv.")])
    assert again.status == "created" and again.existing == ()


async def test_a_revision_to_the_same_content_is_unchanged_and_names_the_entry(svc: MemoryService) -> None:
    known = await svc.remember_outcome(scope=WEB, entries=[fact("We deploy with uv.")])
    (eid,) = known.added
    head = await svc.resolve(WEB)
    current = await svc.get(eid)
    same = EntryInput(entry=current, kind="fact", text="We deploy with uv.")
    done = await svc.remember_outcome(head, entries=[same])
    assert done.status == "unchanged" and done.existing == (eid,)
    changed = EntryInput(entry=current, kind="fact", text="We deploy with uv, always.")
    done = await svc.remember_outcome(head, entries=[changed])
    assert done.status == "revised" and done.revised == (eid,) and done.added == ()


async def test_remember_still_returns_the_revision(svc: MemoryService) -> None:
    rev = await svc.remember(scope=WEB, entries=[fact("We deploy with uv.")])
    again = await svc.remember(scope=WEB, entries=[fact("We deploy with uv.")])
    assert rev is not None and again == rev
