"""The replica's side of a search on LanceDB's indexes: candidates from LanceDB at or below the watermarks, the rows
above them searched exactly on the replica, every candidate checked and scored on the replica.

Both channels fall back to the replica's own exact search (the path every store takes before its first feed) when
the search tables cannot answer for this replica: never fed, fed at a log position this replica has not reached,
fed under another vector generation, too many rows above the watermark, LanceDB failing, or LanceDB's list cut
short before enough of its candidates passed the replica's check (a superseded version's row, a filter). So a
search answers what the replica path answers, with LanceDB's indexes choosing the candidates.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ...domain.ids import EntryId, EntryVersionId, MemoryId
from ..sql.engine import Candidates, Conn, FtsRow, Nearest
from ..sqlite.fts import SQLiteFullText, match_expression
from ..sqlite.vectors import SQLiteVectors

if TYPE_CHECKING:
    from .engine import LanceEngine
    from .search import SearchState

WIDEN = 2  # LanceDB is asked for this many times the candidates the replica path would rank
TAIL_MAX = 20_000  # rows above a watermark searched exactly; beyond this the replica path is as cheap


def _marks(n: int) -> str:
    return ",".join("?" * n)


class IndexedSearch:
    """Candidate generation for one engine (``LanceEngine``): ``head_candidates`` and ``knn``."""

    def __init__(self, engine: LanceEngine) -> None:
        self.engine = engine

    def _usable(self) -> SearchState | None:
        try:
            state = self.engine.search_tables.state()
        except Exception:
            return None
        if state is None or state.fed_seq > self.engine.applied.seq:
            return None  # fed beyond this replica: its tables may lack rows this replica still shows
        return state

    # ---------------------------------------------------------------- full text
    def head_candidates(self, conn: Conn, ask: Candidates, inner: SQLiteFullText) -> list[FtsRow]:
        rows = self._head_candidates(conn, ask, inner)
        self.engine.count("text_index" if rows is not None else "text_replica")
        return rows if rows is not None else inner.head_candidates(conn, ask)

    def _head_candidates(self, conn: Conn, ask: Candidates, inner: SQLiteFullText) -> list[FtsRow] | None:
        state = self._usable()
        if state is None:
            return None
        mids = list(ask.memory_ids)
        heads = dict(
            conn.q(f"SELECT artifact_id, revision FROM artifact_heads WHERE artifact_id IN ({_marks(len(mids))})", mids)
        )
        # Above the watermark: head rows written by a Revision after the feed, found exactly on the replica.
        keys: set[int] = set()
        for mid in mids:
            mark = state.text_marks.get(mid, 0)
            if int(heads.get(mid, 0)) > mark:
                keys.update(
                    int(r[0])
                    for r in conn.q(
                        "SELECT projection_id FROM memory_entry_heads "
                        "WHERE memory_artifact_id = ? AND head_revision > ?",
                        (mid, mark),
                    )
                )
        if len(keys) > TAIL_MAX:
            return None
        wide = ask.depth * WIDEN
        try:
            found = self.engine.search_tables.text_candidates(mids, ask.terms, wide)
        except Exception:
            return None
        # At or below it: LanceDB's candidates, kept when the replica's head row still holds that version.
        for i in range(0, len(found), 300):
            batch = found[i : i + 300]
            pairs = " OR ".join(["(memory_artifact_id = ? AND entry_id = ? AND entry_version_id = ?)"] * len(batch))
            keys.update(
                int(r[0])
                for r in conn.q(
                    f"SELECT projection_id FROM memory_entry_heads WHERE {pairs}", [v for row in batch for v in row]
                )
            )
        if not keys:
            return [] if len(found) < wide else None
        ranked: list[Any] = []
        ordered = sorted(keys)
        for i in range(0, len(ordered), 30_000):
            part = ordered[i : i + 30_000]
            ranked += conn.q(
                "SELECT rowid, bm25(memory_entry_search_fts) FROM memory_entry_search_fts "
                f"WHERE memory_entry_search_fts MATCH ? AND rowid IN ({_marks(len(part))})",
                [match_expression(ask.terms), *part],
            )
        ranked.sort(key=lambda r: (float(r[1]), int(r[0])))  # bm25() is negated: lower is better
        passing = inner.filtered_heads(conn, [int(r[0]) for r in ranked], ask.where, ask.args)
        out: list[FtsRow] = []
        for key, score in ranked:
            h = passing.get(int(key))
            if h is not None:
                out.append(
                    FtsRow(MemoryId(h[1]), EntryId(h[2]), EntryVersionId(h[3]), h[4], int(key), -float(score), h[5])
                )
                if len(out) == ask.depth:
                    return out
        # Fewer than asked: exact only if LanceDB listed every match it has (else a row past its cut may pass).
        return out if len(found) < wide else None

    # ---------------------------------------------------------------- vectors
    def knn(self, conn: Conn, ask: Nearest, inner: SQLiteVectors) -> list[tuple[float, int]]:
        scored = None if ask.exact else self._knn(conn, ask)
        self.engine.count("vector_index" if scored is not None else "vector_replica")
        return scored if scored is not None else inner.knn(conn, ask)

    def usable_for(self, ask: Nearest) -> bool:
        state = self._usable()
        return state is not None and bool(state.vector_table) and state.generation == ask.generation

    def _knn(self, conn: Conn, ask: Nearest) -> list[tuple[float, int]] | None:
        import numpy as np

        state = self._usable()
        if state is None or not state.vector_table or state.generation != ask.generation:
            return None
        mids = list(ask.memory_ids)
        tail = conn.q(
            "SELECT m.vector_rowid, v.embedding FROM memory_entry_vector_metadata m "
            "JOIN memory_entry_search_vector v ON v.rowid = m.vector_rowid "
            f"WHERE m.memory_artifact_id IN ({_marks(len(mids))}) AND m.vector_rowid > ?",
            [*mids, state.vector_mark],
        )
        if len(tail) > TAIL_MAX:
            return None
        wide = ask.k * WIDEN
        try:
            found = self.engine.search_tables.nearest(state.vector_table, mids, ask.vector, wide)
        except Exception:
            return None
        # LanceDB's windows still live in this replica (same version), with their exact vectors; then the tail.
        rows: list[Any] = list(tail)
        for i in range(0, len(found), 500):
            batch = [f for f in found[i : i + 500] if f[1] <= state.vector_mark]  # above it: in the tail already
            if not batch:
                continue
            wanted = {(rowid, vid) for _, rowid, vid in batch}
            rows += [
                (r[0], r[2])
                for r in conn.q(
                    "SELECT m.vector_rowid, m.entry_version_id, v.embedding FROM memory_entry_vector_metadata m "
                    "JOIN memory_entry_search_vector v ON v.rowid = m.vector_rowid "
                    f"WHERE m.vector_rowid IN ({_marks(len(batch))})",
                    [rowid for _, rowid, _ in batch],
                )
                if (int(r[0]), str(r[1])) in wanted
            ]
        scored: list[tuple[float, int]] = []
        if rows:
            # Ranked by the replica's own distances (as ``VectorIndex``: unit vectors, L2 = sqrt(2 - 2 cos)), so
            # LanceDB's quantized distances choose the candidates but never order the hits.
            q = np.asarray(ask.vector, dtype=np.float32)
            matrix = np.frombuffer(b"".join(bytes(r[1]) for r in rows), dtype=np.float32).reshape(len(rows), -1)
            dist = np.sqrt(np.maximum(0.0, 2.0 - 2.0 * np.einsum("ij,j->i", matrix, q)))
            scored = sorted(zip(dist.tolist(), (int(r[0]) for r in rows), strict=True))
        if len(scored) < ask.k and len(found) >= wide:
            return None  # LanceDB's list was cut before enough of it was still live
        return scored[: ask.k]


class IndexedVectors:
    """SQLite's vector codec on the replica, with ``knn`` answered from LanceDB's vector index (``IndexedSearch``)."""

    def __init__(self, search: IndexedSearch, inner: SQLiteVectors) -> None:
        self._search = search
        self.inner = inner

    def exists(self, conn: Conn) -> bool:
        return self.inner.exists(conn)

    def create(self, conn: Conn, dimension: int) -> None:
        self.inner.create(conn, dimension)

    def drop(self, conn: Conn) -> None:
        self.inner.drop(conn)

    def put(self, conn: Conn, rowid: int, memory_id: MemoryId, vector: tuple[float, ...]) -> None:
        self.inner.put(conn, rowid, memory_id, vector)

    def delete(self, conn: Conn, rowids: Sequence[int]) -> None:
        self.inner.delete(conn, rowids)

    def present(self, conn: Conn) -> set[int]:
        return self.inner.present(conn)

    def read(self, conn: Conn, rowids: Sequence[int]) -> dict[int, tuple[float, ...]]:
        return self.inner.read(conn, rowids)

    def staging(self, conn: Conn, *, keep: bool) -> None:
        self.inner.staging(conn, keep=keep)

    def knn(self, conn: Conn, ask: Nearest) -> list[tuple[float, int]]:
        return self._search.knn(conn, ask, self.inner)

    def begin(self, conn: Conn, ask: Nearest) -> Callable[[], list[tuple[float, int]]] | None:
        if self._search.usable_for(ask):
            return None  # ``knn`` asks LanceDB after the FTS statement
        return self.inner.begin(conn, ask)

    def close(self) -> None:
        self.inner.close()


__all__ = ["IndexedSearch", "IndexedVectors"]
