"""The replica's side of a search on LanceDB's indexes: candidates from LanceDB at or below the watermarks, the rows
above them searched exactly on the replica, every candidate checked and scored on the replica.

Both channels fall back to the replica's own exact search (the path every store takes before its first feed) when
the search tables cannot answer for this replica: never fed, fed at a log position this replica has not reached,
fed under another vector generation, too many rows above the watermark, LanceDB failing, or LanceDB's list cut
short before enough of its candidates passed the replica's check (a superseded version's row, a filter). So a
search answers what the replica path answers, with LanceDB's indexes choosing the candidates.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from ...domain.ids import EntryId, EntryVersionId, MemoryId
from ..sql.engine import Candidates, Conn, FtsRow, Nearest
from ..sqlite.fts import SQLiteFullText, match_expression
from ..sqlite.vectors import SQLiteVectors
from .log import Position
from .search import LanceSearchTables, SearchState

WIDEN = 2  # LanceDB is asked for this many times the candidates the replica path would rank
TAIL_MAX = 20_000  # rows above a watermark searched exactly; beyond this the replica path is as cheap


def _marks(n: int) -> str:
    return ",".join("?" * n)


def _varint(data: bytes, at: int) -> tuple[int, int]:
    """One SQLite varint (what FTS5 writes) at ``at``: (value, next offset)."""
    value = 0
    for i in range(8):
        byte = data[at + i]
        value = (value << 7) | (byte & 0x7F)
        if byte < 0x80:
            return value, at + i + 1
    return (value << 8) | data[at + 8], at + 9


def _bm25(conn: Conn, terms: Sequence[str], rows: dict[int, Any]) -> list[tuple[float, int, Any]]:
    """FTS5's ``bm25()`` of the replica's index for these head rows (``filtered_heads``: their text is column 5),
    best first with ties by key, the rows no term matches left out: the score and order the replica's own
    search gives them, computed for these rows only.

    Calling ``bm25()`` with ``rowid IN (…)`` would cost a full count of every term's matches per row (FTS5
    recounts its statistics per lookup), so the same formula runs here, in the same double arithmetic, on the
    same statistics: the row count and total size from the index's averages record, each term's matching-row
    count, and each row's tokens (Analyzer v1's, which FTS5 keeps whole: one token per space-separated term).
    """
    if not rows:
        return []
    block = conn.q("SELECT block FROM memory_entry_search_fts_data WHERE id = 1")  # FTS5's averages record
    n_row, at = _varint(bytes(block[0][0]), 0)
    n_token, _ = _varint(bytes(block[0][0]), at)
    avgdl = n_token / n_row
    idf = []
    for term in terms:
        n_hit = int(
            conn.q(
                "SELECT count(*) FROM memory_entry_search_fts WHERE memory_entry_search_fts MATCH ?",
                [match_expression([term])],
            )[0][0]
        )
        value = math.log((n_row - n_hit + 0.5) / (n_hit + 0.5))
        idf.append(value if value > 0.0 else 1e-6)
    k1, b = 1.2, 0.75
    out = []
    for key, row in rows.items():
        tokens = str(row[5]).split()
        counts = {t: 0 for t in terms}
        for t in tokens:
            if t in counts:
                counts[t] += 1
        if not any(counts.values()):
            continue
        d = float(len(tokens))
        score = 0.0
        for term, weight in zip(terms, idf, strict=True):
            freq = float(counts[term])
            score += weight * ((freq * (k1 + 1.0)) / (freq + k1 * (1 - b + b * d / avgdl)))
        out.append((-1.0 * score, key, row))
    out.sort(key=lambda r: (r[0], r[1]))  # as ``ORDER BY bm25(…), rowid``
    return [(-bm25, key, row) for bm25, key, row in out]


def _plain(terms: Sequence[str]) -> bool:
    """Whether every term is one FTS5 token (letters, digits, marks, ``_``), as Analyzer v1's terms are."""
    return all(
        t and all(c == "_" or unicodedata.category(c)[0] in "LNM" or unicodedata.category(c) == "Co" for c in t)
        for t in terms
    )


class Owner(Protocol):
    """What the search reads of its engine (``LanceEngine``; a Protocol, so no import cycle)."""

    search_tables: LanceSearchTables
    applied: Position
    use_index: bool

    def count(self, name: str) -> None: ...


class IndexedSearch:
    """Candidate generation for one engine (``LanceEngine``): ``head_candidates`` and ``knn``."""

    def __init__(self, engine: Owner) -> None:
        self.engine = engine

    def _usable(self) -> SearchState | None:
        if not self.engine.use_index:
            return None  # ``?search=replica`` (the default): the replica answers alone
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
        if state is None or not _plain(ask.terms):
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
        ranked = _bm25(conn, ask.terms, inner.filtered_heads(conn, sorted(keys), ask.where, ask.args))
        out: list[FtsRow] = []
        for score, key, h in ranked:
            out.append(FtsRow(MemoryId(h[1]), EntryId(h[2]), EntryVersionId(h[3]), h[4], key, score, h[5]))
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
