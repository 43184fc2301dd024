"""An HTTP client for ``memstone serve``'s ``/api``: one request method, errors decoded by their stable code."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypedDict, Unpack

import httpx2

from ..closing import AsyncClosing
from ..domain.errors import (
    BackendError,
    BackendUnavailable,
    CapabilityNotSupportedError,
    Conflict,
    Forbidden,
    InvalidInput,
    MemstoneError,
    NotFound,
    RevisionConflictError,
    Unauthenticated,
)
from .url import REMOTE_SCHEMES, is_remote, server_base

# Trigger: an error body without a code we know (a proxy in between, a newer server). Why: the exit code must
# still follow the kind of failure. Outcome: the class of the HTTP status, as api/http/errors.py maps it.
BY_STATUS: Mapping[int, type[MemstoneError]] = {
    401: Unauthenticated,
    403: Forbidden,
    404: NotFound,
    409: Conflict,
    412: Conflict,
    413: InvalidInput,
    422: InvalidInput,
    428: RevisionConflictError,
    501: CapabilityNotSupportedError,
    503: BackendUnavailable,
}
# Trigger: an HTTP-level code with no MemstoneError class (api/http/errors.py's ApiError). Why: the CLI's exit code
# and error code must be the ones a local store gives for the same request. Outcome: the local error's class.
# precondition_required (428, an update that names no revision) is refused as a stale update would be locally.
HTTP_CODES: Mapping[str, type[MemstoneError]] = {"precondition_required": RevisionConflictError}
Params = Mapping[str, str | int | bool | list[str] | None]


class RequestOptions(TypedDict, total=False):
    """What :meth:`RemoteClient.call` takes besides the method and path (query parameters, JSON body, headers)."""

    params: Params | None
    json: object
    headers: Mapping[str, str] | None


def _error_classes() -> dict[str, type[MemstoneError]]:
    found: dict[str, type[MemstoneError]] = {}
    pending: list[type[MemstoneError]] = [MemstoneError]
    while pending:
        cls = pending.pop()
        found.setdefault(cls.code, cls)  # a subclass that keeps its parent's code decodes as the parent
        pending.extend(cls.__subclasses__())
    return found


def decode_error(status: int, body: object) -> MemstoneError:
    """The :class:`MemstoneError` a server's error answer stands for, by its ``code`` (never by its message).

    >>> type(decode_error(409, {"error": {"code": "revision_conflict", "message": "stale"}})).__name__
    'RevisionConflictError'
    >>> decode_error(428, {"error": {"code": "precondition_required", "message": "say which revision"}}).code
    'revision_conflict'
    """
    detail = body.get("error") if isinstance(body, dict) else None
    code = message = hint = None
    if isinstance(detail, dict):
        code, message, hint = detail.get("code"), detail.get("message"), detail.get("hint")
    cls = (_error_classes().get(code) or HTTP_CODES.get(code)) if isinstance(code, str) else None
    if cls is None:
        cls = BY_STATUS.get(status, BackendError)
    text = message if isinstance(message, str) else f"the server answered HTTP {status}"
    exc = cls.__new__(cls)  # the server built the message; the class's own constructor would rebuild it
    MemstoneError.__init__(exc, text, hint=hint if isinstance(hint, str) else None)
    if isinstance(exc, CapabilityNotSupportedError):
        exc.capability = "remote"
    return exc


class RemoteClient(AsyncClosing):
    """One server, one token: ``await client.call("GET", "/api/memories/search", params={"q": "uv"})``.

    ``transport`` serves tests and in-process use (an ``httpx2.ASGITransport``); by default it is the network.
    """

    def __init__(
        self,
        url: str,
        *,
        token: str | None = None,
        timeout_s: float = 30.0,
        transport: httpx2.AsyncBaseTransport | None = None,
    ) -> None:
        self.base = server_base(url)
        self._token = bool(token)
        headers = {"Accept": "application/json", "User-Agent": "memstone-remote"}
        if token:
            headers["Authorization"] = f"Bearer {token.strip()}"
        self._http = httpx2.AsyncClient(base_url=self.base, headers=headers, timeout=timeout_s, transport=transport)

    async def aclose(self) -> None:
        await self._http.aclose()

    async def call(
        self,
        method: str,
        path: str,
        *,
        params: Params | None = None,
        json: object = None,
        headers: Mapping[str, str] | None = None,
    ) -> tuple[int, object]:
        """Send one request; return (status, decoded JSON) on success, raise the decoded error otherwise."""
        query = {k: v for k, v in (params or {}).items() if v is not None and v != []}
        try:
            response = await self._http.request(
                method, path, params=query or None, json=json, headers=dict(headers or {})
            )
        except httpx2.TimeoutException as exc:
            raise BackendUnavailable(
                f"the memstone server at {self.base} did not answer in time", hint="is it running and reachable?"
            ) from exc
        except httpx2.HTTPError as exc:
            raise BackendUnavailable(
                f"cannot reach the memstone server at {self.base}: {exc}",
                hint="start `memstone serve` there, or check MEMSTONE_URL",
            ) from exc
        body: object
        media = response.headers.get("content-type", "")
        if media.startswith("application/json"):
            body = response.json()
        elif media.startswith("application/zip"):
            body = response.content  # an export
        else:
            body = response.text
        if response.status_code >= 400:
            error = decode_error(response.status_code, body)
            if isinstance(error, Unauthenticated):
                # Trigger: the server wants a token. Why: its hint speaks HTTP; this user configures the CLI.
                # Outcome: the hint names the setting to fix.
                error.hint = (
                    "MEMSTONE_TOKEN was refused: ask for a new token (memstone token create, on the server)"
                    if self._token
                    else "set MEMSTONE_TOKEN to a token from `memstone token create` on the server"
                )
            raise error
        return response.status_code, body

    async def json(self, method: str, path: str, **options: Unpack[RequestOptions]) -> dict[str, Any]:
        """:meth:`call` (with the same options) for an answer that is a JSON object (the API's documented shapes)."""
        _, body = await self.call(method, path, **options)
        if not isinstance(body, dict):
            raise BackendError(f"the server at {self.base} answered {path} with something that is not JSON")
        return body

    async def text(self, path: str, *, params: Params | None = None) -> str:
        """:meth:`call` for a text answer (Markdown)."""
        _, body = await self.call("GET", path, params=params)
        return body if isinstance(body, str) else str(body)


__all__ = ["BY_STATUS", "HTTP_CODES", "REMOTE_SCHEMES", "RemoteClient", "decode_error", "is_remote", "server_base"]
