"""The access-control matrix: every HTTP route of the real app × every kind of principal → the expected status.

The routes are read from the app itself (``app.routes``), so a route added without a rule here fails
``test_every_route_has_a_rule``. Each cell runs against a fresh entry (so a write that succeeds for one principal
cannot change what the next one sees), and every refused call must leave the store exactly as it was and must
not echo the seeded text (issue 12: "0 forbidden reads or writes succeed on any route").
"""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from api_support import Server, seed_token_mode, started
from starlette.routing import Mount, Route

from memstone import EntryInput
from memstone.agents.settings import AgentSettings
from memstone.api.http import Settings, create_app
from memstone.api.mcp.server import mcp_mount
from memstone.capture import CaptureSettings, ReviewQueue, UserPrompt, capture
from memstone.domain.model import EntryPatch, Relation
from memstone.testing.proposals import seed_proposal

ACME_WEB = "memstone://orgs/acme/projects/web"
PRINCIPALS = ("none", "revoked", "no_grant", "other_org", "reader", "writer", "admin")

# What each kind of rule answers, in PRINCIPALS order. "read" routes name the scope or the entry of acme's web
# project; an unreadable entry is 404 (it does not exist for the caller), a named scope without the grant is 403.
RULES: dict[str, tuple[int, ...]] = {
    "public": (200, 200, 200, 200, 200, 200, 200),
    "redirect": (307, 307, 307, 307, 307, 307, 307),
    "authenticated": (401, 401, 200, 200, 200, 200, 200),
    "read_scope": (401, 401, 403, 403, 200, 200, 200),
    "read_entry": (401, 401, 404, 404, 200, 200, 200),
    "write_scope": (401, 401, 403, 403, 403, 201, 201),
    "write_entry": (401, 401, 404, 404, 403, 200, 200),
    "admin_entry": (401, 401, 404, 404, 403, 403, 200),
    "capture_scope": (401, 401, 403, 403, 403, 200, 200),  # a captured event: 200 with what capture did
    "admin_org": (401, 401, 403, 403, 403, 403, 202),  # an embedding run of acme: admin on '*' of acme only
    # The streamable-HTTP endpoint: the token is checked before the SDK sees the request; an authenticated call
    # without an MCP session is the SDK's 400 "Missing session ID" (what each tool allows, through a real MCP
    # client, is tests/mcp/test_mcp_access_matrix.py).
    "mcp": (401, 401, 400, 400, 400, 400, 400),
    # An id that names nothing: the token is checked first, then every caller gets the same 404, so it reveals
    # nothing.
    "unknown_item": (401, 401, 404, 404, 404, 404, 404),
}
# Lists that show only what the caller can read: everyone authenticated gets 200, and the seeded text only if
# they may read it.
LISTS = {"authenticated_list": (401, 401, 200, 200, 200, 200, 200)}
VISIBLE_TO = {"reader", "writer", "admin"}


@dataclass
class Seed:
    """One fresh pair of entries in acme/web: ``a`` (2 versions, slug, relates to ``b``) and a queued capture."""

    a: str
    b: str
    c: str
    text: str
    item: str
    proposal: str  # a PROPOSED maintenance merge in acme/web whose merged text holds ``text``
    run: str  # its run


@dataclass(frozen=True)
class Case:
    rule: str
    request: Callable[[Seed], tuple[str, dict[str, Any], Any]]  # (path, query, json body)


def _q(**params: Any) -> dict[str, Any]:
    return params


