"""An embedder for any server speaking the OpenAI ``POST /embeddings`` wire format (standard library only)."""

from __future__ import annotations

from collections.abc import Mapping

from ..domain.errors import InvalidInput, ProfileMismatchError
from ..model_server import ModelServer, answer_json, check_server_options, positive_int, usage_tokens
from ..ports import EmbeddingProfile, EmbeddingResult
from ._text import embed_in_batches, split_by_chars
from .profiles import openai_profile
from .vectors import normalize


def _reject_constant(name: str) -> object:
    raise InvalidInput(f"embedding response holds the non-finite number {name}")


class OpenAICompatibleEmbedder:
    """Embeds through ``POST {base_url}/embeddings`` with ``{"model": ..., "input": [...]}``.

    Works with OpenAI, Azure-style gateways, vLLM, llama.cpp, Ollama (``/v1``), LiteLLM and the like. Each batch
    of at most ``batch_size`` texts is one request, sent from a worker thread (``asyncio.to_thread``) with
    ``urllib.request``. The response must hold exactly one finite, non-zero vector of ``dimension`` numbers per
    input (ordered by ``index`` when given); vectors are re-normalised to unit length. Anything else raises
    :class:`InvalidInput` (a wrong dimension: :class:`ProfileMismatchError`). A refused or dropped connection, a
    timeout, HTTP 408/429 or 5xx raise :class:`BackendUnavailable` naming the URL; HTTP 400/413/422 raise
    :class:`InvalidInput` with the server's message; other HTTP errors raise :class:`BackendError`.

    ``usage.input_tokens`` sums the responses' ``usage.prompt_tokens`` (0 when the server reports none);
    ``usage.calls`` counts requests. ``windows()`` splits at ``window_chars`` characters (default 2,000, about
    500 tokens of English), at paragraph or sentence boundaries when possible, because the server's token
    window is unknown here. No retries: the caller decides.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        dimension: int,
        api_key: str | None = None,
        *,
        timeout: float = 30.0,
        window_chars: int = 2000,
        batch_size: int = 64,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        if not isinstance(base_url, str):
            raise InvalidInput(f"base_url must be a string, got {type(base_url).__name__}")
        self._base_url, self._model, seconds = check_server_options(base_url, model, timeout)
        if api_key is not None and not isinstance(api_key, str):
            raise InvalidInput("api_key must be a string")
        self._url = f"{self._base_url}/embeddings"
        self._profile = openai_profile(model, positive_int("dimension", dimension))
        self._window_chars = positive_int("window_chars", window_chars)
        self._batch_size = positive_int("batch_size", batch_size)
        self._server = ModelServer(
            url=self._url,
            server="embedding server",
            request="embedding",
            api_key=api_key,
            timeout=seconds,
            headers=dict(headers or {}),
            unreachable_hint="check that the server is running and base_url is right",
            key_hint="check api_key",
            other_hint="check base_url and model",
        )

    @property
    def profile(self) -> EmbeddingProfile:
        return self._profile

    @property
    def url(self) -> str:
        return self._url

    def __repr__(self) -> str:  # never shows the API key
        dim = self._profile.dimension
        return f"OpenAICompatibleEmbedder(url={self._url!r}, model={self._model!r}, dimension={dim})"

    def windows(self, text: str) -> tuple[str, ...]:
        return split_by_chars(text, self._window_chars)

    async def embed(self, texts: tuple[str, ...]) -> EmbeddingResult:
        return await embed_in_batches(texts, self._batch_size, self._request)

    # ---- one request (runs in a worker thread) ----
    def _request(self, inputs: tuple[str, ...]) -> tuple[list[tuple[float, ...]], int]:
        return self._parse(self._server.post({"model": self._model, "input": list(inputs)}), len(inputs))

    def _parse(self, raw: bytes, expected: int) -> tuple[list[tuple[float, ...]], int]:
        where = f"embedding response from {self._url}"
        payload = answer_json(raw, where, parse_constant=_reject_constant)
        if not isinstance(payload, dict) or not isinstance(payload.get("data"), list):
            raise InvalidInput(f"{where} has no 'data' list")
        data: list[object] = payload["data"]
        if len(data) != expected:
            raise InvalidInput(f"{where} holds {len(data)} vectors for {expected} inputs")
        items: list[dict[str, object]] = []
        for i, item in enumerate(data):
            if not isinstance(item, dict) or not isinstance(item.get("embedding"), list):
                raise InvalidInput(f"{where}: data[{i}] has no 'embedding' list of numbers")
            items.append(item)
        indices = [ix for item in items if isinstance(ix := item.get("index"), int) and not isinstance(ix, bool)]
        if len(indices) == len(items):  # every item carries its index: order by it
            if sorted(indices) != list(range(expected)):
                raise InvalidInput(f"{where}: indices {indices} are not a permutation of 0..{expected - 1}")
            items = [items[k] for k in sorted(range(expected), key=indices.__getitem__)]
        dim = self._profile.dimension
        vectors: list[tuple[float, ...]] = []
        for i, item in enumerate(items):
            embedding = item["embedding"]
            assert isinstance(embedding, list)
            if len(embedding) != dim:
                raise ProfileMismatchError(
                    f"{where}: vector {i} has dimension {len(embedding)}; profile {self._profile.profile_id} "
                    f"expects {dim}",
                    hint="the dimension given to the embedder must be the one the server's model returns",
                )
            vectors.append(normalize(embedding, where=f"{where}: vector {i}"))
        return vectors, usage_tokens(payload.get("usage"), "prompt_tokens")
