"""/mcp (an extra mount) has the /api body limit: the same 256 KiB and the same 422 (issue 12, finding 7).

Before, the cap covered /api only: a body posted to /mcp was read whole by the MCP SDK, however large.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from api_support import Server, seed_token_mode, started

from memstone.agents.settings import AgentSettings
from memstone.api.http import Settings, create_app
from memstone.api.http.routing import MAX_BODY
from memstone.api.mcp.server import mcp_mount

PROJECT = "memstone://orgs/acme/projects/web"


@pytest.fixture(params=["local", "token"])
async def server(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Server]:
    """A local server, or a token-mode one whose client sends the token of a principal with no grant."""
    url = f"sqlite:///{tmp_path / 'm.db'}"
    options = {"auth": "token", "host": "0.0.0.0"} if request.param == "token" else {}
    if request.param == "token":
        await seed_token_mode(tmp_path)
    agent = AgentSettings(url=url, project_scope=PROJECT, user_scope="memstone://users/anonymous", home=tmp_path)
    app = create_app(Settings(url=url, embedding="none", **options), extra_mounts={"/mcp": mcp_mount(settings=agent)})
    async with started(app) as running:
        if request.param == "token":
            secret, _ = await running.token("nora", "acme")
            running.client.headers["Authorization"] = f"Bearer {secret}"
        yield running


def refused(r: object) -> str:
    assert getattr(r, "status_code", None) == 422, getattr(r, "text", r)
    error = r.json()["error"]  # type: ignore[attr-defined]
    assert error["code"] == "invalid_input"
    return str(error["message"])


@pytest.mark.parametrize("path", ["/mcp", "/mcp/"])
async def test_a_declared_oversize_body_is_refused_unread(server: Server, path: str) -> None:
    r = await server.client.post(
        path,
        content=b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}',
        headers={"content-type": "application/json", "content-length": str(400 * 1024 * 1024)},
    )
    assert f"the limit is {MAX_BODY}" in refused(r)


async def test_an_oversize_json_body_is_refused_with_the_api_error(server: Server) -> None:
    big = b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"pad": "' + b"x" * MAX_BODY + b'"}}'
    r = await server.client.post(
        "/mcp", content=big, headers={"content-type": "application/json", "accept": "application/json"}
    )
    api = await server.client.post(
        "/api/memories", content=big, headers={"content-type": "application/json"}, params={"scope": PROJECT}
    )
    assert refused(r) == refused(api)
    assert r.json()["error"]["hint"] == api.json()["error"]["hint"] == "send a smaller body"


async def test_a_chunked_body_is_read_only_up_to_the_limit(server: Server) -> None:
    chunk = b" " * 65536
    sent = 0

    async def endless() -> AsyncIterator[bytes]:
        nonlocal sent
        for _ in range(256):  # 16 MiB if read whole
            sent += len(chunk)
            yield chunk

    r = await server.client.post("/mcp", content=endless(), headers={"content-type": "application/json"})
    assert "limit" in refused(r)
    assert sent <= MAX_BODY + 2 * len(chunk)


async def test_a_bad_content_length_is_invalid_input(server: Server) -> None:
    r = await server.client.post("/mcp", content=b"{}", headers={"content-length": "12abc"})
    assert "not a number of bytes" in refused(r)