CASES: dict[tuple[str, str], Case] = {
    ("GET", "/api/openapi.json"): Case("public", lambda s: ("/api/openapi.json", {}, None)),
    ("GET", "/"): Case("redirect", lambda s: ("/", {}, None)),
    ("GET", "/memory/explorer"): Case("redirect", lambda s: ("/memory/explorer", {}, None)),
    ("GET", "/memory/explorer/"): Case("public", lambda s: ("/memory/explorer/", {}, None)),
    ("GET", "/memory/explorer/{rest:path}"): Case("public", lambda s: ("/memory/explorer/entries", {}, None)),
    ("GET", "/memory/static"): Case("public", lambda s: ("/memory/static/explorer.js", {}, None)),
    ("GET", "/mcp"): Case("mcp", lambda s: ("/mcp", {}, None)),
    ("POST", "/mcp"): Case("mcp", lambda s: ("/mcp", {}, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"})),
    ("DELETE", "/mcp"): Case("mcp", lambda s: ("/mcp", {}, None)),
    ("GET", "/api/session"): Case("authenticated", lambda s: ("/api/session", {}, None)),
    ("GET", "/api/memories/scopes"): Case("authenticated_list", lambda s: ("/api/memories/scopes", {}, None)),
    ("GET", "/api/capture/queue"): Case("authenticated_list", lambda s: ("/api/capture/queue", {}, None)),
    ("GET", "/api/memories"): Case("read_scope", lambda s: ("/api/memories", _q(scope=ACME_WEB), None)),
    ("POST", "/api/memories"): Case(
        "write_scope", lambda s: ("/api/memories", _q(scope=ACME_WEB), {"kind": "fact", "text": s.text + " New."})
    ),
    ("GET", "/api/memories/search"): Case(
        "read_scope", lambda s: ("/api/memories/search", _q(q="deploys", scope=ACME_WEB, mode="fts"), None)
    ),
    ("GET", "/api/memories/recall"): Case("read_scope", lambda s: ("/api/memories/recall", _q(scope=ACME_WEB), None)),
    ("GET", "/api/memories/lookup"): Case(
        "read_scope",
        lambda s: ("/api/memories/lookup", _q(scope=ACME_WEB, kind="fact", slug="deploy-" + s.a[-6:].lower()), None),
    ),
    ("GET", "/api/memories/changes"): Case("read_scope", lambda s: ("/api/memories/changes", _q(scope=ACME_WEB), None)),
    ("GET", "/api/memories/revisions/{revision}"): Case(
        "read_scope", lambda s: ("/api/memories/revisions/1", _q(scope=ACME_WEB), None)
    ),
    ("GET", "/api/memories/export"): Case("read_scope", lambda s: ("/api/memories/export", _q(scope=ACME_WEB), None)),
    ("GET", "/api/memories/{entry_id}"): Case("read_entry", lambda s: (f"/api/memories/{s.a}", {}, None)),
    ("PATCH", "/api/memories/{entry_id}"): Case(
        "write_entry", lambda s: (f"/api/memories/{s.a}", {}, {"text": s.text + " Patched.", "revision": 2})
    ),
    ("GET", "/api/memories/{entry_id}/versions"): Case(
        "read_entry", lambda s: (f"/api/memories/{s.a}/versions", {}, None)
    ),
    ("GET", "/api/memories/{entry_id}/versions/{version}"): Case(
        "read_entry", lambda s: (f"/api/memories/{s.a}/versions/1", {}, None)
    ),
    ("GET", "/api/memories/{entry_id}/source"): Case("read_entry", lambda s: (f"/api/memories/{s.a}/source", {}, None)),
    ("GET", "/api/memories/{entry_id}/diff"): Case("read_entry", lambda s: (f"/api/memories/{s.a}/diff", {}, None)),
    ("GET", "/api/memories/{entry_id}/blame"): Case("read_entry", lambda s: (f"/api/memories/{s.a}/blame", {}, None)),
    ("POST", "/api/memories/{entry_id}/flag"): Case(
        "write_entry", lambda s: (f"/api/memories/{s.a}/flag", {}, {"important": True})
    ),
    ("POST", "/api/memories/{entry_id}/relations"): Case(
        "write_entry", lambda s: (f"/api/memories/{s.a}/relations", {}, {"target": s.c})
    ),
    ("DELETE", "/api/memories/{entry_id}/relations"): Case(
        "write_entry", lambda s: (f"/api/memories/{s.a}/relations", _q(target=s.b), None)
    ),
    ("POST", "/api/memories/{entry_id}/rename"): Case(
        "write_entry", lambda s: (f"/api/memories/{s.a}/rename", {}, {"slug": "renamed-" + s.a[-6:].lower()})
    ),
    ("POST", "/api/memories/{entry_id}/revert"): Case(
        "write_entry", lambda s: (f"/api/memories/{s.a}/revert", {}, {"to": "1"})
    ),
    ("POST", "/api/memories/{entry_id}/forget"): Case("write_entry", lambda s: (f"/api/memories/{s.a}/forget", {}, {})),
    ("POST", "/api/memories/{entry_id}/reactivate"): Case(
        "write_entry", lambda s: (f"/api/memories/{s.b}/reactivate", {}, {})
    ),
    ("GET", "/api/records"): Case("read_scope", lambda s: ("/api/records", _q(scope=ACME_WEB), None)),
    ("GET", "/api/memories/{entry_id}/tombstones"): Case(
        "read_entry", lambda s: (f"/api/memories/{s.a}/tombstones", {}, None)
    ),
    ("POST", "/api/capture/events"): Case(
        "capture_scope",
        lambda s: ("/api/capture/events", _q(scope=ACME_WEB), {"kind": "user-prompt", "text": "We use pnpm, not npm."}),
    ),
    ("POST", "/api/memories/{entry_id}/purge"): Case(
        "admin_entry", lambda s: (f"/api/memories/{s.a}/purge", {}, {"reason": "written by mistake"})
    ),
    ("POST", "/api/maintenance/runs"): Case(
        "write_scope", lambda s: ("/api/maintenance/runs", _q(scope=ACME_WEB), None)
    ),
    ("GET", "/api/maintenance/status"): Case(
        "read_scope", lambda s: ("/api/maintenance/status", _q(scope=ACME_WEB), None)
    ),
    ("GET", "/api/maintenance/runs"): Case("authenticated_list", lambda s: ("/api/maintenance/runs", {}, None)),
    ("GET", "/api/maintenance/proposals"): Case(
        "authenticated_list", lambda s: ("/api/maintenance/proposals", {}, None)
    ),
    ("GET", "/api/maintenance/runs/{run_id}"): Case(
        "read_entry", lambda s: (f"/api/maintenance/runs/{s.run}", {}, None)
    ),
    ("GET", "/api/maintenance/proposals/{proposal_id}"): Case(
        "read_entry", lambda s: (f"/api/maintenance/proposals/{s.proposal}", {}, None)
    ),
    ("POST", "/api/maintenance/proposals/{proposal_id}/accept"): Case(
        "write_entry", lambda s: (f"/api/maintenance/proposals/{s.proposal}/accept", {}, None)
    ),
    ("POST", "/api/maintenance/proposals/{proposal_id}/reject"): Case(
        "write_entry", lambda s: (f"/api/maintenance/proposals/{s.proposal}/reject", {}, None)
    ),
    ("POST", "/api/embedding/runs"): Case(
        "admin_org", lambda s: ("/api/embedding/runs", _q(org="acme"), {"kind": "backfill"})
    ),
    ("GET", "/api/embedding/runs/{run_id}"): Case(
        "unknown_item", lambda s: ("/api/embedding/runs/erun_01M9512B0VAVBQJAWYTGB8CFA5", {}, None)
    ),
    ("POST", "/api/capture/queue/{item_id}/accept"): Case(
        "write_entry", lambda s: (f"/api/capture/queue/{s.item}/accept", {}, None)
    ),
    ("POST", "/api/capture/queue/{item_id}/reject"): Case(
        "write_entry", lambda s: (f"/api/capture/queue/{s.item}/reject", {}, {"note": "no"})
    ),
}


def app_routes(server: Server) -> set[tuple[str, str]]:
    """Every (method, path) the app routes, read from the Starlette app (HEAD aside: Starlette adds it to GET)."""
    found: set[tuple[str, str]] = set()
    for route in server.app.routes:
        if isinstance(route, Route):
            for method in sorted((route.methods or set()) - {"HEAD"}):
                found.add((method, route.path))
        elif isinstance(route, Mount):
            found.add(("GET", route.path))
        else:  # pragma: no cover - a new kind of route must get a rule first
            found.add(("?", repr(route)))
    return found


@pytest.fixture
async def server(tmp_path: Path) -> AsyncIterator[Server]:
    """A token-mode app with /mcp mounted (its project scope is acme's web project), with a (hashing) model."""
    await seed_token_mode(tmp_path)
    url = f"sqlite:///{tmp_path / 'm.db'}"
    agent = AgentSettings(url=url, project_scope=ACME_WEB, user_scope="memstone://users/anonymous", home=tmp_path)
    app = create_app(
        Settings(url=url, embedding="hashing-16", auth="token", host="0.0.0.0"),  # a model: embedding runs run
        extra_mounts={"/mcp": mcp_mount(settings=agent)},
    )
    async with started(app) as running:
        yield running


async def principals(server: Server) -> dict[str, dict[str, str]]:
    """The headers of each kind of principal (``none`` sends no token; ``revoked`` had write, then was revoked)."""
    kinds: dict[str, tuple[str, str, dict[str, Any]]] = {
        "revoked": ("rick", "acme", {ACME_WEB: "write"}),
        "no_grant": ("nora", "acme", {}),
        "other_org": ("eve", "globex", {"*": "write"}),
        "reader": ("bob", "acme", {ACME_WEB: "read"}),
        "writer": ("alice", "acme", {ACME_WEB: "write"}),
        "admin": ("carol", "acme", {"*": "admin"}),
    }
    out: dict[str, dict[str, str]] = {"none": {}}
    for kind, (user, org, grants) in kinds.items():
        secret, token_id = await server.token(user, org, grants)
        if kind == "revoked":
            await server.revoke(token_id)
        out[kind] = server.as_(secret)
    return out


_serial = itertools.count(1)


async def seed(server: Server) -> Seed:
    """Fresh entries for one cell, written by the server's own (unrestricted, local) service."""
    svc = server.state.service
    n = next(_serial)
    text = f"Acme deploys with uv, batch {n}."
    b = await svc.remember(
        None, entries=[EntryInput(kind="fact", text=f"Acme pins Python, batch {n}.")], scope=ACME_WEB
    )
    assert b is not None
    b_id = b.changes[0].entry_id
    c = await svc.remember(None, entries=[EntryInput(kind="fact", text=f"Acme lints, batch {n}.")], scope=ACME_WEB)
    assert c is not None
    a = await svc.remember(
        None,
        entries=[EntryInput(kind="fact", text=text, relations=[Relation(kind="relates-to", target=b_id)])],
        scope=ACME_WEB,
    )
    assert a is not None
    a_id = a.changes[0].entry_id
    await svc.forget(a, entries=[b_id])
    await svc.update(a_id, EntryPatch(slug="deploy-" + a_id[-6:].lower()))
    queued = await capture(
        svc, UserPrompt(text=f"Never log card numbers, batch {n}."), scope=ACME_WEB,
        settings=CaptureSettings().with_mode(ACME_WEB, "review"), queue=ReviewQueue.of(svc),
    )  # fmt: skip
    assert queued.status == "queued"
    c_id = c.changes[0].entry_id
    proposal = await seed_proposal(svc, ACME_WEB, c_id, text)
    return Seed(
        a=a_id, b=b_id, c=c_id, text=text, item=str(queued.outcomes[0].queue_item),
        proposal=proposal.proposal_id, run=proposal.run_id,
    )  # fmt: skip


async def test_every_route_has_a_rule(server: Server) -> None:
    routed = app_routes(server)
    assert routed - set(CASES) == set(), "routes without an access rule in this matrix"
    assert set(CASES) - routed == set(), "rules for routes the app no longer has"
    table = {(op.method, op.path) for op in server.app.state.operations}
    assert table <= routed


@pytest.mark.parametrize("route", sorted(CASES), ids=[f"{m} {p}" for m, p in sorted(CASES)])
async def test_the_access_matrix(server: Server, route: tuple[str, str]) -> None:
    case = CASES[route]
    expected = RULES.get(case.rule) or LISTS[case.rule]
    who = await principals(server)
    got: dict[str, int] = {}
    leaks: list[str] = []
    for kind in PRINCIPALS:
        s = await seed(server)
        path, params, body = case.request(s)
        before = await server.counts()
        queue_before = (await server.client.get("/api/capture/queue", headers=who["admin"])).json()["items"]
        r = await server.client.request(route[0], path, params=params, json=body, headers=who[kind])
        got[kind] = r.status_code
        assert r.status_code < 500, (kind, r.text)
        if r.status_code >= 400:
            assert await server.counts() == before, f"{kind} was refused but something was written"
            queue_after = (await server.client.get("/api/capture/queue", headers=who["admin"])).json()["items"]
            assert queue_after == queue_before, f"{kind} was refused but the review queue changed"
            if r.headers.get("content-type", "").startswith("application/json") and route[1] != "/mcp":
                past_the_rule = ("capability_not_supported",) if case.rule == "admin_org" and kind == "admin" else ()
                assert r.json()["error"]["code"] in ("unauthenticated", "forbidden", "not_found", *past_the_rule), (
                    r.text
                )
        if kind not in VISIBLE_TO and s.text in r.text:
            leaks.append(kind)
    assert got == dict(zip(PRINCIPALS, expected, strict=True))
    assert leaks == [], "callers who may not read the entry saw its text"
