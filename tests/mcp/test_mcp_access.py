"""/mcp in token mode applies the same grants as /api (issue 12, finding 1), through a real MCP client.

Before the policy moved into the service, the mount checked the token and then ran every tool as the server:
a principal with no grant, or from another organization, could read, search, revise, forget and relate any
entry, and writes were recorded with author null. Each row below is one such attack; it must be refused, and
nothing may be written.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp_helpers import serving

from mcp import Client
from memstone.agents.settings import AgentSettings
from memstone.api.http.app import create_app, open_principals
from memstone.api.http.settings import Settings
from memstone.api.mcp.server import mcp_mount

ACME_WEB = "memstone://orgs/acme/projects/web"


@pytest.fixture
async def world(tmp_path: Path) -> AsyncIterator[dict[str, Any]]:
    """A token-mode server with /mcp. acme: alice (write on web), bob (read on web), nobody (no grant);
    globex: eve (write on '*'). alice has stored one entry in acme's web project."""
    db = tmp_path / "m.db"
    store = await open_principals(f"sqlite:///{db}")
    tokens: dict[str, str] = {}
    try:
        for user, org, grants in (
            ("alice", "acme", {ACME_WEB: "write"}),
            ("bob", "acme", {ACME_WEB: "read"}),
            ("nobody", "acme", {}),
            ("eve", "globex", {"*": "write"}),
        ):
            principal = await store.ensure_principal(user=user, org=org)
            for scope, permission in grants.items():
                await store.set_grant(principal.principal_id, scope, permission)  # type: ignore[arg-type]
            _, tokens[user] = await store.issue_token(principal.principal_id)
    finally:
        await store.aclose()
    url = f"sqlite:///{db}"
    agent = AgentSettings(url=url, project_scope=ACME_WEB, user_scope="memstone://users/anonymous", home=tmp_path)
    app = create_app(
        Settings(url=url, embedding="none", auth="token", host="0.0.0.0"),
        extra_mounts={"/mcp": mcp_mount(settings=agent)},
    )
    async with serving(app) as base:
        async with httpx2.AsyncClient(base_url=base, headers={"Authorization": f"Bearer {tokens['alice']}"}) as api:
            created = await api.post(
                "/api/memories", params={"scope": ACME_WEB}, json={"kind": "fact", "text": "Acme deploys with uv."}
            )
            assert created.status_code == 201, created.text
            entry = created.json()["record"]["entry_id"]
        yield {"base": base, "tokens": tokens, "entry": entry, "api": base}


async def call(world: dict[str, Any], user: str, tool: str, args: dict[str, Any]) -> tuple[bool, str, Any]:
    """(is_error, text, structured content) of one tool call made with ``user``'s token."""
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {world['tokens'][user]}"}, timeout=30)
    try:
        from mcp.client.streamable_http import streamable_http_client

        transport = streamable_http_client(f"{world['base']}/mcp", http_client=http)
        async with Client(transport, mode="legacy") as client:
            result = await client.call_tool(tool, args)
            text = " ".join(getattr(c, "text", "") for c in result.content)
            return bool(result.is_error), text, result.structured_content
    finally:
        await http.aclose()


async def versions(world: dict[str, Any]) -> int:
    async with httpx2.AsyncClient(
        base_url=world["base"], headers={"Authorization": f"Bearer {world['tokens']['alice']}"}
    ) as api:
        found = await api.get(f"/api/memories/{world['entry']}/versions")
        assert found.status_code == 200, found.text
        return int(found.json()["total"])


ATTACKS = [
    pytest.param("eve", "memory_source", {"id": "{entry}"}, "not_found", id="other-org-reads-by-id"),
    pytest.param("eve", "memory_history", {"id": "{entry}"}, "not_found", id="other-org-reads-history"),
    pytest.param("eve", "memory_search", {"query": "deploys", "scope": "project"}, "forbidden",
                 id="other-org-searches"),
    pytest.param("eve", "memory_list", {"scope": "project"}, "forbidden", id="other-org-lists"),
    pytest.param("eve", "memory_update", {"id": "{entry}", "text": "Acme deploys with pip."}, "not_found",
                 id="other-org-revises"),
    pytest.param("eve", "memory_forget", {"ids": ["{entry}"]}, "not_found", id="other-org-forgets"),
    pytest.param("eve", "memory_relate", {"source": "{entry}", "target": "{entry}"}, "not_found",
                 id="other-org-relates"),
    pytest.param("eve", "memory_remember", {"text": "Globex was here.", "scope": "project"}, "forbidden",
                 id="other-org-writes-the-project"),
    pytest.param("nobody", "memory_source", {"id": "{entry}"}, "not_found", id="no-grant-reads-by-id"),
    pytest.param("nobody", "memory_search", {"query": "deploys", "scope": "project"}, "forbidden",
                 id="no-grant-searches"),
    pytest.param("nobody", "memory_remember", {"text": "Hello.", "scope": "project"}, "forbidden",
                 id="no-grant-writes"),
    pytest.param("bob", "memory_update", {"id": "{entry}", "text": "Acme deploys with pip."}, "forbidden",
                 id="read-grant-revises"),
    pytest.param("bob", "memory_forget", {"ids": ["{entry}"]}, "forbidden", id="read-grant-forgets"),
    pytest.param("bob", "memory_remember", {"text": "Bob was here.", "scope": "project"}, "forbidden",
                 id="read-grant-writes"),
]  # fmt: skip


@pytest.mark.parametrize(("user", "tool", "args", "code"), ATTACKS)
async def test_a_forbidden_tool_call_is_refused_and_writes_nothing(
    world: dict[str, Any], user: str, tool: str, args: dict[str, Any], code: str
) -> None:
    before = await versions(world)
    filled = {
        k: ([x.format(**world) for x in v] if isinstance(v, list) else v.format(**world) if isinstance(v, str) else v)
        for k, v in args.items()
    }
    is_error, text, _ = await call(world, user, tool, filled)
    assert is_error, f"{user} could call {tool}: {text}"
    assert f"[code: {code}]" in text
    assert "Acme deploys with uv." not in text
    assert await versions(world) == before


async def test_granted_calls_work_and_record_the_principal(world: dict[str, Any]) -> None:
    is_error, text, found = await call(
        world, "bob", "memory_search", {"query": "deploys", "scope": "project", "mode": "fts"}
    )
    assert not is_error, text
    assert [h["id"] for h in found["hits"]] == [world["entry"]]
    is_error, text, done = await call(
        world, "alice", "memory_update", {"id": world["entry"], "text": "Acme deploys with uv 0.9."}
    )
    assert not is_error, text
    assert done["status"] == "updated"
    async with httpx2.AsyncClient(
        base_url=world["base"], headers={"Authorization": f"Bearer {world['tokens']['alice']}"}
    ) as api:
        history = (await api.get(f"/api/memories/{world['entry']}/versions")).json()["items"]
    assert [(v["author"], v["surface"]) for v in history] == [("alice", "api"), ("alice", "agent-session")]


async def test_the_user_scope_of_a_principal_is_its_own_never_the_anonymous_one(world: dict[str, Any]) -> None:
    is_error, text, done = await call(world, "eve", "memory_remember", {"text": "Eve prefers tabs.", "scope": "user"})
    assert not is_error, text
    assert done["revisions"][0]["scope"] == "memstone://users/eve"
