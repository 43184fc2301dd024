"""The access-control matrix of /mcp: every MCP tool × every kind of principal, through a real MCP client.

The tools are read from the server (``tools/list``), so a tool added without a rule here fails
``test_every_tool_has_a_rule``. Each cell runs against fresh entries in acme's web project (the server's project
scope), a refused call must write nothing and must not echo the seeded text, and a granted one must succeed
(issue 12: at 08487f5, 18 of 18 forbidden calls succeeded on /mcp).
"""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp.client.streamable_http import streamable_http_client
from mcp_helpers import serving

from mcp import Client
from memstone import EntryInput, MemoryService, open_service
from memstone.agents.settings import AgentSettings
from memstone.api.http.app import create_app, open_principals
from memstone.api.http.settings import Settings
from memstone.api.mcp.server import mcp_mount
from memstone.capture import CaptureSettings, ReviewQueue, UserPrompt, capture
from memstone.domain.model import Relation
from memstone.testing.proposals import seed_proposal

ACME_WEB = "memstone://orgs/acme/projects/web"
KINDS = ("no_grant", "other_org", "reader", "writer", "admin")
OK = "ok"
# What each rule answers, in KINDS order: "ok", or the error code of a refused call. An entry the caller cannot
# read does not exist for it (not_found); a scope it names without the grant is forbidden.
RULES: dict[str, tuple[str, ...]] = {
    "read_scope": ("forbidden", "forbidden", OK, OK, OK),
    "read_entry": ("not_found", "not_found", OK, OK, OK),
    "write_scope": ("forbidden", "forbidden", "forbidden", OK, OK),
    "write_entry": ("not_found", "not_found", "forbidden", OK, OK),
    "visible_list": (OK, OK, OK, OK, OK),  # lists only what the caller can read
    "unknown_item": ("not_found",) * 5,  # an id naming nothing
}
VISIBLE_TO = {"reader", "writer", "admin"}


@dataclass
class Seed:
    a: str  # active, relates to b
    b: str  # forgotten
    c: str  # active
    item: str  # a queued capture candidate
    text: str  # a's text (and its word "deploys")
    queued: str  # the queued candidate's text
    proposal: str  # a PROPOSED maintenance merge in acme/web whose merged text holds ``text``


TOOLS: dict[str, tuple[str, Callable[[Seed], dict[str, Any]]]] = {
    "memory_mandatory": ("read_scope", lambda s: {"scope": "project"}),
    "memory_search": ("read_scope", lambda s: {"query": "deploys", "scope": "project"}),
    "memory_list": ("read_scope", lambda s: {"scope": "project"}),
    "memory_changes": ("read_scope", lambda s: {"scope": "project"}),
    "memory_recall": ("read_scope", lambda s: {"context": "deploys", "scope": "project"}),
    "memory_source": ("read_entry", lambda s: {"id": s.a}),
    "memory_history": ("read_entry", lambda s: {"id": s.a}),
    "memory_remember": ("write_scope", lambda s: {"text": s.text + " Again, new.", "scope": "project"}),
    "memory_update": ("write_entry", lambda s: {"id": s.a, "text": s.text + " Updated."}),
    "memory_forget": ("write_entry", lambda s: {"ids": [s.a]}),
    "memory_reactivate": ("write_entry", lambda s: {"ids": [s.b]}),
    "memory_relate": ("write_entry", lambda s: {"source": s.a, "target": s.c}),
    "memory_review_list": ("visible_list", lambda s: {}),
    "memory_maintain": ("write_scope", lambda s: {"scope": "project"}),
    # Lists only proposals of scopes the caller can read, like GET /api/maintenance/proposals (unlike memory_list,
    # a named scope without the grant is an empty list, not forbidden).
    "memory_maintenance_proposals": ("visible_list", lambda s: {"scope": "project"}),
    "memory_maintenance_accept": ("write_entry", lambda s: {"id": s.proposal}),
    "memory_maintenance_reject": ("write_entry", lambda s: {"id": s.proposal}),
    "memory_review_accept": ("write_entry", lambda s: {"id": s.item}),
    "memory_review_reject": ("write_entry", lambda s: {"id": s.item, "note": "no"}),
}


@dataclass
class World:
    base: str
    tokens: dict[str, str]
    svc: MemoryService
    url: str


@pytest.fixture
async def world(tmp_path: Path) -> AsyncIterator[World]:
    """A token-mode server with /mcp whose project scope is acme's web project, and a token of each kind."""
    db = tmp_path / "m.db"
    store = await open_principals(f"sqlite:///{db}")
    tokens: dict[str, str] = {}
    try:
        for kind, user, org, grants in (
            ("revoked", "rick", "acme", {ACME_WEB: "write"}),
            ("no_grant", "nora", "acme", {}),
            ("other_org", "eve", "globex", {"*": "write"}),
            ("reader", "bob", "acme", {ACME_WEB: "read"}),
            ("writer", "alice", "acme", {ACME_WEB: "write"}),
            ("admin", "carol", "acme", {"*": "admin"}),
        ):
            principal = await store.ensure_principal(user=user, org=org)
            for scope, permission in grants.items():
                await store.set_grant(principal.principal_id, scope, permission)  # type: ignore[arg-type]
            info, tokens[kind] = await store.issue_token(principal.principal_id)
            if kind == "revoked":
                await store.revoke_token(info.token_id)
    finally:
        await store.aclose()
    url = f"sqlite:///{db}"
    agent = AgentSettings(url=url, project_scope=ACME_WEB, user_scope="memstone://users/anonymous", home=tmp_path)
    app = create_app(
        Settings(url=url, embedding="none", auth="token", host="0.0.0.0"),
        extra_mounts={"/mcp": mcp_mount(settings=agent)},
    )
    async with serving(app) as base, open_service(url, embedding=None) as svc:
        yield World(base=base, tokens=tokens, svc=svc, url=url)


