"""The Explorer's pages and assets, and the headers every response carries.

Security headers: a strict Content-Security-Policy (scripts, styles and images only from this server, no inline
script, no ``eval``, no plugins, no framing; an external image in a memory is a link, opened on click),
``nosniff``, no referrer. In local mode two more checks stand in for authentication: the ``Host`` must name
this machine (so a web page cannot reach the server through DNS rebinding) and a state-changing request from a
browser must come from this origin (so a page cannot forge one; ``Origin: null`` is refused with the rest).
Both refusals are JSON errors with code ``forbidden``.
"""

from __future__ import annotations

import ipaddress
from importlib import resources

from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .errors import error_body
from .middleware import HttpMiddleware
from .settings import Settings, is_loopback

EXPLORER_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
    "font-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'; "
    "object-src 'none'"
)
API_CSP = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'"
UNSAFE = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def explorer_html() -> str:
    return resources.files("memstone.web").joinpath("templates/explorer.html").read_text("utf-8")


async def explorer(request: Request) -> Response:
    """Every /memory/explorer/… address serves the same page; the script reads the address."""
    return HTMLResponse(explorer_html(), headers={"Cache-Control": "no-cache"})


async def home(request: Request) -> Response:
    return RedirectResponse("/memory/explorer/", status_code=307)


def _host_name(host_header: str) -> str:
    host = host_header.strip()
    if host.startswith("["):
        return host[: host.find("]") + 1] if "]" in host else host
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


class SecurityHeaders(HttpMiddleware):
    """Pure ASGI middleware: security headers on every response, and the local-mode request checks."""

    def __init__(self, app: ASGIApp, settings: Settings) -> None:
        super().__init__(app)
        self.settings = settings

    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        path: str = scope.get("path", "")
        refusal = self._refuse(scope)
        if refusal is not None:
            await refusal(scope, receive, self._wrap(send, path))
            return
        await self.app(scope, receive, self._wrap(send, path))

    def _refuse(self, scope: Scope) -> Response | None:
        headers = Headers(scope=scope)
        if self.settings.local:
            host = _host_name(headers.get("host", ""))
            if not is_loopback(host):
                return _forbidden(
                    f"host {host!r} is not this machine; a local-mode server answers only 127.0.0.1 and localhost",
                    "open http://127.0.0.1:<port>/, or serve with --auth token to accept other names",
                )
            client = scope.get("client")
            if client:
                try:
                    if not ipaddress.ip_address(str(client[0])).is_loopback:
                        return _forbidden("local mode serves only this machine", "serve with --auth token")
                except ValueError:
                    pass  # an in-process test client names itself, not an address
        origin = headers.get("origin")
        # ``Origin: null`` (a sandboxed frame, a file:// page, a redirect) names no origin to trust: refused too.
        if scope.get("method") in UNSAFE and origin is not None:
            own = {f"http://{headers.get('host', '')}", f"https://{headers.get('host', '')}"}
            if origin not in own:
                return _forbidden(f"cross-origin write from {origin!r} refused", "call the API from its own origin")
        return None

    def _wrap(self, send: Send, path: str) -> Send:
        csp = EXPLORER_CSP if path.startswith("/memory/") else API_CSP

        async def wrapped(message: Message) -> None:
            if message["type"] == "http.response.start":
                raw = list(message.get("headers", []))
                have = {k.lower() for k, _ in raw}
                extra = [
                    (b"content-security-policy", csp.encode()),
                    (b"x-content-type-options", b"nosniff"),
                    (b"referrer-policy", b"no-referrer"),
                    (b"x-frame-options", b"DENY"),
                    (b"cross-origin-opener-policy", b"same-origin"),
                ]
                if path.startswith("/api/"):
                    extra.append((b"cache-control", b"no-store"))
                raw.extend((k, v) for k, v in extra if k not in have)
                message = {**message, "headers": raw}
            await send(message)

        return wrapped


def _forbidden(message: str, hint: str) -> Response:
    return JSONResponse(error_body("forbidden", message, hint), status_code=403)


__all__ = ["API_CSP", "EXPLORER_CSP", "SecurityHeaders", "explorer", "explorer_html", "home"]
