"""PostgreSQL's vector codec: pgvector ``vector(d)`` rows (``halfvec(d)`` above 2,000 dimensions, up to 4,000:
the limits of pgvector's HNSW) with an HNSW index (L2), keyed by the shared metadata's ``vector_rowid``.

The fast path is the HNSW index with ``hnsw.iterative_scan = relaxed_order`` (a filter on the searched Memories
still returns k rows) and ``hnsw.ef_search`` raised to at least k; the exact reference (``exact=True``) orders by
a distance expression the index cannot serve, so the planner scans every row of the searched Memories.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Sequence

from ...domain.ids import MemoryId
from ..sql.engine import Conn, Nearest
from . import schema
from .fts import later

EF_SEARCH_MIN = 100
EF_SEARCH_MAX = 1000  # pgvector's upper bound


def vector_text(vector: Sequence[float]) -> str:
    """pgvector's text form; ``repr`` keeps every float exactly (the same float32 the index stores)."""
    return "[" + ",".join(repr(float(x)) for x in vector) + "]"


class PgVectors:
    """The ``VectorCodec`` of the PostgreSQL engine."""

    def __init__(self) -> None:
        self._seen = False  # the vector table exists (once it does, only a migration's swap replaces it, in one txn)

    def exists(self, conn: Conn) -> bool:
        if not self._seen:
            self._seen = bool(conn.q("SELECT to_regclass('memory_entry_vectors') IS NOT NULL")[0][0])
        return self._seen

    def check_dimension(self, dimension: int) -> None:
        """Refuse a profile HNSW cannot index (before a model migration embeds anything with it)."""
        schema.vector_type(dimension)

    def create(self, conn: Conn, dimension: int) -> None:
        for statement in schema.vector_ddl(dimension).split(";"):
            if statement.strip():
                conn.x(statement)

    def drop(self, conn: Conn) -> None:
        conn.x("DROP TABLE IF EXISTS memory_entry_vectors")
        conn.x("DELETE FROM memory_entry_vector_metadata")

    def put(self, conn: Conn, rowid: int, memory_id: MemoryId, vector: tuple[float, ...]) -> None:
        later(
            conn,
            "INSERT INTO memory_entry_vectors (vector_rowid, memory_artifact_id, embedding) "
            f"VALUES (?, ?, ?::{schema.vector_type(len(vector))})",
            (rowid, memory_id, vector_text(vector)),
        )

    def delete(self, conn: Conn, rowids: Sequence[int]) -> None:
        conn.x("DELETE FROM memory_entry_vectors WHERE vector_rowid = ANY(?::bigint[])", (list(rowids),))

    def present(self, conn: Conn) -> set[int]:
        return {int(r[0]) for r in conn.q("SELECT vector_rowid FROM memory_entry_vectors")}

    def read(self, conn: Conn, rowids: Sequence[int]) -> dict[int, tuple[float, ...]]:
        """The stored vectors of these rowids (``memstone copy`` carries them instead of embedding again)."""
        rows = conn.q(
            "SELECT vector_rowid, embedding::text FROM memory_entry_vectors WHERE vector_rowid = ANY(?::bigint[])",
            (list(rowids),),
        )
        out: dict[int, tuple[float, ...]] = {}
        for rowid, text in rows:  # pgvector prints the shortest form of each float32 (float16 for a halfvec)
            values = [float(x) for x in str(text).strip("[]").split(",")]
            out[int(rowid)] = struct.unpack(f"<{len(values)}f", struct.pack(f"<{len(values)}f", *values))
        return out

    def staging(self, conn: Conn, *, keep: bool) -> None:
        if not keep:
            conn.x("DELETE FROM memory_vector_staging")  # the table itself is part of the schema

    def knn(self, conn: Conn, ask: Nearest) -> list[tuple[float, int]]:
        memory_ids, vector, k, exact = ask.memory_ids, ask.vector, ask.k, ask.exact
        if not memory_ids:
            return []
        q, kind = vector_text(vector), schema.vector_type(len(vector))
        if exact:
            # ``+ 0`` makes the ordering an expression no index provides: a scan of every row, the reference.
            rows = conn.q(
                f"SELECT embedding <-> ?::{kind} AS d, vector_rowid FROM memory_entry_vectors "
                f"WHERE memory_artifact_id = ANY(?::text[]) ORDER BY (embedding <-> ?::{kind}) + 0, vector_rowid "
                "LIMIT ?",
                (q, list(memory_ids), q, k),
            )
        else:
            ef = min(EF_SEARCH_MAX, max(EF_SEARCH_MIN, k))
            later(  # travels with the search statement: one round trip
                conn,
                "SELECT set_config('hnsw.ef_search', ?, true), "
                "set_config('hnsw.iterative_scan', 'relaxed_order', true)",
                (str(ef),),
            )
            rows = conn.q(
                f"SELECT embedding <-> ?::{kind} AS d, vector_rowid FROM memory_entry_vectors "
                f"WHERE memory_artifact_id = ANY(?::text[]) ORDER BY embedding <-> ?::{kind} LIMIT ?",
                (q, list(memory_ids), q, k),
            )
        return [(float(d), int(rowid)) for d, rowid in rows]

    def begin(self, conn: Conn, ask: Nearest) -> Callable[[], list[tuple[float, int]]] | None:
        return None  # the scan is one statement on this connection, after the FTS one

    def close(self) -> None:
        return None


__all__ = ["PgVectors", "vector_text"]
