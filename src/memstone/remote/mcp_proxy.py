"""``memstone mcp`` against a team server: a stdio MCP server whose every request is answered by the server's
``/mcp`` endpoint (the same tools, prompts, resources, rules and errors; nothing is decided here).

The agent's host starts ``memstone mcp`` as it always does; with ``MEMSTONE_URL=https://…`` and
``MEMSTONE_TOKEN`` set, this process holds no store and no database credentials: it forwards each request with
the token and the working directory's project scope (header ``X-Memstone-Project``), so the server's tools
address the project the agent is in, within the principal's grants.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

import httpx2
from mcp.client.streamable_http import streamable_http_client
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

from mcp import Client, types

from .. import __version__
from .url import server_base

PROJECT_HEADER = "X-Memstone-Project"  # read by api/mcp/transport.py (AuthenticatedMCP)


@asynccontextmanager
async def remote_client(url: str, *, token: str | None, project: str | None) -> AsyncIterator[Client]:
    """An MCP client on the team server's ``/mcp``, authenticated with ``token``."""
    headers: dict[str, str] = {}
    if token:
        headers["Authorization"] = f"Bearer {token.strip()}"
    if project:
        headers[PROJECT_HEADER] = project
    http = httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30.0, read=300.0))
    async with http, Client(streamable_http_client(f"{server_base(url)}/mcp", http_client=http)) as client:
        yield client


def proxy_server(remote: Client) -> Server[Any]:
    """A low-level MCP server that answers each request with ``remote``'s answer to the same request."""

    async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return await remote.list_tools(cursor=params.cursor if params else None, cache_mode="bypass")

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        return await remote.call_tool(params.name, dict(params.arguments or {}))

    async def list_resources(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListResourcesResult:
        return await remote.list_resources(cursor=params.cursor if params else None, cache_mode="bypass")

    async def list_templates(
        ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        return await remote.list_resource_templates(cursor=params.cursor if params else None, cache_mode="bypass")

    async def read_resource(ctx: Any, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        return await remote.read_resource(str(params.uri), cache_mode="bypass")

    async def list_prompts(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListPromptsResult:
        return await remote.list_prompts(cursor=params.cursor if params else None, cache_mode="bypass")

    async def get_prompt(ctx: Any, params: types.GetPromptRequestParams) -> types.GetPromptResult:
        arguments: Mapping[str, str] = params.arguments or {}
        return await remote.get_prompt(params.name, dict(arguments))

    return Server(
        "memstone",
        version=__version__,
        instructions=remote.instructions,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_list_resource_templates=list_templates,
        on_read_resource=read_resource,
        on_list_prompts=list_prompts,
        on_get_prompt=get_prompt,
    )


async def serve_proxy(url: str, *, token: str | None, project: str | None) -> None:
    """Serve the team server's MCP endpoint on stdio until the client goes away."""
    async with remote_client(url, token=token, project=project) as remote:
        server = proxy_server(remote)
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())


__all__ = ["PROJECT_HEADER", "proxy_server", "remote_client", "serve_proxy"]
