"""Error → HTTP status, the API's one mapping (by error class, never by message text).

Every error body is ``{"error": {"code": ..., "message": ..., "hint": ...}}`` with the stable ``code`` of the
error class, so a client (``RemoteMemoryService``) decodes it without reading the message::

    Unauthenticated              401  unauthenticated         (+ WWW-Authenticate: Bearer)
    Forbidden                    403  forbidden
    NotFound                     404  not_found, artifact_not_found
    Conflict                     409  conflict, already_exists, revision_conflict (body: "current")
    InvalidInput                 422  invalid_input, invalid_citation, profile_mismatch
    (HTTP) precondition          428  precondition_required   (an update without If-Match or "revision")
    CapabilityNotSupportedError  501  capability_not_supported
    IntegrityError               500  integrity
    BackendError                 500  backend
    BackendUnavailable           503  backend_unavailable, store_migrating (+ Retry-After)
"""

from __future__ import annotations

from collections.abc import Mapping

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response

from ...domain.errors import (
    BackendError,
    BackendUnavailable,
    CapabilityNotSupportedError,
    Conflict,
    Forbidden,
    IntegrityError,
    InvalidInput,
    MemstoneError,
    NotFound,
    Unauthenticated,
    by_class,
)

STATUS: tuple[tuple[type[MemstoneError], int], ...] = (
    (Unauthenticated, 401),
    (Forbidden, 403),
    (NotFound, 404),
    (Conflict, 409),
    (InvalidInput, 422),
    (CapabilityNotSupportedError, 501),
    (IntegrityError, 500),
    (BackendUnavailable, 503),
    (BackendError, 500),
)


class ApiError(Exception):
    """An HTTP-level refusal that is not a service error (a missing precondition, a stale CAS with a body)."""

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        *,
        hint: str | None = None,
        extra: Mapping[str, object] | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.hint = hint
        self.extra = dict(extra or {})
        self.headers = dict(headers or {})


def status_of(exc: MemstoneError) -> int:
    """The HTTP status of a memstone error (500 for a class with no row)."""
    return by_class(exc, STATUS, 500)


def error_body(code: str, message: str, hint: str | None = None, **extra: object) -> dict[str, object]:
    error: dict[str, object] = {"code": code, "message": message}
    if hint:
        error["hint"] = hint
    return {"error": error, **extra}


def error_response(exc: MemstoneError | ApiError) -> JSONResponse:
    """The JSON response for an error, with the headers its status calls for."""
    if isinstance(exc, ApiError):
        return JSONResponse(
            error_body(exc.code, exc.message, exc.hint, **exc.extra), status_code=exc.status, headers=exc.headers
        )
    status = status_of(exc)
    headers: dict[str, str] = {}
    if status == 401:
        headers["WWW-Authenticate"] = 'Bearer realm="memstone"'
    if status == 503:
        headers["Retry-After"] = "1"
    message = exc.message if status != 500 or isinstance(exc, IntegrityError) else "the store failed"
    hint = exc.hint if status != 500 else "the server log has the details; `memstone verify` checks the store"
    return JSONResponse(error_body(exc.code, message, hint), status_code=status, headers=headers)


async def unrouted(request: Request, exc: Exception) -> Response:
    """Starlette's own 404 / 405 (no route matched the path, or not this method): the API's JSON error body under
    /api, so every /api answer carries a code (the fuzz benchmark found plain-text ones); elsewhere as before."""
    assert isinstance(exc, HTTPException)
    if not request.url.path.startswith("/api/"):
        return PlainTextResponse(str(exc.detail), status_code=exc.status_code, headers=exc.headers)
    if exc.status_code == 405:
        code, message, hint = "method_not_allowed", f"{request.url.path} does not take {request.method}", None
    elif exc.status_code == 404:
        code, message, hint = "not_found", f"no route {request.url.path}", "see /api/openapi.json for every route"
    else:
        code, message, hint = "invalid_input", str(exc.detail), None
    return JSONResponse(error_body(code, message, hint), status_code=exc.status_code, headers=exc.headers)


__all__ = ["STATUS", "ApiError", "error_body", "error_response", "status_of", "unrouted"]
