"""Opt-in embedding cache for BULK loads only (``compare.py --embed-cache DIR``; off by default).

A bulk load of 100k notes is embedding-bound (~80 notes/s on one core), and every system embeds the same notes
with the same model into bit-identical vectors. With the cache on, the harness sends each bulk chunk to the
worker's ``embed_prefetch`` op first (untimed): the worker looks the chunk's texts up in the cache, computes the
missing vectors with its real model, stores them, and stages the chunk's vectors in memory. The timed
``write_bulk`` that follows takes its vectors from that stage, so "bulk notes/s" is then the storage cost only.
The stage is cleared when ``write_bulk`` ends and is consulted by nothing else: single writes, updates and
queries always run the real model.

Storage: one SQLite file ``DIR/minilm-vectors.sqlite``, table ``vec(k BLOB PRIMARY KEY, v BLOB)``, where ``k`` is
the sha256 of ``MODEL_ID + "\\0" + text`` and ``v`` the float32 vector (384 x 4 bytes, little-endian). float32 is
what both embedders produce, so a round trip through the cache is lossless. The file is shared by every system
of every run (WAL, busy timeout), and whichever system needs a vector first computes and stores it.

Stdlib at import; numpy is imported on first use (memstone's cold start must not pay for it).
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import time

from embedder import DIM, MAX_TOKENS, MODEL_SHA256

ENV = "BENCH_EMBED_CACHE"
FILE = "minilm-vectors.sqlite"
#: Everything that determines a vector: the profile, the exact ONNX file, the truncation and the pipeline.
MODEL_ID = f"minilm-l6-int8 onnx-sha256:{MODEL_SHA256} max_tokens:{MAX_TOKENS} mean-pool l2 float32"
_BATCH = 500  # keys per SELECT ... IN (...)


def key(text: str) -> bytes:
    return hashlib.sha256(MODEL_ID.encode() + b"\0" + text.encode("utf-8", "surrogatepass")).digest()


def cache_dir() -> str | None:
    """The cache directory this worker was started with (``None``: the cache is off)."""
    return os.environ.get(ENV) or None


class EmbedCache:
    """Text -> float32 vector, on disk, keyed by sha256(model id + text)."""

    def __init__(self, directory: str) -> None:
        os.makedirs(directory, exist_ok=True)
        self.path = os.path.join(directory, FILE)
        self.conn = sqlite3.connect(self.path, timeout=60.0, isolation_level=None)
        self.conn.execute("PRAGMA journal_mode = WAL")
        self.conn.execute("PRAGMA synchronous = NORMAL")
        self.conn.execute("CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL)")
        self.conn.execute("CREATE TABLE IF NOT EXISTS vec (k BLOB PRIMARY KEY, v BLOB NOT NULL) WITHOUT ROWID")
        self.conn.execute("INSERT OR IGNORE INTO meta VALUES ('key', 'sha256(model_id + NUL + utf-8 text)')")
        self.conn.execute("INSERT OR IGNORE INTO meta VALUES ('value', ?)", (f"float32[{DIM}] little-endian",))

    def get_many(self, texts: list[str]) -> dict[str, bytes]:
        """The cached vectors (raw float32 bytes) of those ``texts`` the cache holds."""
        want = {key(t): t for t in texts}
        keys = list(want)
        out: dict[str, bytes] = {}
        for i in range(0, len(keys), _BATCH):
            part = keys[i : i + _BATCH]
            rows = self.conn.execute(f"SELECT k, v FROM vec WHERE k IN ({','.join('?' * len(part))})", part)
            for k, v in rows:
                if len(v) != DIM * 4:
                    raise ValueError(f"{self.path}: a cached vector has {len(v)} bytes, not {DIM * 4}")
                out[want[k]] = v
        return out

    def put_many(self, items: list[tuple[str, bytes]]) -> None:
        with self.conn:
            self.conn.execute("BEGIN IMMEDIATE")
            self.conn.executemany("INSERT OR IGNORE INTO vec (k, v) VALUES (?, ?)", [(key(t), v) for t, v in items])

    def close(self) -> None:
        self.conn.close()


def rows(directory: str) -> int:
    """How many vectors the cache under ``directory`` holds (0 when it does not exist yet)."""
    path = os.path.join(directory, FILE)
    if not os.path.exists(path):
        return 0
    conn = sqlite3.connect(path, timeout=60.0)
    try:
        return conn.execute("SELECT count(*) FROM vec").fetchone()[0]
    except sqlite3.OperationalError:
        return 0
    finally:
        conn.close()


class BulkStage:
    """The cached vectors of the next bulk chunk, for one worker (see the module docstring).

    ``embed(texts)`` must return float32 unit rows, shape (len(texts), DIM): the system's real model.
    """

    def __init__(self, embed) -> None:
        self.embed = embed
        self.cache: EmbedCache | None = None
        self.staged: dict[str, bytes] = {}
        self.active = False  # True only inside write_bulk
        self.served = 0  # vectors handed out from the stage (inside write_bulk only)

    def prefetch(self, texts: list[str]) -> dict[str, float]:
        """Make the cache hold every text's vector (computing the missing ones) and stage them."""
        if self.cache is None:
            directory = cache_dir()
            if directory is None:
                raise RuntimeError(f"embed_prefetch without {ENV}")
            self.cache = EmbedCache(directory)
        uniq = list(dict.fromkeys(texts))
        t0 = time.perf_counter()
        got = self.cache.get_many(uniq)
        t1 = time.perf_counter()
        missing = [t for t in uniq if t not in got]
        if missing:
            import numpy as np

            vecs = np.ascontiguousarray(self.embed(missing), dtype="<f4")
            if vecs.shape != (len(missing), DIM):
                raise ValueError(f"embedder returned shape {vecs.shape} for {len(missing)} texts")
            new = [(t, vecs[i].tobytes()) for i, t in enumerate(missing)]
            self.cache.put_many(new)
            got.update(new)
        self.staged = got
        return {
            "texts": len(uniq),
            "hits": len(uniq) - len(missing),
            "misses": len(missing),
            "read_s": t1 - t0,
            "embed_store_s": time.perf_counter() - t1,
        }

    def begin(self) -> None:
        self.active = True

    def end(self) -> None:
        self.active = False
        self.staged = {}

    def take(self, texts: list[str]):
        """The staged vectors of ``texts`` (float32 array), or ``None`` unless inside write_bulk with all staged."""
        if not self.active or not texts or any(t not in self.staged for t in texts):
            return None
        import numpy as np

        self.served += len(texts)
        return np.frombuffer(b"".join(self.staged[t] for t in texts), dtype="<f4").reshape(len(texts), DIM)

    def take_one(self, text: str):
        """One staged vector (float32 array) or ``None`` (outside write_bulk, or not staged)."""
        got = self.take([text])
        return None if got is None else got[0]
