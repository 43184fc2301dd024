"""Serving over streamable HTTP: the routes for any Starlette app, the authenticated mount of ``memstone serve``,
and the vector backfill that runs while serving."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Protocol

from mcp.server.mcpserver import MCPServer
from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.routing import BaseRoute
from starlette.types import ASGIApp, Receive, Scope, Send

from ...domain.errors import MemstoneError
from ...domain.scopes import canonical_scope
from ...service import MemoryService
from .caller import ACCESS_KEY, PROJECT_HEADER, PROJECT_KEY

log = logging.getLogger("memstone.mcp")


def mcp_routes(
    server: MCPServer, *, path: str = "/mcp", host: str = "127.0.0.1", json_response: bool = False
) -> tuple[list[BaseRoute], Callable[[], AbstractAsyncContextManager[None]]]:
    """The route that serves ``server`` over streamable HTTP at ``path``, and the lifespan the host app must run.

    DNS-rebinding protection is on for loopback hosts (the Host header must be a loopback name).

    >>> routes, lifespan = mcp_routes(build_server(svc, settings))  # doctest: +SKIP
    >>> app = Starlette(routes=[*routes, Route("/health", health)], lifespan=lambda app: lifespan())  # doctest: +SKIP
    """
    app = server.streamable_http_app(streamable_http_path=path, host=host, json_response=json_response)
    routes = list(app.routes)

    @asynccontextmanager
    async def lifespan() -> AsyncIterator[None]:
        async with server.session_manager.run():
            yield

    return routes, lifespan


ACCESS_STATUS = {"unauthenticated": 401, "forbidden": 403, "access": 403}  # by the errors' stable codes


class MountState(Protocol):
    """What ``memstone serve`` hands an extra mount (its ``AppState``): the open service, settings, auth."""

    @property
    def service(self) -> MemoryService: ...

    async def authenticate(self, headers: Headers) -> object: ...

    async def org_of(self, user: str) -> str | None: ...


class AuthenticatedMCP:
    """The streamable-HTTP endpoint behind the host's ``authenticate`` (an ASGI app object, so a Starlette
    ``Route`` or ``Mount`` can take it as is)."""

    def __init__(self, handler: ASGIApp, state: MountState) -> None:
        self.handler = handler
        self.state = state

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = Headers(scope=scope)
            try:
                access = await self.state.authenticate(headers)
                project = headers.get(PROJECT_HEADER)
                extra = {PROJECT_KEY: canonical_scope(project)} if project else {}
            except MemstoneError as exc:
                status = ACCESS_STATUS.get(exc.code, 503 if exc.code.startswith("backend") else 422)
                body = {"error": {"code": exc.code, "message": exc.message, "hint": exc.hint}}
                await JSONResponse(body, status_code=status)(scope, receive, send)
                return
            # Trigger: every MCP message over HTTP. Why: the tool must act as this request's principal, and a
            # session may outlive one token, so the access travels with the request, never with the session.
            # Outcome: the tool reads it from the request (see access_of) and acts through service.acting().
            # A remote client's project scope travels the same way (the grants still decide what it may touch).
            scope = {**scope, "state": {**scope.get("state", {}), ACCESS_KEY: access, **extra}}
        await self.handler(scope, receive, send)


async def backfill_loop(svc: MemoryService, *, every_s: float = 120.0, first_s: float = 5.0) -> None:
    """Embed what writes without a model (hooks) left without vectors, every two minutes, while serving."""
    await asyncio.sleep(first_s)
    while True:
        try:
            if svc.indexer is not None and await svc.vector_backlog() > 0:
                done = await svc.backfill(batch=32)
                log.info("backfill: embedded %d entries", done)
        except MemstoneError as exc:
            log.warning("backfill failed: %s", exc)
        await asyncio.sleep(every_s)


__all__ = ["ACCESS_STATUS", "AuthenticatedMCP", "MountState", "backfill_loop", "mcp_routes"]
