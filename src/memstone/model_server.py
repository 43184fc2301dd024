"""One JSON ``POST`` to a model server (the OpenAI wire format), its failures mapped to the error tree.

A refused or dropped connection, a timeout, HTTP 408/429 or 5xx raise :class:`BackendUnavailable`; HTTP
400/413/422 raise :class:`InvalidInput` with the server's message; other HTTP errors raise :class:`BackendError`.
Shared by the chat model (:mod:`memstone.chat`) and the embedder (:mod:`memstone.embedding.http`); the
model extractor (:mod:`memstone.capture.extractor`) sends with :func:`post_json` and maps the errors itself. All
three check their options and read the token counts of an answer's ``usage`` here.
"""

from __future__ import annotations

import http.client
import json
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from .domain.errors import BackendError, BackendUnavailable, InvalidInput

_MAX_ERROR_BODY = 2000


def _is_http_url(url: str) -> bool:
    parts = urllib.parse.urlsplit(url)
    return parts.scheme in ("http", "https") and bool(parts.netloc)


def check_server_options(
    base_url: object, model: object, timeout: object, *, url_hint: str | None = None, model_hint: str | None = None
) -> tuple[str, str, float]:
    """Check the options every model-server client takes; return them as the client keeps them.

    That is ``base_url`` without its trailing ``/``, ``model``, and ``timeout`` in seconds as a float. A value
    that is not an http(s) URL, a non-empty string or a positive number raises :class:`InvalidInput` (with the
    hints given). The chat model, the embedder and the model extractor all check their options here.
    """
    if not isinstance(base_url, str) or not _is_http_url(base_url):
        raise InvalidInput(f"base_url must be an http(s) URL, got {base_url!r}", hint=url_hint)
    if not isinstance(model, str) or not model.strip():
        raise InvalidInput("model must be a non-empty string", hint=model_hint)
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0:
        raise InvalidInput(f"timeout must be a positive number of seconds, got {timeout!r}")
    return base_url.rstrip("/"), model, float(timeout)


def positive_int(name: str, value: object) -> int:
    """``value`` if it is a positive integer (not a bool), else :class:`InvalidInput` naming the option ``name``."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidInput(f"{name} must be a positive integer, got {value!r}")
    return value


def usage_tokens(usage: object, key: str) -> int:
    """A token count from an answer's ``usage`` object (``prompt_tokens``…): a non-negative integer, else 0."""
    value = usage.get(key) if isinstance(usage, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def answer_json(raw: bytes, where: str, *, parse_constant: Callable[[str], object] | None = None) -> object:
    """A model server's answer ``raw`` read as JSON; not JSON raises :class:`InvalidInput` naming ``where`` (so does
    an :class:`InvalidInput` that ``parse_constant`` raises, its message kept)."""
    try:
        return json.loads(raw, parse_constant=parse_constant)
    except InvalidInput as exc:
        raise InvalidInput(f"{where}: {exc.message}") from exc
    except (ValueError, UnicodeDecodeError) as exc:
        raise InvalidInput(f"{where} is not JSON: {exc}") from exc


def post_json(url: str, payload: object, *, api_key: str | None, headers: Mapping[str, str], timeout: float) -> bytes:
    """POST ``payload`` as JSON (with a bearer ``api_key`` when given) and return the raw answer.

    urllib's and http.client's errors pass through unchanged: each caller maps them to its own errors.
    """
    body = json.dumps(payload, ensure_ascii=False).encode("utf-8")
    sent = {"Content-Type": "application/json", "Accept": "application/json", **headers}
    if api_key:
        sent["Authorization"] = f"Bearer {api_key}"
    req = urllib.request.Request(url, data=body, headers=sent, method="POST")
    with urllib.request.urlopen(req, timeout=timeout) as resp:
        raw: bytes = resp.read()
    return raw


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelServer:
    """Where requests go, how the errors name the server (``server``, ``request``), and their hints."""

    url: str
    server: str  # "embedding server": how an error names the server
    request: str  # "embedding": how an error names a failed request
    api_key: str | None = None
    timeout: float
    headers: Mapping[str, str] = field(default_factory=dict)
    unreachable_hint: str
    key_hint: str  # HTTP 401/403
    other_hint: str  # other HTTP errors that are not the server's fault

    def post(self, payload: object) -> bytes:
        """Send ``payload`` as JSON and return the raw answer (runs on the caller's thread)."""
        try:
            return post_json(self.url, payload, api_key=self.api_key, headers=self.headers, timeout=self.timeout)
        except urllib.error.HTTPError as exc:
            raise self._http_error(exc) from exc
        except urllib.error.URLError as exc:
            raise BackendUnavailable(
                f"{self.server} {self.url} is unreachable: {exc.reason}", orig=exc, hint=self.unreachable_hint
            ) from exc
        except (OSError, http.client.HTTPException) as exc:  # timeouts, resets, truncated responses
            raise BackendUnavailable(
                f"{self.request} request to {self.url} failed: {type(exc).__name__}: {exc}", orig=exc
            ) from exc

    def _http_error(self, exc: urllib.error.HTTPError) -> Exception:
        try:
            detail = exc.read(_MAX_ERROR_BODY).decode("utf-8", "replace").strip()
        except Exception:  # the body is best effort only
            detail = ""
        finally:
            exc.close()
        message = f"{self.server} {self.url} answered HTTP {exc.code}" + (f": {detail}" if detail else "")
        if exc.code in (408, 429) or exc.code >= 500:
            return BackendUnavailable(message, orig=exc)
        if exc.code in (400, 413, 422):
            return InvalidInput(message)
        return BackendError(message, orig=exc, hint=self.key_hint if exc.code in (401, 403) else self.other_hint)


__all__ = ["ModelServer", "answer_json", "check_server_options", "positive_int", "post_json", "usage_tokens"]
