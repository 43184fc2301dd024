"""A search of Memories named by id or scope, on SQLite and PostgreSQL: their heads are read by the search's own
read transaction (issue 13), and every outcome is the one a head read first gave: the same error for a Memory that
does not exist or that the actor may not read (before any other error of the search), the same check of a Memory
named by id and at a Revision, the same hits."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from memstone import EntryInput, MemoryService, open_service
from memstone.auth.model import Access, Grant, Principal
from memstone.domain.errors import ArtifactNotFoundError, CapabilityNotSupportedError, InvalidInput, MemstoneError
from memstone.service.policy import Actor

WEB = "memstone://orgs/acme/projects/web"
OPS = "memstone://orgs/acme/projects/ops"
MISSING = "mem_00000000000000000000000000"


@pytest.fixture(params=["sqlite", "postgres"])
async def svc(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[MemoryService]:
    url = f"sqlite:///{tmp_path / 'm.db'}" if request.param == "sqlite" else request.getfixturevalue("postgres_url")
    async with open_service(url, embedding=None) as service:
        yield service


async def _error(svc: MemoryService, **named: object) -> MemstoneError:
    with pytest.raises(MemstoneError) as caught:
        await svc.search("deploy", **named)  # type: ignore[arg-type]
    return caught.value


async def test_a_memory_named_by_id_that_does_not_exist_fails_first_with_its_own_error(svc: MemoryService) -> None:
    rev = await svc.remember(scope=WEB, entries=[EntryInput(kind="fact", text="We deploy with uv.")])
    assert rev is not None
    for named in (
        {"memories": [MISSING]},
        {"memories": [rev.memory_id, MISSING]},
        {"memories": [MISSING, rev.memory_id], "scopes": [WEB]},
        {"memories": [rev.memory_id, MISSING], "mode": "vector"},  # no model: not found comes before the mode
        {"memories": [MISSING], "scopes": ["memstone://bad scope"]},  # and before a bad scope
        {"memories": [MISSING, rev.memory_id, rev.ref]},
    ):
        error = await _error(svc, **named)
        assert type(error) is ArtifactNotFoundError, (named, error)
        assert error.to_dict() == {
            "code": "artifact_not_found",
            "message": f"no memory {MISSING}",
            "hint": "list memories with `memstone memories`",
        }, named
    assert isinstance(await _error(svc, memories=[rev.memory_id], mode="vector"), CapabilityNotSupportedError)


async def test_a_memory_named_by_id_and_at_a_revision_is_checked_against_its_head(svc: MemoryService) -> None:
    first = await svc.remember(scope=WEB, entries=[EntryInput(kind="fact", text="We deploy with uv.")])
    assert first is not None
    head = await svc.remember(first, entries=[EntryInput(kind="fact", text="We deploy on Fridays too.")])
    assert head is not None
    for memories in ([first.memory_id, first.ref], [first.ref, first.memory_id]):
        error = await _error(svc, memories=memories)
        assert type(error) is InvalidInput and error.message == f"{first.memory_id} is named at two different revisions"
    by_id = await svc.search("deploy", memories=[head.memory_id])
    assert len(by_id.hits) == 2 and {h.memory_ref for h in by_id.hits} == {head.ref}
    twice: list[list[object]] = [
        [head.memory_id, head.memory_id],
        [head.memory_id, head.ref],
        [head.ref, head.memory_id],
    ]
    for memories in twice:
        assert (await svc.search("deploy", memories=memories)) == by_id, memories  # type: ignore[arg-type]
    assert (await svc.search("deploy", scopes=[WEB], memories=[head.memory_id])) == by_id
    assert (await svc.search("deploy", scopes=[WEB, WEB])) == by_id


async def test_a_memory_the_actor_may_not_read_is_hidden_as_before(svc: MemoryService) -> None:
    ops = await svc.remember(scope=OPS, entries=[EntryInput(kind="fact", text="Ops deploys through PagerDuty.")])
    web = await svc.remember(scope=WEB, entries=[EntryInput(kind="fact", text="We deploy with uv.")])
    assert ops is not None and web is not None
    access = Access(
        principal=Principal(principal_id="prn_bob", user="bob", org="acme"),
        grants=(Grant(scope=WEB, permission="read"),),
    )

    async def org_of(user: str) -> str | None:
        return "acme"

    bob = svc.acting(Actor.of(access, surface="api"), user_org=org_of)
    hidden = await _error(bob, memories=[web.memory_id, ops.memory_id])
    assert hidden.to_dict() == {
        "code": "not_found",
        "message": f"no memory {ops.memory_id}",
        "hint": "search or list a scope you can read to find an id",
    }
    missing = await _error(bob, memories=[MISSING, ops.memory_id])
    assert type(missing) is ArtifactNotFoundError and missing.hint == "list memories with `memstone memories`"
    assert [h.text for h in (await bob.search("deploy", memories=[web.memory_id])).hits] == ["We deploy with uv."]
