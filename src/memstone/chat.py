"""A chat model for any server speaking the OpenAI ``POST /chat/completions`` wire format (standard library only).

Used by the optional maintenance model judge (:mod:`memstone.maintenance.model_judge`); nothing else calls a
chat model. Each :meth:`complete` is one request from a worker thread; the answer's first choice's message
content is the text, ``usage.prompt_tokens``/``completion_tokens`` are what it cost (0 when the server reports
none). A refused or dropped connection, a timeout, HTTP 408/429 or 5xx raise :class:`BackendUnavailable`
(a maintenance step retries it); HTTP 400/413/422 and a malformed answer raise :class:`InvalidInput`; other
HTTP errors raise :class:`BackendError`. No retries here: the caller decides.
"""

from __future__ import annotations

import asyncio

from .domain.errors import InvalidInput
from .model_server import ModelServer, answer_json, check_server_options, positive_int, usage_tokens
from .ports import ChatResult, InferenceUsage


class OpenAICompatibleChat:
    """Completes through ``POST {base_url}/chat/completions`` with ``{"model": ..., "messages": [...]}``."""

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        *,
        timeout: float = 120.0,
        max_tokens: int = 2000,
    ) -> None:
        base, self._model, seconds = check_server_options(
            base_url,
            model,
            timeout,
            url_hint="e.g. http://127.0.0.1:8000/v1",
            model_hint="name the chat model the server serves",
        )
        self._url = f"{base}/chat/completions"
        self._max_tokens = positive_int("max_tokens", max_tokens)
        self._server = ModelServer(
            url=self._url,
            server="chat model server",
            request="chat",
            api_key=api_key,
            timeout=seconds,
            unreachable_hint="check that the server is running and the judge URL is right",
            key_hint="check the API key",
            other_hint="check the URL",
        )

    @property
    def name(self) -> str:
        return self._model

    @property
    def url(self) -> str:
        return self._url

    def __repr__(self) -> str:  # never shows the API key
        return f"OpenAICompatibleChat(url={self._url!r}, model={self._model!r})"

    async def complete(self, system: str, user: str) -> ChatResult:
        return await asyncio.to_thread(self._request, system, user)

    def _request(self, system: str, user: str) -> ChatResult:
        messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
        payload = {"model": self._model, "messages": messages, "temperature": 0, "max_tokens": self._max_tokens}
        return self._parse(self._server.post(payload))

    def _parse(self, raw: bytes) -> ChatResult:
        where = f"chat response from {self._url}"
        data = answer_json(raw, where)
        choices = data.get("choices") if isinstance(data, dict) else None
        first = choices[0] if isinstance(choices, list) and choices else None
        message = first.get("message") if isinstance(first, dict) else None
        text = message.get("content") if isinstance(message, dict) else None
        if not isinstance(text, str):
            raise InvalidInput(f"{where} has no choices[0].message.content text")
        usage = data.get("usage") if isinstance(data, dict) else None
        return ChatResult(
            text=text,
            usage=InferenceUsage(calls=1, input_tokens=usage_tokens(usage, "prompt_tokens")),
            output_tokens=usage_tokens(usage, "completion_tokens"),
        )


__all__ = ["OpenAICompatibleChat"]
