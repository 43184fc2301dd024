"""Vectors of a Memory's live entries kept between captures, so an event embeds only its own new texts (issue 16).

The near-duplicate rule by meaning compares each candidate with the live entries that share a subject token
(:func:`~memstone.capture.nearness.semantic_texts`). Without a cache every event re-embeds those entries: up to
64 texts through the model, in the detached capture child of each prompt and turn. :class:`VectorCache` keeps
their unit vectors, keyed by the embedding profile, the Memory and the SHA-256 of the compared text, in memory
and (for the hook's child, one process per event) in a small SQLite file beside the hook log.

What it holds stays a copy of the live Memory, nothing more: each :meth:`VectorCache.keep` drops the Memory's
rows whose text is no longer live (revised, forgotten or purged entries, candidates that were not written), so a
purge leaves no vector of the erased text behind once the Memory is captured into again. No text is stored,
only digests and vectors. A cache that cannot be read or written is skipped: capture embeds instead.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import struct
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path

__all__ = ["VectorCache", "text_digest"]

Vector = tuple[float, ...]

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS capture_vectors (profile TEXT NOT NULL, memory TEXT NOT NULL, "
    "digest TEXT NOT NULL, vector BLOB NOT NULL, PRIMARY KEY (profile, memory, digest)) WITHOUT ROWID"
)


def text_digest(text: str) -> str:
    """The key of a compared text: SHA-256 of its UTF-8 bytes (the text itself is never stored)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _pack(vector: Vector) -> bytes:
    return struct.pack(f"<{len(vector)}d", *vector)


def _unpack(blob: bytes) -> Vector:
    return struct.unpack(f"<{len(blob) // 8}d", blob)


class VectorCache:
    """Unit vectors by (profile, Memory, text digest): in this process, and in ``path`` when one is given.

    >>> cache = VectorCache()
    >>> cache.keep("p", "mem_1", {"a rule": (1.0, 0.0)}, live=["a rule"])
    >>> cache.lookup("p", "mem_1", ["a rule", "another"])
    {'a rule': (1.0, 0.0)}
    """

    def __init__(self, path: Path | None = None) -> None:
        self.path = path
        self._memory: dict[tuple[str, str], dict[str, Vector]] = {}

    def _connect(self) -> sqlite3.Connection | None:
        if self.path is None:
            return None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fresh = not self.path.exists()
            conn = sqlite3.connect(self.path, timeout=5.0)
            if fresh:
                os.chmod(self.path, 0o600)  # digests and vectors of the user's memory: theirs only
            conn.execute(_SCHEMA)
            return conn
        except (sqlite3.Error, OSError):
            return None

    def lookup(self, profile: str, memory: str, texts: Sequence[str]) -> dict[str, Vector]:
        """The cached vectors of those ``texts`` (a missing one is simply absent)."""
        held = self._memory.setdefault((profile, memory), {})
        wanted = {text_digest(t): t for t in texts}
        out = {wanted[d]: v for d, v in held.items() if d in wanted}
        missing = [d for d in wanted if d not in held]
        conn = self._connect() if missing else None
        if conn is not None:
            try:
                with conn:
                    for start in range(0, len(missing), 500):
                        part = missing[start : start + 500]
                        marks = ",".join("?" * len(part))
                        rows = conn.execute(
                            f"SELECT digest, vector FROM capture_vectors WHERE profile = ? AND memory = ? "
                            f"AND digest IN ({marks})",
                            (profile, memory, *part),
                        ).fetchall()
                        for digest, blob in rows:
                            held[digest] = _unpack(blob)
                            out[wanted[digest]] = held[digest]
            except sqlite3.Error:
                pass
            finally:
                conn.close()
        return out

    def keep(self, profile: str, memory: str, vectors: Mapping[str, Vector], *, live: Collection[str]) -> None:
        """Store ``vectors`` (text → vector) for the Memory, and drop its rows of texts neither in ``live`` (the
        Memory's live entries) nor among ``vectors`` (this event's candidates)."""
        keepers = {text_digest(t) for t in live} | {text_digest(t) for t in vectors}
        held = self._memory.setdefault((profile, memory), {})
        held.update({text_digest(t): v for t, v in vectors.items()})
        for digest in [d for d in held if d not in keepers]:
            del held[digest]
        conn = self._connect()
        if conn is None:
            return
        try:
            with conn:
                conn.executemany(
                    "INSERT OR REPLACE INTO capture_vectors (profile, memory, digest, vector) VALUES (?, ?, ?, ?)",
                    [(profile, memory, text_digest(t), _pack(v)) for t, v in vectors.items()],
                )
                stored = conn.execute(
                    "SELECT digest FROM capture_vectors WHERE profile = ? AND memory = ?", (profile, memory)
                ).fetchall()
                gone = [(profile, memory, d) for (d,) in stored if d not in keepers]
                conn.executemany("DELETE FROM capture_vectors WHERE profile = ? AND memory = ? AND digest = ?", gone)
                # Another model's vectors of this Memory are of no use once its profile changed.
                conn.execute("DELETE FROM capture_vectors WHERE memory = ? AND profile <> ?", (memory, profile))
        except sqlite3.Error:
            pass
        finally:
            conn.close()
