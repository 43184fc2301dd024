"""The memstone MCP server: ``build_server(service, settings)`` → an ``MCPServer`` (stdio or streamable HTTP).

Tools mirror the service (``memory_mandatory``, ``memory_search``, ``memory_source``, ``memory_list``,
``memory_history``, ``memory_changes``, ``memory_recall``, ``memory_remember``, ``memory_update``,
``memory_forget``, ``memory_reactivate``, ``memory_relate``); each docstring is the model's contract. Prompts:
``session_start`` and ``capture``. Resources: ``memory://mandatory`` and ``memory://entry/{entry_id}`` (Markdown).
The tools live by concern (``reads.py``, ``writes.py``, ``review.py``; resources and prompts in ``content.py``),
each registered here with one line; their argument types are in ``args.py``, the caller in ``caller.py``.

Composition: ``memstone mcp`` opens the service and calls :func:`serve` (stdio by default). ``memstone serve``
mounts the same server over streamable HTTP with :func:`mcp_mount` (its ``extra_mounts`` hook); any other
Starlette app can use :func:`mcp_routes`::

    create_app(http_settings, extra_mounts={"/mcp": mcp_mount()})      # memstone serve
    routes, lifespan = mcp_routes(build_server(service, settings))      # Route("/mcp", …) + its lifespan
    app = Starlette(routes=[*routes, ...], lifespan=lambda app: lifespan())
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager, suppress
from dataclasses import replace
from typing import Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp
from mcp.server.transport_security import TransportSecuritySettings
from mcp.types import ToolAnnotations
from starlette.types import ASGIApp

from ...agents.settings import AgentSettings
from ...domain.errors import Unauthenticated
from ...service import MemoryService
from ...service.policy import Actor, UserOrg
from .caller import Caller, access_of, project_of
from .content import register_content
from .errors import MemstoneMCPServer
from .maintenance import register_maintenance_tools
from .reads import register_read_tools
from .registry import ToolFn
from .review import register_review_tools
from .transport import AuthenticatedMCP, MountState, backfill_loop, mcp_routes
from .writes import register_write_tools

INSTRUCTIONS = """\
memstone is the durable, versioned memory of this project: facts, decisions, conventions, constraints, \
corrections, lessons and procedures that later sessions need. Nothing is ever lost: every change is a new version.

Recall at session start, in order: (1) memory_mandatory, and read every memory it returns (they hold in every \
session); (2) memory_search for the task with exclude_mandatory=true, then memory_source for ids worth reading \
in full. A "memstone briefing" already in context (from a hook) covers step 1. memory_recall does both in one call.

Capture without being asked when the user states durable project information or standing guidance (lifecycle, \
environment, policies, conventions, anything that changes later planning, review, compatibility or risk), or \
when you confirm non-obvious knowledge another agent would need (invariants, sources of truth, coupling, root \
causes, decisions and trade-offs, surprising tool behaviour, procedures). Keep the user's rationale with the \
rule. Kinds: fact for lifecycle/environment state; decision or convention for standing guidance; correction, \
lesson, procedure, constraint, preference.

Never capture: secrets (keys, tokens, passwords), transient task state or progress, instructions limited to the \
current task, questions, speculation or unconfirmed hypotheses, or what the code and docs already say.

Scope is project by default; scope=user only for preferences that genuinely hold across projects. \
mandatory=true only when every session needs it; important=true for conditional reference material.

