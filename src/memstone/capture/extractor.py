"""The optional model extractor: an OpenAI-compatible ``POST /chat/completions`` server proposes candidates.

Off by default: capture uses it only when a :class:`ModelExtractor` is passed to the pipeline. It sees an
event only *after* secret scanning. Its output is untrusted: every candidate it returns goes through the same
admission as any other (including ``unsupported``: the evidence must say what the candidate says) and the same
dedup, and it never decides the head. Token use is counted from each response's ``usage`` object, per call
(:attr:`Extraction.usage`), per session (:meth:`ModelExtractor.session_usage`) and for the extractor's
lifetime (:attr:`ModelExtractor.usage`). A failing server never fails a capture: the deterministic candidates
are still written and :attr:`Extraction.error` says what went wrong.
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field

from ..domain.fields import FieldDict
from ..domain.model import KNOWN_KINDS
from .candidates import Candidate
from .settings import ExtractorSettings

__all__ = ["Extraction", "ModelExtractor", "TokenUsage"]

SYSTEM_PROMPT = """You extract durable memories for a coding agent from ONE event of a software project.
Return JSON only: {"candidates": [{"kind": "...", "text": "...", "scope": "project"|"user"}]}.
Kinds: fact, preference, decision, constraint, convention, correction, lesson, pattern, procedure.
Propose a memory only if it would change how a future agent plans or acts in this project, cannot be read
cheaply from the code, is stated or confirmed in the event, is understandable alone, and is one topic.
Keep the user's reasons ("..., so ...", "because ..."). Use the user's own words where you can.
Never propose: questions, speculation, instructions for the current task only, file lists, function
signatures, line numbers, logs or command output, restatements of an assistant's system prompt, chit-chat,
or anything that looks like a credential. scope "user" only for personal preferences meant for all projects.
Return {"candidates": []} when nothing qualifies (the usual case)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class TokenUsage(FieldDict):
    """Token use of model calls, summed from each response's ``usage`` (0 where a server reports none)."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0

    def __add__(self, other: TokenUsage) -> TokenUsage:
        return TokenUsage(
            calls=self.calls + other.calls,
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            total_tokens=self.total_tokens + other.total_tokens,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class Extraction:
    """What one model call proposed, what it cost, and the error if it failed."""

    candidates: tuple[Candidate, ...] = ()
    usage: TokenUsage = field(default_factory=TokenUsage)
    error: str | None = None


class ModelExtractor:
    """Proposes candidates through ``POST {base_url}/chat/completions`` (OpenAI, vLLM, llama.cpp, Ollama ``/v1``…).

    >>> ModelExtractor("http://127.0.0.1:8080/v1", "qwen2.5-7b-instruct")  # doctest: +ELLIPSIS
    ModelExtractor(url='http://127.0.0.1:8080/v1/chat/completions', model='qwen2.5-7b-instruct')
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        *,
        timeout: float = 30.0,
        max_candidates: int = 5,
        max_input_chars: int = 6000,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        from ..model_server import check_server_options  # urllib only when an extractor is configured

        base, self._model, self._timeout = check_server_options(base_url, model, timeout)
        self._url = base + "/chat/completions"
        self._api_key = api_key
        self._max_candidates = max_candidates
        self._max_input_chars = max_input_chars
        self._headers = dict(headers or {})
        self._lock = threading.Lock()
        self._total = TokenUsage()
        self._sessions: dict[str, TokenUsage] = {}

    @classmethod
    def from_settings(cls, settings: ExtractorSettings, environ: Mapping[str, str]) -> ModelExtractor:
        """Build from settings; the API key is read from ``environ[settings.api_key_env]`` (never from a file)."""
        key = environ.get(settings.api_key_env) if settings.api_key_env else None
        return cls(
            settings.base_url,
            settings.model,
            key,
            timeout=settings.timeout,
            max_candidates=settings.max_candidates,
        )

    def __repr__(self) -> str:  # never shows the API key
        return f"ModelExtractor(url={self._url!r}, model={self._model!r})"

    @property
    def usage(self) -> TokenUsage:
        """Token use of every call this extractor made."""
        with self._lock:
            return self._total

    def session_usage(self, session_id: str | None) -> TokenUsage:
        """Token use of the calls made for one agent session (``None``: calls without a session)."""
        with self._lock:
            return self._sessions.get(session_id or "", TokenUsage())

    async def extract(self, text: str, *, session_id: str | None = None, label: str = "event") -> Extraction:
        """Ask the model for candidates from one event's text; never raises for server or format errors."""
        body = text if len(text) <= self._max_input_chars else text[: self._max_input_chars] + "…"
        payload = {
            "model": self._model,
            "temperature": 0,
            "response_format": {"type": "json_object"},
            "messages": [
                {"role": "system", "content": SYSTEM_PROMPT},
                {"role": "user", "content": f"{label}:\n{body}"},
            ],
        }
        try:
            raw = await asyncio.to_thread(self._post, payload)
        except _CallError as exc:
            usage = TokenUsage(calls=1)
            self._count(usage, session_id)
            return Extraction(usage=usage, error=str(exc))
        usage, candidates, error = self._parse(raw)
        self._count(usage, session_id)
        return Extraction(candidates=candidates, usage=usage, error=error)

    def _count(self, usage: TokenUsage, session_id: str | None) -> None:
        with self._lock:
            self._total = self._total + usage
            key = session_id or ""
            self._sessions[key] = self._sessions.get(key, TokenUsage()) + usage

    def _post(self, payload: dict[str, object]) -> bytes:
        # Imported here: the hook path imports capture but almost never calls a model (urllib costs ~20 ms).
        import http.client
        import urllib.error

        from ..model_server import post_json

        try:
            return post_json(self._url, payload, api_key=self._api_key, headers=self._headers, timeout=self._timeout)
        except urllib.error.HTTPError as exc:
            exc.close()
            raise _CallError(f"extractor server {self._url} answered HTTP {exc.code}") from exc
        except urllib.error.URLError as exc:
            raise _CallError(f"extractor server {self._url} is unreachable: {exc.reason}") from exc
        except (OSError, http.client.HTTPException) as exc:
            raise _CallError(f"extractor request to {self._url} failed: {type(exc).__name__}") from exc

    def _parse(self, raw: bytes) -> tuple[TokenUsage, tuple[Candidate, ...], str | None]:
        try:
            response = json.loads(raw)
        except (ValueError, UnicodeDecodeError):
            return TokenUsage(calls=1), (), "extractor response is not JSON"
        if not isinstance(response, dict):
            return TokenUsage(calls=1), (), "extractor response is not a JSON object"
        from ..model_server import usage_tokens  # loaded by __init__ already

        u = response.get("usage")
        prompt, completion = usage_tokens(u, "prompt_tokens"), usage_tokens(u, "completion_tokens")
        usage = TokenUsage(
            calls=1,
            prompt_tokens=prompt,
            completion_tokens=completion,
            total_tokens=usage_tokens(u, "total_tokens") or prompt + completion,
        )
        try:
            content = response["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError):
            return usage, (), "extractor response has no choices[0].message.content"
        if not isinstance(content, str):
            return usage, (), "extractor message content is not text"
        match = re.search(r"\{.*\}", content, re.S)  # models sometimes wrap JSON in prose or a code fence
        try:
            data = json.loads(match.group(0) if match else content)
        except ValueError:
            return usage, (), "extractor message is not JSON"
        items = data.get("candidates") if isinstance(data, dict) else None
        if not isinstance(items, list):
            return usage, (), "extractor message has no 'candidates' list"
        out = []
        for item in items[: self._max_candidates]:
            if not isinstance(item, dict):
                continue
            kind, text, scope = item.get("kind"), item.get("text"), item.get("scope", "project")
            if not isinstance(kind, str) or not isinstance(text, str) or not text.strip():
                continue
            out.append(
                Candidate(
                    kind=kind.strip().lower() if kind.strip().lower() in KNOWN_KINDS else kind.strip(),
                    text=text.strip(),
                    origin="model",
                    scope="user" if scope == "user" else "project",
                )
            )
        return usage, tuple(out), None


class _CallError(Exception):
    """A model call that did not produce a response (internal; turned into Extraction.error)."""
