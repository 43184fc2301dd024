"""The request-body cap of the extra mounts (``/mcp``): the same limit and the same 422 as every ``/api`` route.

``/api`` routes read their body through :func:`memstone.api.http.routing.read_body`; a mount such as the MCP
endpoint reads its own, so :class:`BodyLimit` wraps it: a declared Content-Length over the limit is refused
unread, and a body sent without one (chunked) is read only up to the limit before it is refused (issue 12,
finding 7, which the MCP mount did not have).
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ...domain.errors import InvalidInput
from .errors import error_response
from .middleware import HttpMiddleware
from .routing import MAX_BODY


def _declared_length(scope: Scope) -> str | None:
    for name, value in scope.get("headers", ()):
        if name.lower() == b"content-length":
            return bytes(value).decode("latin-1")
    return None


class BodyLimit(HttpMiddleware):
    """An ASGI app that passes a request on only when its body is at most ``limit`` bytes.

    The body is read here (at most ``limit`` bytes plus one chunk) and replayed to the wrapped app; after it,
    the wrapped app receives from the client as usual (so it still sees ``http.disconnect`` on a stream).
    """

    def __init__(self, app: ASGIApp, *, limit: int = MAX_BODY) -> None:
        super().__init__(app)
        self.limit = limit

    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            declared = _declared_length(scope)
            if declared is not None:
                if not (declared.isascii() and declared.isdigit()):
                    raise InvalidInput(f"Content-Length {declared[:40]!r} is not a number of bytes")
                if len(declared) > 12 or int(declared) > self.limit:
                    raise InvalidInput(
                        f"the body is {declared} bytes; the limit is {self.limit}", hint="send a smaller body"
                    )
            buffered = await self._read(receive)
        except InvalidInput as exc:
            await error_response(exc)(scope, receive, send)
            return
        await self.app(scope, _replay(buffered, receive), send)

    async def _read(self, receive: Receive) -> list[Message]:
        messages: list[Message] = []
        size = 0
        while True:
            message = await receive()
            messages.append(message)
            if message["type"] != "http.request":
                return messages  # a disconnect: the wrapped app sees it as it would have
            size += len(message.get("body", b""))
            if size > self.limit:
                raise InvalidInput(f"the body is over {self.limit} bytes, the limit", hint="send a smaller body")
            if not message.get("more_body", False):
                return messages


def _replay(messages: list[Message], receive: Receive) -> Receive:
    pending = list(messages)

    async def replayed() -> Message:
        if pending:
            return pending.pop(0)
        return await receive()

    return replayed


__all__ = ["BodyLimit"]
