"""mem0's open-source library (``mem0ai==2.2.1``) in verbatim mode, local embedder, local vector store.

As ``reference/peers.md`` §2.1 and mem0's docs describe: ``Memory.from_config`` with the default local vector
store (Qdrant, embedded/local mode, ``path=<workdir>/qdrant``, ``on_disk=True`` so memories survive a restart)
and the SQLite history DB in the workdir; ``add(text, user_id=..., infer=False)`` stores the text verbatim (no
LLM call). Bulk: ``add(messages=[{"role": "user", "content": ...}, ...], infer=False)``, which stores one memory
per message. An update is ``Memory.update(memory_id, text=new)``. Search is ``search(query, filters=
{"user_id": ...}, top_k=k)`` with its defaults (threshold 0.1; ``rerank=False``); its BM25 channel needs
``fastembed``'s BM25 model, which downloads at run time, so mem0 reports it disabled and ranks semantically:
one mode, ``semantic``.

Embedder: mem0 has no provider for an ONNX model, so the worker maps mem0's ``huggingface`` provider name to a
small ``EmbeddingBase`` subclass here that calls all-MiniLM-L6-v2 int8 ONNX (``embedder.py``: the same model,
tokenizer and pipeline as memstone). The LLM is configured (mem0 constructs one) but never called with
``infer=False``. Telemetry off (``MEM0_TELEMETRY=False``), ``MEM0_DIR`` inside the workdir.
"""

from __future__ import annotations

import contextlib
import os
from importlib.metadata import version

from base import Note, SystemUnderTest
from embcache import BulkStage, cache_dir
from embedder import DIM, MiniLM

USER = "bench"
_MODEL: MiniLM | None = None
_STAGE: BulkStage | None = None  # compare.py --embed-cache: vectors of the bulk chunk being added (embcache.py)


def _model() -> MiniLM:
    global _MODEL
    if _MODEL is None:
        _MODEL = MiniLM()
    return _MODEL


def _embedding_class():
    from mem0.embeddings.base import EmbeddingBase

    class MiniLMEmbedding(EmbeddingBase):
        def embed(self, text, memory_action=None):
            staged = _STAGE.take_one(text) if _STAGE is not None else None  # None outside write_bulk
            return staged.tolist() if staged is not None else _model().embed_one(text)

        def embed_batch(self, texts, memory_action="add"):
            return [v.tolist() for v in _model().embed(list(texts))]

    return MiniLMEmbedding


class System(SystemUnderTest):
    name = "mem0"

    def __init__(self) -> None:
        os.environ.setdefault("MEM0_TELEMETRY", "False")
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        self.m = None
        self.key_of: dict[str, str] = {}
        self.id_of: dict[str, str] = {}
        if cache_dir() is not None:
            global _STAGE
            _STAGE = self.bulk_stage = BulkStage(lambda texts: _model().embed(texts))

    def modes(self) -> list[str]:
        return ["semantic"]

    def info(self) -> dict[str, object]:
        return {
            "mem0ai": version("mem0ai"),
            "qdrant-client": version("qdrant-client"),
            "vector_store": "qdrant local, on_disk",
            "search": "mem0 defaults (threshold 0.1, no rerank)",
        }

    def setup(self, workdir: str, fresh: bool = True) -> None:
        self.workdir = workdir
        os.makedirs(workdir, exist_ok=True)
        os.environ["MEM0_DIR"] = os.path.join(workdir, "mem0dir")
        import mem0.embeddings.base  # noqa: F401
        from mem0 import Memory
        from mem0.utils.factory import EmbedderFactory

        mod = __import__(__name__)
        mod.MiniLMEmbedding = _embedding_class()
        EmbedderFactory.provider_to_class["huggingface"] = f"{__name__}.MiniLMEmbedding"
        config = {
            "vector_store": {
                "provider": "qdrant",
                "config": {
                    "collection_name": "bench",
                    "path": os.path.join(workdir, "qdrant"),
                    "on_disk": True,
                    "embedding_model_dims": DIM,
                },
            },
            "embedder": {
                "provider": "huggingface",
                "config": {"model": "all-MiniLM-L6-v2-int8", "embedding_dims": DIM},
            },
            "llm": {"provider": "openai", "config": {"api_key": "not-used-infer-false", "model": "unused"}},
            "history_db_path": os.path.join(workdir, "history.db"),
        }
        self.m = Memory.from_config(config)

    def _remember_ids(self, notes: list[Note], result) -> None:
        items = result.get("results", result) if isinstance(result, dict) else result
        for n, item in zip(notes, items, strict=False):
            self.key_of[item["id"]] = n.key
            self.id_of[n.key] = item["id"]

    def write(self, notes: list[Note]) -> None:
        for n in notes:
            r = self.m.add(n.text, user_id=USER, infer=False, metadata={"key": n.key})
            self._remember_ids([n], r)

    def write_bulk(self, notes: list[Note]) -> None:
        for i in range(0, len(notes), 1000):
            chunk = notes[i : i + 1000]
            r = self.m.add([{"role": "user", "content": n.text} for n in chunk], user_id=USER, infer=False)
            self._remember_ids(chunk, r)

    def update(self, key: str, new_text: str) -> None:
        self.m.update(self.id_of[key], text=new_text)

    def search(self, query: str, k: int, mode: str) -> list[tuple[str, str]]:
        r = self.m.search(query, filters={"user_id": USER}, top_k=k)
        return [(self.key_of.get(x["id"], x["id"]), x.get("memory", "")) for x in r["results"]]

    def close(self) -> None:
        if self.m is not None:
            with contextlib.suppress(Exception):  # qdrant local may already be closed
                self.m.vector_store.client.close()
            self.m = None
