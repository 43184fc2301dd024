"""The server over streamable HTTP on 127.0.0.1: mounted in a host Starlette app, as `memstone mcp --transport
streamable-http`, and through `memstone serve`'s extra-mount hook. The SDK's client in both handshake modes."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, Literal

import httpx2
import pytest
from mcp.types import TextContent
from mcp_helpers import serving
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from mcp import Client
from memstone import MemoryService
from memstone.agents.settings import AgentSettings
from memstone.api.http.routing import MAX_BODY
from memstone.api.mcp.server import build_server, mcp_mount, mcp_routes


async def exercise(url: str, mode: Literal["legacy", "auto"], seeded: dict[str, str]) -> None:
    async with Client(url, mode=mode, read_timeout_seconds=30) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        assert {"memory_mandatory", "memory_search", "memory_remember"} <= names
        result = await client.call_tool("memory_mandatory", {})
        assert result.is_error is False
        assert isinstance(result.structured_content, dict)
        assert {m["id"] for m in result.structured_content["memories"]} == {seeded["generated"], seeded["tabs"]}
        created = await client.call_tool("memory_remember", {"text": f"HTTP works in {mode} mode."})
        assert created.is_error is False
        failed = await client.call_tool("memory_history", {"id": "ent_01M8RC00TC02RDF3185HSEDKRA"})
        assert failed.is_error is True
        assert isinstance(failed.content[0], TextContent) and "not found" in failed.content[0].text


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_mounted_in_a_host_app(
    mode: Literal["legacy", "auto"], service: MemoryService, settings: AgentSettings, seeded: dict[str, str]
) -> None:
    routes, lifespan = mcp_routes(build_server(service, settings))

    async def health(request: Request) -> JSONResponse:
        return JSONResponse({"ok": True})

    app = Starlette(routes=[*routes, Route("/health", health)], lifespan=lambda app: lifespan())
    async with serving(app) as base:
        async with httpx2.AsyncClient() as http:
            assert (await http.get(f"{base}/health")).json() == {"ok": True}
            # DNS-rebinding protection: a foreign Host header is refused on a loopback server.
            rebinding = await http.post(f"{base}/mcp", headers={"Host": "evil.example"}, json={})
            assert rebinding.status_code in (400, 403, 421)
        await exercise(f"{base}/mcp", mode, seeded)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def _chunks(body: bytes) -> AsyncIterator[bytes]:
    for start in range(0, len(body), 64 * 1024):  # sent chunked: no Content-Length for the cap to read
        yield body[start : start + 64 * 1024]


async def test_memstone_mcp_over_streamable_http(
    server_env: dict[str, str], seeded: dict[str, str], tmp_path: Path
) -> None:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "memstone.cli.main", "mcp", "--transport", "streamable-http", "--port", str(port),
         "--no-backfill"],
        env={**server_env, "PATH": "/usr/bin:/bin"},
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while True:
            assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else "server exited"
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.2):
                break
            assert time.monotonic() < deadline, "the server did not listen"
            await asyncio.sleep(0.05)
        for mode in ("legacy", "auto"):
            await exercise(f"http://127.0.0.1:{port}/mcp", mode, seeded)  # type: ignore[arg-type]
        # The body cap of serve's /mcp mount holds here too (issue 12): before, the SDK read any body whole.
        big = b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"pad": "' + b"x" * MAX_BODY + b'"}}'
        async with httpx2.AsyncClient() as http:
            for headers in ({}, {"chunked": "yes"}):
                r = await http.post(
                    f"http://127.0.0.1:{port}/mcp",
                    content=_chunks(big) if headers else big,
                    headers={"content-type": "application/json", "accept": "application/json, text/event-stream"},
                )
                assert r.status_code == 422, r.text
                assert r.json()["error"]["code"] == "invalid_input"
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        if proc.stderr:
            proc.stderr.close()


async def test_memstone_serve_mounts_it_through_extra_mounts(
    store_url: str, settings: AgentSettings, seeded: dict[str, str]
) -> None:
    from memstone.api.http.app import create_app
    from memstone.api.http.settings import Settings

    app = create_app(Settings(url=store_url, embedding="none"), extra_mounts={"/mcp": mcp_mount(settings=settings)})
    async with serving(app) as base:
        await exercise(f"{base}/mcp/", "legacy", seeded)


class TokenState:
    """A host app's state in token mode, at the HTTP edge: only a Bearer token passes."""

    def __init__(self, service: MemoryService) -> None:
        self.service = service

    async def authenticate(self, headers: Any) -> object:
        from memstone.auth.model import Access, Grant, Principal
        from memstone.domain.errors import Unauthenticated

        if headers.get("authorization") != "Bearer good":
            raise Unauthenticated("this server needs an API token", hint="memstone token create")
        alice = Principal(principal_id="prn_alice", user="alice", org="acme")
        return Access(principal=alice, grants=(Grant(scope="*", permission="read"),))

    async def org_of(self, user: str) -> str | None:
        return "acme" if user == "alice" else None


async def test_the_mount_asks_the_host_to_authenticate(
    service: MemoryService, settings: AgentSettings, seeded: dict[str, str]
) -> None:
    async with mcp_mount(settings=settings)(TokenState(service)) as mounted:
        app = Starlette(routes=[Route("/mcp", endpoint=mounted, methods=["GET", "POST", "DELETE"])])
        async with serving(app) as base:
            async with httpx2.AsyncClient() as http:
                refused = await http.post(f"{base}/mcp", json={})
            assert refused.status_code == 401
            assert refused.json()["error"]["code"] == "unauthenticated"
            client = httpx2.AsyncClient(headers={"Authorization": "Bearer good"})
            try:
                from mcp.client.streamable_http import streamable_http_client

                transport = streamable_http_client(f"{base}/mcp", http_client=client)
                async with Client(transport, mode="legacy") as mcp_client:
                    result = await mcp_client.call_tool("memory_mandatory", {})
                    assert result.is_error is False
            finally:
                await client.aclose()
