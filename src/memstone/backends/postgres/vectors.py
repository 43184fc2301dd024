"""PostgreSQL's vector codec: pgvector ``vector(d)`` rows (``halfvec(d)`` above 2,000 dimensions, up to 4,000:
the limits of pgvector's HNSW) with an HNSW index (L2), keyed by the shared metadata's ``vector_rowid``.

The fast path is the HNSW index with ``hnsw.iterative_scan = relaxed_order`` (a filter on the searched Memories
still returns k rows) and ``hnsw.ef_search`` raised to at least k; the exact reference (``exact=True``) orders by
a distance expression the index cannot serve, so the planner scans every row of the searched Memories.
"""

from __future__ import annotations

import functools
import struct
from collections.abc import Callable, Sequence
from typing import Any

from ...domain.ids import EntryId, EntryVersionId, MemoryId
from ..sql.engine import Conn, Nearest, snapshot_of
from . import schema
from .fts import later

Statement = tuple[str, Sequence[object]]

# 100 gave recall@10 0.933 against the exact scan at 100,000 MiniLM vectors (m 16, ef_construction 64), 200 gave
# 0.945, 400 0.966 at 2.7 / 3.4 / 6.7 ms per statement (docs/benchmarks.md, "100,000 entries with MiniLM").
EF_SEARCH_MIN = 400
EF_SEARCH_MAX = 1000  # pgvector's upper bound


def vector_text(vector: Sequence[float]) -> str:
    """pgvector's text form; ``repr`` keeps every float exactly (the same float32 the index stores)."""
    return "[" + ",".join(repr(float(x)) for x in vector) + "]"


@functools.lru_cache(maxsize=32)
def _query_text(vector: tuple[float, ...]) -> str:
    """``vector_text`` of a query vector, formatted once (a vector search formats it when its statement is queued
    with the heads' one and again to find it: 0.2-0.4 ms each for 384 floats)."""
    return vector_text(vector)


