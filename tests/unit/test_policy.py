"""The service's policy, through the library: secrets in every field, grants on every read and write.

These run on a real SQLite file; the actors are what an HTTP or MCP token would authenticate to.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from memstone import EntryInput, MemoryService, open_service
from memstone.auth.model import Access, Grant, Permission, Principal
from memstone.domain.errors import Forbidden, NotFound, SecretRefusedError
from memstone.domain.model import EntryPatch
from memstone.service.policy import Actor

WEB = "memstone://orgs/acme/projects/web"
OPS = "memstone://orgs/acme/projects/ops"
TOKEN = "ghp_" + "R4nd0mL00k1ngT0k3nV4lu3Abcdef123456"


def actor(user: str, org: str, grants: dict[str, Permission]) -> Actor:
    access = Access(
        principal=Principal(principal_id=f"prn_{user}", user=user, org=org),
        grants=tuple(Grant(scope=s, permission=p) for s, p in grants.items()),
    )
    return Actor.of(access, surface="api")


async def org_of(user: str) -> str | None:
    return {"alice": "acme", "bob": "acme", "eve": "globex"}.get(user)


@pytest.fixture
async def svc(tmp_path: Path) -> AsyncIterator[MemoryService]:
    async with open_service(f"sqlite:///{tmp_path / 'm.db'}", embedding=None) as service:
        yield service


async def add(svc: MemoryService, scope: str, text: str, **fields: object) -> str:
    rev = await svc.remember(None, entries=[EntryInput(kind="fact", text=text, **fields)], scope=scope)  # type: ignore[arg-type]
    assert rev is not None
    return next(c.entry_id for c in rev.changes if c.op == "add")


@pytest.mark.parametrize(
    "fields",
    [
        pytest.param({"text": f"Push with {TOKEN}."}, id="text"),
        pytest.param({"text": "A fact.", "title": f"token {TOKEN}"}, id="title"),
        pytest.param({"text": "A fact.", "tags": [TOKEN.lower()]}, id="tags"),
        pytest.param({"text": "A fact.", "reason": f"pasted {TOKEN}"}, id="reason"),
    ],
)
async def test_a_secret_in_any_field_of_a_new_entry_is_refused(svc: MemoryService, fields: dict[str, object]) -> None:
    with pytest.raises(SecretRefusedError) as refused:
        await add(svc, WEB, **fields)  # type: ignore[arg-type]
    assert TOKEN not in str(refused.value)
    assert await svc.memories() == ()


async def test_a_secret_in_evidence_is_refused(svc: MemoryService) -> None:
    with pytest.raises(SecretRefusedError):
        await svc.record_source("transcript", f"export GITHUB_TOKEN={TOKEN}")
    first = await add(svc, WEB, "We deploy with uv.")
    with pytest.raises(SecretRefusedError):
        await svc.update(first, EntryPatch(tags=["deploy", TOKEN.lower()]))
    assert (await svc.get(first)).version == 1


async def test_a_principal_reads_and_writes_only_what_its_grants_cover(svc: MemoryService) -> None:
    web = await add(svc, WEB, "Acme web deploys with uv.")
    ops = await add(svc, OPS, "Acme ops pages on-call through PagerDuty.")
    bob = svc.acting(actor("bob", "acme", {WEB: "read"}), user_org=org_of)
    assert (await bob.get(web)).content.text == "Acme web deploys with uv."
    with pytest.raises(NotFound):
        await bob.get(ops)  # an id in a scope bob cannot read is not found, so it reveals nothing
    with pytest.raises(Forbidden):
        await bob.update(web, EntryPatch(text="Acme web deploys with pip."))
    with pytest.raises(Forbidden):
        await bob.search("deploys", scopes=[OPS])
    assert [s for s, _ in await bob.scopes()] == [WEB]
    assert [h.memory_id for h in await bob.memories()] == [(await svc.get(web)).memory_id]
    eve = svc.acting(actor("eve", "globex", {"*": "write"}), user_org=org_of)
    with pytest.raises(NotFound):
        await eve.history(web)
    with pytest.raises(Forbidden):
        await eve.remember(None, entries=[EntryInput(kind="fact", text="Globex was here.")], scope=WEB)
    assert (await svc.get(web)).version == 1


async def test_the_anonymous_scope_and_unbound_memories_are_local_only(svc: MemoryService) -> None:
    rev = await svc.remember(None, entries=[EntryInput(kind="fact", text="Unbound note.")])
    assert rev is not None
    alice = svc.acting(actor("alice", "acme", {"*": "admin"}), user_org=org_of)
    with pytest.raises(NotFound):
        await alice.head(rev.memory_id)
    with pytest.raises(Forbidden):
        await alice.remember(None, entries=[EntryInput(kind="fact", text="Hi.")], scope="memstone://users/anonymous")
    mine = await alice.remember(
        None, entries=[EntryInput(kind="fact", text="Alice likes tabs.")], scope="memstone://users/alice"
    )
    assert mine is not None
    written = await svc.get(mine.changes[0].entry_id)
    assert written.provenance.author == "alice"


async def test_recall_links_to_an_unreadable_entry_carry_no_content(svc: MemoryService) -> None:
    secret_plan = await add(svc, OPS, "Ops plan: migrate the pager to Opsgenie in March.", title="Ops migration plan")
    head = await svc.resolve(WEB)
    assert head is None
    web = await add(svc, WEB, "Web alerts follow the ops paging plan.")
    web_head = await svc.head((await svc.get(web)).memory_id)
    await svc.relate(web_head, web, secret_plan, "relates-to")
    bob = svc.acting(actor("bob", "acme", {WEB: "read"}), user_org=org_of)
    bundle = await bob.recall("paging plan", scopes=[WEB], mode="fts")
    links = [x for x in bundle.links if x.target == secret_plan]
    assert links, "the link itself is bob's to see: it is part of an entry he can read"
    assert all((x.other_title, x.other_kind, x.other_state) == (None, None, "missing") for x in links)
    dumped = str(bundle.to_dict())
    assert "Opsgenie" not in dumped and "Ops migration plan" not in dumped


async def test_the_review_queue_shows_and_decides_by_the_same_grants_in_the_library(svc: MemoryService) -> None:
    """The grant rule of a queued capture item lives in memstone.capture (HTTP and MCP only translate it)."""
    from memstone.capture import CaptureSettings, ReviewQueue, UserPrompt, accept, capture, reject, visible_items

    settings = CaptureSettings().with_mode(WEB, "review").with_mode(OPS, "review")
    queue = ReviewQueue.of(svc)
    items: dict[str, str] = {}
    for scope, text in ((WEB, "Acme web always deploys with uv."), (OPS, "Acme ops never pages after midnight.")):
        done = await capture(svc, UserPrompt(text=text), scope=scope, settings=settings, queue=queue)
        queued = done.outcomes[0].queue_item
        assert queued is not None
        items[scope] = queued
    bob = svc.acting(actor("bob", "acme", {WEB: "read"}), user_org=org_of)
    assert [i.scope for i in await visible_items(bob, queue)] == [WEB]  # ops is not shown to exist
    with pytest.raises(NotFound):
        await reject(bob, queue, items[OPS], note="not mine")
    with pytest.raises(Forbidden):  # readable, but deciding writes
        await accept(bob, queue, items[WEB])
    with pytest.raises(Forbidden):
        await reject(bob, queue, items[WEB])
    assert [i.status for i in await queue.items()] == ["pending", "pending"]
    alice = svc.acting(actor("alice", "acme", {WEB: "write"}), user_org=org_of)
    assert (await accept(alice, queue, items[WEB])).status == "stored"
    assert sorted(i.status for i in await queue.items()) == ["accepted", "pending"]