When guidance contradicts or refines a live memory, memory_update it (the history is kept) instead of adding a \
duplicate; memory_remember lists similar memories to check.
"""


def build_server(
    service: MemoryService,
    settings: AgentSettings,
    *,
    authenticated: bool = False,
    user_org: UserOrg | None = None,
) -> MCPServer:
    """The MCP server over one open service. ``settings`` names the project and user scopes and the budgets.

    Every tool runs as the caller: over HTTP the mount puts the authenticated access on the request, and the
    tool acts through ``service.acting(...)``, so the service's policy checks the caller's grants and records
    it as author. With ``authenticated=True`` (token mode) a call that carries no access is refused. Over
    stdio the caller is the local user.

    >>> server = build_server(svc, AgentSettings.load())   # doctest: +SKIP
    >>> await server.run_stdio_async()                      # doctest: +SKIP
    """
    from ... import __version__

    mcp: MCPServer = MemstoneMCPServer("memstone", version=__version__, instructions=INSTRUCTIONS, log_level="WARNING")

    def tool(name: str, title: str, annotations: ToolAnnotations) -> Callable[[ToolFn], ToolFn]:
        """Register a tool whose description is its docstring, dedented (the model reads every character)."""

        def register(fn: ToolFn) -> ToolFn:
            description = inspect.cleandoc(fn.__doc__ or "")
            mcp.add_tool(fn, name=name, title=title, description=description, annotations=annotations)
            return fn

        return register

    def here(ctx: Context | None) -> Caller:
        """The service and scopes of the caller of this request."""
        access = access_of(ctx)
        project = project_of(ctx)  # a remote `memstone mcp` names its working directory's project
        mine = replace(settings, project_scope=project) if project else settings
        if access is None:
            if authenticated:
                raise Unauthenticated("this MCP endpoint needs an API token", hint="send Authorization: Bearer …")
            return Caller(service, mine)
        if access.local:
            return Caller(service, mine)
        view = service.acting(Actor.of(access, surface="agent-session"), user_org=user_org)
        return Caller(view, replace(mine, user_scope=access.principal.user_scope))

    register_read_tools(tool, here)  # memory_mandatory … memory_recall (api/mcp/reads.py)
    register_write_tools(tool, here)  # memory_remember … memory_relate (api/mcp/writes.py)
    register_review_tools(tool, here)  # memory_review_list / _accept / _reject (api/mcp/review.py)
    register_maintenance_tools(tool, here)  # memory_maintain, memory_maintenance_* (api/mcp/maintenance.py)
    register_content(mcp, here)  # resources and prompts (api/mcp/content.py)
    return mcp


def mcp_mount(
    *, settings: AgentSettings | None = None, host: str = "127.0.0.1", allowed_hosts: Sequence[str] = ()
) -> Callable[[MountState], AbstractAsyncContextManager[ASGIApp]]:
    """An ``extra_mounts`` factory for ``memstone serve``: ``create_app(settings, extra_mounts={"/mcp": mcp_mount()})``.

    The yielded ASGI app serves the MCP streamable-HTTP endpoint at every path inside its mount, runs the SDK's
    session manager for the app's lifetime, and asks the host's ``authenticate`` first (local mode passes;
    token mode needs ``Authorization: Bearer …``; a refusal is a 401 with the error's code).
    """

    @asynccontextmanager
    async def factory(state: MountState) -> AsyncIterator[ASGIApp]:
        agent_settings = settings or AgentSettings.load(url=getattr(getattr(state, "settings", None), "url", None))
        server = build_server(state.service, agent_settings, authenticated=True, user_org=state.org_of)
        security = None
        if allowed_hosts:
            security = TransportSecuritySettings(
                enable_dns_rebinding_protection=True,
                allowed_hosts=list(allowed_hosts),
                allowed_origins=[f"http://{h}" for h in allowed_hosts],
            )
        server.streamable_http_app(host=host, transport_security=security)  # creates the session manager
        app = AuthenticatedMCP(StreamableHTTPASGIApp(server.session_manager), state)
        async with server.session_manager.run():
            yield app

    return factory


async def describe(svc: MemoryService, settings: AgentSettings) -> dict[str, object]:
    """The server's surface as plain data (``memstone mcp --json``): instructions, tools, prompts, resources."""
    server = build_server(svc, settings)
    tools = []
    for t in await server.list_tools():
        hints = t.annotations
        tools.append(
            {
                "name": t.name,
                "title": t.title,
                "read_only": hints.read_only_hint if hints else None,
                "destructive": hints.destructive_hint if hints else None,
                "idempotent": hints.idempotent_hint if hints else None,
                "description": t.description,
            }
        )
    return {
        "name": server.name,
        "version": server.version,
        "instructions": server.instructions,
        "instructions_bytes": len((server.instructions or "").encode("utf-8")),
        "tools": tools,
        "prompts": [p.name for p in await server.list_prompts()],
        "resources": [str(r.uri) for r in await server.list_resources()]
        + [t.uri_template for t in await server.list_resource_templates()],
    }


async def serve(
    svc: MemoryService,
    settings: AgentSettings,
    *,
    transport: Literal["stdio", "streamable-http"] = "stdio",
    host: str = "127.0.0.1",
    port: int = 8765,
    backfill: bool = True,
) -> None:
    """Run the server on an open service until the client goes away (stdio) or the process is stopped (HTTP)."""
    server = build_server(svc, settings)
    task = asyncio.create_task(backfill_loop(svc)) if backfill else None
    try:
        if transport == "stdio":
            await server.run_stdio_async()
        else:
            import uvicorn

            security = None
            if host not in ("127.0.0.1", "localhost", "::1"):
                security = TransportSecuritySettings(enable_dns_rebinding_protection=False)
            from ..http.limits import BodyLimit

            # The same body cap as serve's /mcp mount and every /api route (issue 12): the SDK reads a body whole.
            app = BodyLimit(server.streamable_http_app(host=host, transport_security=security))
            config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on")
            await uvicorn.Server(config).serve()
    finally:
        if task is not None:
            task.cancel()
            with suppress(asyncio.CancelledError):
                await task


__all__ = [
    "INSTRUCTIONS",
    "MountState",
    "backfill_loop",
    "build_server",
    "describe",
    "mcp_mount",
    "mcp_routes",
    "serve",
]