class PgVectors:
    """The ``VectorCodec`` of the PostgreSQL engine."""

    def __init__(self, table: str = "memory_entry_vectors") -> None:
        self.table = table
        self.exists_sql = f"to_regclass('{table}') IS NOT NULL"  # a write's first statement carries it
        self._seen = False  # the vector table exists (once it does, only a migration's swap replaces it, in one txn)
        self._shards: dict[int, PgVectors] = {}

    def shard(self, dimension: int) -> PgVectors:
        """The codec of the table of one dimension for the organizations' own profiles (``backends/sql/routes``):
        ``memory_entry_vectors_d<dimension>``, created by an org's model migration, never by a write."""
        schema.vector_type(dimension)  # refuse a size HNSW cannot index before any table is named for it
        found = self._shards.get(dimension)
        if found is None:
            found = self._shards[dimension] = PgVectors(f"memory_entry_vectors_d{dimension}")
        return found

    def exists(self, conn: Conn) -> bool:
        if not self._seen:
            self._seen = bool(conn.q(f"SELECT {self.exists_sql}")[0][0])
        return self._seen

    def check_dimension(self, dimension: int) -> None:
        """Refuse a profile HNSW cannot index (before a model migration embeds anything with it)."""
        schema.vector_type(dimension)

    def create(self, conn: Conn, dimension: int) -> None:
        for statement in schema.vector_ddl(dimension, self.table).split(";"):
            if statement.strip():
                conn.x(statement)

    def drop(self, conn: Conn) -> None:
        """Drop this table and the metadata rows of the vectors it held (an org's tables keep theirs)."""
        if self.exists(conn):
            conn.x(
                "DELETE FROM memory_entry_vector_metadata m "
                f"WHERE EXISTS (SELECT 1 FROM {self.table} v WHERE v.vector_rowid = m.vector_rowid)"
            )
        conn.x(f"DROP TABLE IF EXISTS {self.table}")
        self._seen = False

    def put(self, conn: Conn, rowid: int, memory_id: MemoryId, vector: tuple[float, ...]) -> None:
        later(
            conn,
            f"INSERT INTO {self.table} (vector_rowid, memory_artifact_id, embedding) "
            f"VALUES (?, ?, ?::{schema.vector_type(len(vector))})",
            (rowid, memory_id, vector_text(vector)),
        )

    def delete(self, conn: Conn, rowids: Sequence[int]) -> None:
        conn.x(f"DELETE FROM {self.table} WHERE vector_rowid = ANY(?::bigint[])", (list(rowids),))

    def present(self, conn: Conn) -> set[int]:
        return {int(r[0]) for r in conn.q(f"SELECT vector_rowid FROM {self.table}")}

    def read(self, conn: Conn, rowids: Sequence[int]) -> dict[int, tuple[float, ...]]:
        """The stored vectors of these rowids (``memstone copy`` carries them instead of embedding again)."""
        rows = conn.q(
            f"SELECT vector_rowid, embedding::text FROM {self.table} WHERE vector_rowid = ANY(?::bigint[])",
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

    def _statements(self, conn: Conn, ask: Nearest) -> tuple[list[Statement], Statement]:
        """(settings, statement) of a nearest-neighbour search: in a read transaction the statement also reads its
        windows' metadata (``ProjectionRows.windows``), recorded by ``_scored``."""
        memory_ids, vector, k, exact = ask.memory_ids, ask.vector, ask.k, ask.exact
        q, kind = _query_text(tuple(vector)), schema.vector_type(len(vector))
        settings: list[Statement] = []
        if exact:
            # ``+ 0`` makes the ordering an expression no index provides: a scan of every row, the reference.
            nearest = (
                f"SELECT embedding <-> ?::{kind} AS d, vector_rowid FROM {self.table} "
                f"WHERE memory_artifact_id = ANY(?::text[]) ORDER BY (embedding <-> ?::{kind}) + 0, vector_rowid "
                "LIMIT ?"
            )
        else:
            ef = min(EF_SEARCH_MAX, max(EF_SEARCH_MIN, k))
            settings.append(
                (
                    "SELECT set_config('hnsw.ef_search', ?, true), "
                    "set_config('hnsw.iterative_scan', 'relaxed_order', true)",
                    (str(ef),),
                )
            )
            nearest = (
                f"SELECT embedding <-> ?::{kind} AS d, vector_rowid FROM {self.table} "
                f"WHERE memory_artifact_id = ANY(?::text[]) ORDER BY embedding <-> ?::{kind} LIMIT ?"
            )
        args = (q, list(memory_ids), q, k)
        if snapshot_of(conn) is None:
            return settings, (nearest, args)
        # Each window's metadata by its primary key (``OFFSET 0`` keeps the planner from turning the lookups into a
        # hash join over a scan of every metadata row: 1.2 ms at 10k rows, which grows with the store).
        return settings, (
            "SELECT n.d, n.vector_rowid, m.memory_artifact_id, m.entry_id, m.entry_version_id "
            f"FROM ({nearest}) n LEFT JOIN LATERAL (SELECT memory_artifact_id, entry_id, entry_version_id "
            "FROM memory_entry_vector_metadata m WHERE m.vector_rowid = n.vector_rowid OFFSET 0) m ON true "
            "ORDER BY n.d, n.vector_rowid",
            args,
        )

    @staticmethod
    def _scored(conn: Conn, rows: Sequence[Any]) -> list[tuple[float, int]]:
        snap = snapshot_of(conn)
        if snap is not None:
            for _, rowid, memory_id, entry_id, version_id in rows:
                if memory_id is not None:
                    snap.windows[int(rowid)] = (MemoryId(memory_id), EntryId(entry_id), EntryVersionId(version_id))
        return [(float(d), int(rowid)) for d, rowid, *_ in rows]

    def prefetch(self, conn: Conn, ask: Nearest) -> None:
        """A vector search's read transaction, before its first statement: send the HNSW statement with that one (the
        heads and routing rows), in the same trip and snapshot; ``knn`` takes its rows when it asks the same (an
        org's own table, or another ``k``, runs its own statement and this one is left unread)."""
        ahead = getattr(conn, "ahead", None)
        prefetched = getattr(conn, "prefetched", None)
        if ahead is None or prefetched is None or ask.exact or not ask.memory_ids:
            return
        settings, (sql, args) = self._statements(conn, ask)
        for setting in settings:
            later(conn, *setting)
        prefetched[sql, str(args)] = ahead(sql, args)

    def knn(self, conn: Conn, ask: Nearest) -> list[tuple[float, int]]:
        if not ask.memory_ids:
            return []
        settings, (sql, args) = self._statements(conn, ask)
        prefetched = getattr(conn, "prefetched", None)
        read = prefetched.pop((sql, str(args)), None) if prefetched else None
        if read is not None:
            return self._scored(conn, read())
        for setting in settings:
            later(conn, *setting)  # travels with the search statement: one round trip
        return self._scored(conn, conn.q(sql, args))

    def share(self, conn: Conn) -> None:
        """A hybrid search's read transaction, before its first statement: export its snapshot with that statement,
        so ``begin`` can run the HNSW statement beside the FTS one."""
        export = getattr(conn, "export_snapshot", None)
        if export is not None:
            export()

    def begin(self, conn: Conn, ask: Nearest) -> Callable[[], list[tuple[float, int]]] | None:
        """The HNSW statement on a second pooled connection while this one runs the FTS statement (``share`` came
        first): a hybrid search costs the slower of the two instead of their sum.

        Both connections read one snapshot: the second imports the one this read transaction exported
        (``SET TRANSACTION SNAPSHOT``), which stays valid while this transaction is open, and it is (the finisher
        is called before the search's COMMIT). So the windows found, and their metadata, are exactly what this
        transaction's own HNSW statement would have read; each hit is then re-checked against the head's manifest
        on this connection, as every hit is. None (the statement runs here, after the FTS one) when the snapshot
        was not exported or no pooled connection is free at once."""
        beside = getattr(conn, "beside", None)
        if beside is None or ask.exact or not ask.memory_ids:
            return None
        settings, statement = self._statements(conn, ask)
        started: Callable[[], list[Any]] | None = beside(statement, settings)
        if started is None:
            return None
        return lambda: self._scored(conn, started())

    def close(self) -> None:
        return None


__all__ = ["PgVectors", "vector_text"]
