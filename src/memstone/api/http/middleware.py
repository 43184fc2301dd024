"""The base of the API's pure ASGI middlewares: HTTP requests are theirs, every other scope passes untouched."""

from __future__ import annotations

from starlette.types import ASGIApp, Receive, Scope, Send


class HttpMiddleware:
    """Wraps ``app``: an ``http`` scope goes to :meth:`http`, a lifespan or websocket scope straight to ``app``."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        await self.http(scope, receive, send)

    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Handle one HTTP request (the subclass's checks, then usually ``self.app``)."""
        raise NotImplementedError


__all__ = ["HttpMiddleware"]
