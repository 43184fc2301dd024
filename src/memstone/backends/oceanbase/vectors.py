"""OceanBase's vector codec: HNSW on the head table (the RFC's layout) plus a windows table, keyed by the core's
``memory_entry_vector_metadata.vector_rowid``.

- Window 0 of an entry (the only one, unless its text is long) is stored on its head row:
  ``memory_entry_heads.embedding_d{dim}`` with ``embedding_rowid`` naming its metadata row. Windows 1.. go to
  ``memory_vector_windows_d{dim}`` (and, after a rebuild, window 0 too: it cannot stay on a row the rebuild
  deletes). Both have an HNSW index (L2, vsag); ``knn`` searches both and merges.
- HNSW lags behind writes (bench/bench_oceanbase_hnsw.py: on seekdb, p50 ~7 ms and up to 50 ms on these
  index-organized tables under load; ~0.2 s and up to 2 s on a HEAP table). A search therefore also scans exactly
  the rows written within ``fresh_window_s`` (``embedding_written_at`` / ``written_at``, the server's clock; both
  sources in one statement), and runs the exact scan when the index returns fewer than k rows: three statements.
  ``exact=True`` is the reference scan every fast path is checked against.
- DDL (a dimension's column, index and table) runs on a side connection (``Connection.side_ddl``): ``create`` is
  called inside the core's write transaction, which DDL on the same connection would commit. ``drop`` deletes
  rows only (no DDL), so a model migration's swap stays one transaction.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Sequence
from typing import Any

from ...domain.ids import MemoryId
from ..sql.engine import Conn, Nearest
from . import schema
from .connection import Connection

_ALREADY_EXISTS = (1050, 1060, 1061)


def vector_literal(vector: Sequence[float]) -> str:
    """The text form OceanBase parses into a VECTOR (a binary parameter is not read as one)."""
    return "[" + ",".join(repr(float(x)) for x in vector) + "]"


def _float32s(value: object) -> tuple[float, ...]:
    """A VECTOR column as PyMySQL returns it (its text form, as str or bytes) read back as float32 values."""
    text = value.decode("ascii") if isinstance(value, bytes | bytearray) else str(value)
    values = [float(x) for x in text.strip().strip("[]").split(",")]
    return struct.unpack(f"<{len(values)}f", struct.pack(f"<{len(values)}f", *values))


def _marks(n: int) -> str:
    return ",".join("?" * n)


class OceanBaseVectors:
    """The ``VectorCodec`` of the OceanBase engine."""

    fresh_window_s: float = 30.0

    def __init__(self, db: Connection) -> None:
        self._db = db
        self.dims: set[int] = set()  # dimensions whose column and table exist

    # ---------------------------------------------------------------- tables
    def refresh(self) -> None:
        rows = self._db.q(
            "SELECT column_name FROM information_schema.columns WHERE table_schema = ? "
            "AND table_name = 'memory_entry_heads' AND column_name LIKE 'embedding\\_d%'",
            (self._db.database,),
        )
        cols = {str(r[0]).lower() for r in rows}
        tables = {
            str(r[0]).lower()
            for r in self._db.q(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = ? "
                "AND table_name LIKE 'memory\\_vector\\_windows\\_d%'",
                (self._db.database,),
            )
        }
        self.dims = {
            int(c.removeprefix("embedding_d"))
            for c in cols
            if c.removeprefix("embedding_d").isdigit()
            and schema.windows_table(int(c.removeprefix("embedding_d"))) in tables
        }

    def exists(self, conn: Conn) -> bool:
        return bool(self.dims)

    def check_dimension(self, dimension: int) -> None:
        schema.check_dimension(dimension)

    def create(self, conn: Conn, dimension: int) -> None:
        if dimension in self.dims:
            return
        import pymysql

        self.refresh()
        cols = {schema.head_vector_column(d) for d in self.dims}
        tables = {schema.windows_table(d) for d in self.dims}
        for statement in schema.vector_ddl(dimension, cols, tables):
            try:
                self._db.side_ddl(statement)  # never on the transaction's own connection
            except pymysql.err.Error as exc:
                if not (exc.args and exc.args[0] in _ALREADY_EXISTS):
                    raise
        self.refresh()

    def drop(self, conn: Conn) -> None:
        # Rows only (this runs inside the model migration's swap): every vector and its metadata row go; the
        # columns and tables of a dimension stay, empty, for any process still on that profile (`create` of the
        # new dimension made its own before the swap).
        conn.x("DELETE FROM memory_entry_vector_metadata")
        if not self.dims:
            return
        conn.x(f"UPDATE memory_entry_heads SET {self._cleared()} WHERE embedding_rowid IS NOT NULL")
        for dim in sorted(self.dims):
            conn.x(f"DELETE FROM {schema.windows_table(dim)}")

    def _cleared(self) -> str:
        """SET clauses that remove a head row's vector (every dimension's column) and its binding."""
        cols = [f"{schema.head_vector_column(d)} = NULL" for d in sorted(self.dims)]
        return ", ".join([*cols, "embedding_rowid = NULL", "embedding_written_at = NULL"])

    # ---------------------------------------------------------------- rows
    def put(self, conn: Conn, rowid: int, memory_id: MemoryId, vector: tuple[float, ...]) -> None:
        dim = len(vector)
        meta = conn.q(
            "SELECT entry_id, entry_version_id, chunk FROM memory_entry_vector_metadata WHERE vector_rowid = ?",
            (rowid,),
        )
        literal = vector_literal(vector)
        if meta and int(meta[0][2]) == 0:
            moved = conn.x(
                f"UPDATE memory_entry_heads SET {schema.head_vector_column(dim)} = ?, embedding_rowid = ?, "
                "embedding_written_at = NOW(6) WHERE memory_artifact_id = ? AND entry_id = ? AND entry_version_id = ?",
                (literal, rowid, memory_id, meta[0][0], meta[0][1]),
            )
            if moved == 1:
                return
        conn.x(
            f"INSERT INTO {schema.windows_table(dim)} (vector_rowid, memory_artifact_id, embedding, written_at) "
            "VALUES (?, ?, ?, NOW(6))",
            (rowid, memory_id, literal),
        )

    def delete(self, conn: Conn, rowids: Sequence[int]) -> None:
        if not rowids:
            return
        ids = list(rowids)
        if not self.dims:
            return
        marks = _marks(len(ids))
        conn.x(f"UPDATE memory_entry_heads SET {self._cleared()} WHERE embedding_rowid IN ({marks})", ids)
        for dim in sorted(self.dims):
            conn.x(f"DELETE FROM {schema.windows_table(dim)} WHERE vector_rowid IN ({marks})", ids)

    def present(self, conn: Conn) -> set[int]:
        out: set[int] = set()
        for dim in sorted(self.dims):
            col = schema.head_vector_column(dim)
            out.update(
                int(r[0])
                for r in conn.q(f"SELECT embedding_rowid FROM memory_entry_heads WHERE {col} IS NOT NULL")
                if r[0] is not None
            )
            out.update(int(r[0]) for r in conn.q(f"SELECT vector_rowid FROM {schema.windows_table(dim)}"))
        return out

    def read(self, conn: Conn, rowids: Sequence[int]) -> dict[int, tuple[float, ...]]:
        """The stored vectors of these rowids, from the head rows and the windows tables (``memstone copy``
        carries them instead of embedding again). OceanBase stores float32 and prints each one exactly."""
        out: dict[int, tuple[float, ...]] = {}
        if not rowids or not self.dims:
            return out
        ids = list(rowids)
        marks = _marks(len(ids))
        for dim in sorted(self.dims):
            col = schema.head_vector_column(dim)
            rows = conn.q(
                f"SELECT embedding_rowid, {col} FROM memory_entry_heads "
                f"WHERE embedding_rowid IN ({marks}) AND {col} IS NOT NULL",
                ids,
            )
            rows += conn.q(
                f"SELECT vector_rowid, embedding FROM {schema.windows_table(dim)} WHERE vector_rowid IN ({marks})", ids
            )
            for rowid, value in rows:
                out[int(rowid)] = _float32s(value)
        return out

    def park(self, conn: Conn) -> None:
        """Move head-row vectors to the windows tables (before a rebuild deletes every head row)."""
        for dim in sorted(self.dims):
            col = schema.head_vector_column(dim)
            conn.x(
                f"INSERT INTO {schema.windows_table(dim)} (vector_rowid, memory_artifact_id, embedding, written_at) "
                f"SELECT embedding_rowid, memory_artifact_id, {col}, NOW(6) FROM memory_entry_heads "
                f"WHERE embedding_rowid IS NOT NULL AND {col} IS NOT NULL"
            )

    # ---------------------------------------------------------------- search
    def knn(self, conn: Conn, ask: Nearest) -> list[tuple[float, int]]:
        memory_ids, vector, k, exact = ask.memory_ids, ask.vector, ask.k, ask.exact
        dim = len(vector)
        if dim not in self.dims:
            self.refresh()
            if dim not in self.dims:
                return []
        literal = vector_literal(vector)
        mids = f"memory_artifact_id IN ({_marks(len(memory_ids))})"
        sources = (
            ("memory_entry_heads", schema.head_vector_column(dim), "embedding_rowid", "embedding_written_at"),
            (schema.windows_table(dim), "embedding", "vector_rowid", "written_at"),
        )
        best: dict[int, float] = {}

        def keep(rows: list[tuple[float, int]]) -> None:
            for distance, rowid in rows:
                if rowid not in best or distance < best[rowid]:
                    best[rowid] = distance

        second: list[str] = []
        for table, column, key, written in sources:
            where = f"{mids} AND {column} IS NOT NULL AND {key} IS NOT NULL"
            rows = self._nearest(conn, table, column, key, where, memory_ids, literal, k, approximate=not exact)
            keep(rows)
            if exact:
                continue
            if len(rows) >= k:  # and the rows written within the window, which the index may not hold yet
                where += f" AND {written} >= NOW(6) - INTERVAL {int(self.fresh_window_s * 1e6)} MICROSECOND"
            # else HNSW returned fewer than k rows (a small table, or rows not indexed yet): the exact scan answers
            # (it holds the fresh rows too; when the index returned every row there is, it returns the same rows).
            second.append(
                f"(SELECT l2_distance({column}, ?) AS d, {key} AS r FROM {table} WHERE {where} "
                f"ORDER BY l2_distance({column}, ?) LIMIT ?)"
            )
        if second:  # both sources' second scans in one statement
            args = [literal, *memory_ids, literal, k]
            keep([(float(r[0]), int(r[1])) for r in conn.q(" UNION ALL ".join(second), args * len(second))])
        return sorted((d, r) for r, d in best.items())[:k]

    @staticmethod
    def _nearest(
        conn: Conn,
        table: str,
        column: str,
        key: str,
        where: str,
        memory_ids: Sequence[str],
        literal: str,
        k: int,
        *,
        approximate: bool,
    ) -> list[tuple[float, int]]:
        rows: list[Any] = conn.q(
            f"SELECT l2_distance({column}, ?) AS d, {key} FROM {table} WHERE {where} "
            f"ORDER BY l2_distance({column}, ?) {'APPROXIMATE ' if approximate else ''}LIMIT ?",
            [literal, *memory_ids, literal, k],
        )
        return [(float(r[0]), int(r[1])) for r in rows]

    def begin(self, conn: Conn, ask: Nearest) -> Callable[[], list[tuple[float, int]]] | None:
        return None  # the scan is a statement on the same connection: it runs after the FTS statement

    def staging(self, conn: Conn, *, keep: bool) -> None:
        if not keep:
            conn.x("DELETE FROM memory_vector_staging")  # the table is there from migration 1 (no DDL here)

    def close(self) -> None:
        return None


__all__ = ["OceanBaseVectors", "vector_literal"]
