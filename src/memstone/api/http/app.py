"""The HTTP server's composition root: ``create_app(settings)`` → one ASGI app with the API, the Explorer and any
extra mounts (the MCP streamable-HTTP endpoint at ``/mcp``), opened on one store.

>>> app = create_app(Settings(url="sqlite:///memories.db"))   # doctest: +SKIP
>>> uvicorn.run(app, host="127.0.0.1", port=8765)              # doctest: +SKIP

The store and the principal store are opened by the app's lifespan and closed by it. A server that is not in
local mode refuses to start until a principal holds an active token (``memstone token create``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Receive, Scope, Send

from ... import __version__
from ...auth.store import NoPrincipals, PrincipalStore, principals_of
from ...domain.errors import BackendUnavailable, InvalidInput, NotFound
from ...service import UNSET, open_service
from .access import AppState
from .capture_events import capture_event_operations
from .cli_reads import cli_read_operations
from .embedding_runs import embedding_run_operations
from .errors import error_body, unrouted
from .limits import BodyLimit
from .maintenance import maintenance_operations
from .purge import purge_operations
from .review import review_operations
from .routes import operations
from .routing import Call, Operation, openapi, routes
from .settings import Settings, is_loopback
from .web import SecurityHeaders, explorer, home

MountFactory = Callable[[AppState], AbstractAsyncContextManager[ASGIApp]]
"""An extra mount: given the open AppState (service, principals, settings, ``authenticate``), yield an ASGI app
for the app's lifetime. ``create_app(settings, extra_mounts={"/mcp": build_mcp})`` is the MCP endpoint's hook."""


async def open_principals(url: str | None, *, read_only: bool = False) -> PrincipalStore:
    """Open the principal store of a store URL (the store itself, on any engine); closing it closes the store.

    ``read_only`` (a server, ``token list``) refuses writes, and a store that does not exist yet reads as having no
    principals: a read never creates it."""
    from ...backends import open_store

    try:
        store = await open_store(url, create=not read_only)
    except NotFound:
        if not read_only:
            raise
        return NoPrincipals()
    try:
        return principals_of(store.memory, read_only=read_only, owned=True)
    except BaseException:
        await store.aclose()
        raise


async def check_startup(settings: Settings, principals: PrincipalStore) -> None:
    """Refuse to serve beyond this machine without access control configured."""
    if settings.auth == "local" and not is_loopback(settings.host):
        raise InvalidInput(
            f"local mode (no token) serves only 127.0.0.1, not {settings.host}",
            hint="drop --auth local, or bind --host 127.0.0.1",
        )
    if not settings.local and not await principals.has_active_tokens():
        raise InvalidInput(
            f"refusing to serve {settings.host} without access control: no principal has an active token",
            hint="create one first: memstone token create --user <user> --org <org> --grant '*=write'",
        )


class _Deferred:
    """An ASGI app that is built by the lifespan (it needs the open service); 503 until then."""

    def __init__(self) -> None:
        self.app: ASGIApp | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.app is None:
            if scope["type"] == "http":
                body = error_body("backend_unavailable", "the server is starting", "retry shortly")
                await JSONResponse(body, status_code=503)(scope, receive, send)
            return
        await self.app(scope, receive, send)


def create_app(settings: Settings, *, extra_mounts: Mapping[str, MountFactory] | None = None) -> Starlette:
    """The memstone ASGI app: ``/api`` (OpenAPI at ``/api/openapi.json``), ``/memory/explorer/``, extra mounts."""
    table = [
        *operations(),
        *review_operations(),
        *maintenance_operations(),
        *embedding_run_operations(),
        *purge_operations(),
        *capture_event_operations(),
        *cli_read_operations(),
    ]
    mounts = {path: _Deferred() for path in (extra_mounts or {})}

    def state_of(request: Request) -> AppState:
        state = getattr(request.app.state, "memstone", None)
        if not isinstance(state, AppState):
            raise BackendUnavailable("the server is not started", hint="run it under an ASGI server with lifespan")
        return state

    async def document(call: Call) -> Response:
        return JSONResponse(openapi(table, version=__version__, local=settings.local))

    table.append(
        Operation(
            "GET", "/api/openapi.json", "getOpenApi", "This OpenAPI 3.1 document", "public", document,
            public=True, errors=(), tags=("meta",), response="application/json",
        )
    )  # fmt: skip

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with AsyncExitStack() as stack:
            embedding: Any = UNSET
            if settings.embedding is not None:
                embedding = None if settings.embedding.lower() == "none" else settings.embedding
            service = await stack.enter_async_context(
                open_service(settings.url, embedding=embedding, author=settings.author, surface="api")
            )
            principals = principals_of(service.backend, read_only=True)  # the server only reads principals
            await check_startup(settings, principals)
            state = AppState(settings=settings, service=service, principals=principals, version=__version__)
            for path, factory in (extra_mounts or {}).items():
                mounts[path].app = await stack.enter_async_context(factory(state))
            app.state.memstone = state
            try:
                yield
            finally:
                app.state.memstone = None
                for deferred in mounts.values():
                    deferred.app = None

    web: list[BaseRoute] = [
        Route("/", home, methods=["GET"]),
        Route("/memory/explorer", home, methods=["GET"]),
        Route("/memory/explorer/", explorer, methods=["GET"]),
        Route("/memory/explorer/{rest:path}", explorer, methods=["GET"]),
        Mount("/memory/static", app=StaticFiles(packages=[("memstone.web", "static")]), name="static"),
    ]
    extra: list[BaseRoute] = []
    for path, deferred in mounts.items():
        # The bare path too: clients such as the MCP SDK post to "/mcp" and do not follow a redirect to "/mcp/".
        capped = BodyLimit(deferred)  # the /api body limit holds on every mount too (issue 12, finding 7)
        extra.append(Route(path, endpoint=capped, methods=["GET", "POST", "DELETE"]))
        extra.append(Mount(path, app=capped))
    app = Starlette(
        routes=[*routes(table, state_of), *web, *extra],
        middleware=[Middleware(SecurityHeaders, settings=settings)],
        lifespan=lifespan,
        exception_handlers={HTTPException: unrouted},
    )
    app.state.operations = table
    return app


__all__ = ["MountFactory", "Settings", "check_startup", "create_app", "open_principals", "principals_of"]