_serial = itertools.count(1)


async def seed(world: World) -> Seed:
    svc, n = world.svc, next(_serial)
    text = f"Acme deploys with uv, batch {n}."
    b = await svc.remember(
        None, entries=[EntryInput(kind="fact", text=f"Acme pins Python, batch {n}.")], scope=ACME_WEB
    )
    c = await svc.remember(None, entries=[EntryInput(kind="fact", text=f"Acme lints, batch {n}.")], scope=ACME_WEB)
    assert b is not None and c is not None
    b_id, c_id = b.changes[0].entry_id, c.changes[0].entry_id
    a = await svc.remember(
        None,
        entries=[
            EntryInput(kind="fact", text=text, mandatory=True, relations=[Relation(kind="relates-to", target=b_id)])
        ],
        scope=ACME_WEB,
    )
    assert a is not None
    await svc.forget(a, entries=[b_id])
    queued_text = f"Never log card numbers, batch {n}."
    queued = await capture(
        svc, UserPrompt(text=queued_text), scope=ACME_WEB, settings=CaptureSettings().with_mode(ACME_WEB, "review"),
        queue=ReviewQueue.of(svc),
    )  # fmt: skip
    assert queued.status == "queued"
    item = str(queued.outcomes[0].queue_item)
    proposal = (await seed_proposal(svc, ACME_WEB, c_id, text)).proposal_id
    return Seed(a=a.changes[0].entry_id, b=b_id, c=c_id, item=item, text=text, queued=queued_text, proposal=proposal)


async def written(world: World) -> tuple[int, list[str]]:
    """(entry versions in acme/web, review item statuses): what "nothing was written" is checked against."""
    head = await world.svc.resolve(ACME_WEB)
    versions = sum(e.version for e in await world.svc.entries(head, include_inactive=True)) if head else 0
    return versions, [i.status for i in await ReviewQueue.of(world.svc).items(status=None)]


async def call(world: World, kind: str, tool: str, args: dict[str, Any]) -> tuple[bool, str]:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {world.tokens[kind]}"}, timeout=30)
    try:
        async with Client(streamable_http_client(f"{world.base}/mcp", http_client=http), mode="legacy") as client:
            result = await client.call_tool(tool, args)
            return bool(result.is_error), " ".join(getattr(c, "text", "") for c in result.content)
    finally:
        await http.aclose()


async def listed_tools(world: World) -> set[str]:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {world.tokens['reader']}"}, timeout=30)
    try:
        async with Client(streamable_http_client(f"{world.base}/mcp", http_client=http), mode="legacy") as client:
            return {t.name for t in (await client.list_tools()).tools}
    finally:
        await http.aclose()


async def test_every_tool_has_a_rule(world: World) -> None:
    tools = await listed_tools(world)
    assert tools - set(TOOLS) == set(), "tools without an access rule in this matrix"
    assert set(TOOLS) - tools == set(), "rules for tools the server no longer has"


@pytest.mark.parametrize("kind", ["none", "revoked"])
async def test_without_a_valid_token_mcp_answers_401(world: World, kind: str) -> None:
    headers = {"Authorization": f"Bearer {world.tokens[kind]}"} if kind == "revoked" else {}
    initialize = {
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }  # fmt: skip
    async with httpx2.AsyncClient(base_url=world.base, timeout=30) as http:
        r = await http.post(
            "/mcp", json=initialize, headers={**headers, "Accept": "application/json, text/event-stream"}
        )
    assert r.status_code == 401
    assert r.json()["error"]["code"] == "unauthenticated"


@pytest.mark.parametrize("tool", sorted(TOOLS))
async def test_the_tool_access_matrix(world: World, tool: str) -> None:
    rule, arguments = TOOLS[tool]
    got: dict[str, str] = {}
    leaks: list[str] = []
    for kind in KINDS:
        s = await seed(world)
        before = await written(world)
        is_error, text = await call(world, kind, tool, arguments(s))
        if is_error:
            code = text.rsplit("[code: ", 1)[-1].rstrip("] \n") if "[code: " in text else text[:80]
            got[kind] = code
            assert await written(world) == before, f"{kind} was refused {tool} but something was written"
        else:
            got[kind] = OK
        if kind not in VISIBLE_TO and (s.text in text or s.queued in text):
            leaks.append(kind)
    assert got == dict(zip(KINDS, RULES[rule], strict=True))
    assert leaks == [], "callers who may not read acme's web project saw its text"
