"""SQLite's vector codec: exact float32 vectors in a sqlite-vec table partitioned by Memory, keyed by the shared
metadata row's ``vector_rowid``. Searches run on an in-process numpy copy of a Memory's vectors (``VectorIndex``:
exact float32 distances, over a 1-bit prescan's candidates in a large Memory); sqlite-vec's own exact scan is the
reference (``exact=True``)."""

from __future__ import annotations

import importlib.util
import struct
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import apsw

from ...domain.errors import BackendUnavailable
from ...domain.ids import MemoryId
from ..sql.engine import Conn, Nearest
from . import schema

# The fast path's 1-bit prescan (issue 15). In a large Memory a search ranks every row by the Hamming distance of
# its sign bits to the query's (48 bytes a row at 384 dimensions instead of 1,536), then scores exactly (float32,
# the full vectors, as the full scan does) only the nearest ``max(RERANK_DEPTH, RERANK_PER_K * k)`` codes and every
# code tied with the last of them. RERANK_DEPTH was fitted on the dev half of the 100k MiniLM speed queries
# (bench/vector_prescan.py; docs/benchmarks.md, "100,000 entries with MiniLM"); RERANK_PER_K is the same ratio
# for the 120 windows ``search(limit=10)`` asks for, so a larger limit reranks proportionally more.
RERANK_DEPTH = 4096
RERANK_PER_K = 32
PRESCAN_ROWS = 4  # prescan only when the Memory holds more than 4x the rows it would rerank


class VectorIndex:
    """One Memory's vector windows as a float32 matrix, for nearest-neighbour search in process.

    Rows live in buffers that grow by doubling, so adding the windows of one write costs O(rows added), not a
    copy of the whole matrix (a search after every write on a 100k Memory would otherwise copy ~150 MB each time).
    Beside each row sits its sign-bit code, the prescan of large indexes (``nearest``).
    """

    def __init__(self, generation: str) -> None:
        import numpy as np

        self._np = np
        self.generation = generation
        self.revision = -1
        self.max_rowid = 0
        self.reranked = 0  # rows the last search scored exactly (all live rows without a prescan)
        self._n = 0
        self._buf: Any = None  # (capacity, dim) float32; rows [0, _n) are live data
        self._codes: Any = None  # (words, capacity) uint64: each row's sign bits, zero-padded to 64-bit words
        self._rowid_buf = np.zeros(0, dtype=np.int64)
        self._alive_buf = np.zeros(0, dtype=bool)
        self._by_entry: dict[str, list[int]] = {}

    def _reserve(self, extra: int, dim: int) -> None:
        np = self._np
        need = self._n + extra
        capacity = 0 if self._buf is None else len(self._buf)
        if need <= capacity:
            return
        capacity = max(need, 2 * capacity, 1024)
        buf = np.empty((capacity, dim), dtype=np.float32)
        codes = np.zeros(((dim + 63) // 64, capacity), dtype=np.uint64)  # word-major: each XOR is one pass
        rowids = np.zeros(capacity, dtype=np.int64)
        alive = np.zeros(capacity, dtype=bool)
        if self._buf is not None:
            buf[: self._n] = self._buf[: self._n]
            codes[:, : self._n] = self._codes[:, : self._n]
            rowids[: self._n] = self._rowid_buf[: self._n]
            alive[: self._n] = self._alive_buf[: self._n]
        self._buf, self._codes, self._rowid_buf, self._alive_buf = buf, codes, rowids, alive

    def _code(self, vectors: Any) -> Any:
        """The sign bits of ``vectors`` (rows), packed into zero-padded 64-bit words."""
        np = self._np
        bits = np.packbits(vectors > 0, axis=1)
        words = (vectors.shape[1] + 63) // 64
        padded = np.zeros((len(vectors), words * 8), dtype=np.uint8)
        padded[:, : bits.shape[1]] = bits
        return padded.view(np.uint64)

    def add(self, rows: list[Any]) -> None:
        np = self._np
        if not rows:
            return
        vectors = np.frombuffer(b"".join(bytes(r[2]) for r in rows), dtype=np.float32).reshape(len(rows), -1)
        self._reserve(len(rows), vectors.shape[1])
        start, end = self._n, self._n + len(rows)
        self._buf[start:end] = vectors
        self._codes[:, start:end] = self._code(vectors).T
        self._rowid_buf[start:end] = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        self._alive_buf[start:end] = True
        self._n = end
        fresh: dict[str, list[int]] = {}
        for i, r in enumerate(rows):
            fresh.setdefault(r[1], []).append(start + i)
        for entry_id, positions in fresh.items():
            for old in self._by_entry.get(entry_id, ()):
                self._alive_buf[old] = False  # a newer window set of this entry replaces the older one
            self._by_entry[entry_id] = positions
        self.max_rowid = int(self._rowid_buf[end - 1])

    def nearest(self, vector: tuple[float, ...], k: int, rerank_depth: int = RERANK_DEPTH) -> list[tuple[float, int]]:
        """The ``k`` nearest live rows as (L2 distance, rowid), nearest first. Pure numpy: it releases the GIL,
        so it can run on another thread while the caller's thread runs an SQL statement.

        An index of more than ``PRESCAN_ROWS`` times ``max(rerank_depth, RERANK_PER_K * k)`` live rows is
        prescanned by sign bits and only its nearest codes (ties included) are scored; a smaller one, or
        ``rerank_depth=0``, is scanned exactly in full.
        """
        np = self._np
        n_rows = self._n
        if self._buf is None or n_rows == 0:
            return []
        alive = self._alive_buf[:n_rows]
        live = int(alive.sum())
        if live == 0:
            return []
        q = np.asarray(vector, dtype=np.float32)
        n = min(k, live)
        depth = max(rerank_depth, RERANK_PER_K * k)
        if rerank_depth > 0 and live > PRESCAN_ROWS * depth:
            rows = self._prescan(q, alive, depth)
            # take + vecdot, not fancy indexing + einsum or a BLAS matvec: 0.5 ms instead of 1.6 ms for 4k rows of
            # 384 here, and no OpenBLAS threads (a matvec of this size starts them; on a small machine they fight
            # the embedding model's and the agents' for the same cores, 7.9 ms CPU and 34 ms wall at load 12).
            sims = np.vecdot(self._buf.take(rows, axis=0), q)
            top = np.argpartition(-sims, n - 1)[:n] if n < len(rows) else np.arange(len(rows))
            picked, self.reranked = rows[top], len(rows)
        else:
            # einsum, not BLAS: one pass on the calling thread (OpenBLAS would start threads of its own).
            sims = np.einsum("ij,j->i", self._buf[:n_rows], q)
            sims[~alive] = -np.inf
            top = np.argpartition(-sims, n - 1)[:n] if n < n_rows else np.arange(n_rows)
            top = top[np.isfinite(sims[top])]
            picked, self.reranked = top, live
        # Unit vectors: squared L2 distance = 2 - 2 cos; report L2 like sqlite-vec.
        dist = np.sqrt(np.maximum(0.0, 2.0 - 2.0 * sims[top]))
        return sorted(zip(dist.tolist(), self._rowid_buf[picked].tolist(), strict=True))

    def _prescan(self, q: Any, alive: Any, depth: int) -> Any:
        """Positions of the live rows whose codes are nearest the query's: the ``depth`` nearest by Hamming
        distance and every row tied with the last of them, so the set does not depend on row order."""
        np = self._np
        codes, query = self._codes[:, : len(alive)], self._code(q[None, :])[0]
        hamming = np.bitwise_count(codes[0] ^ query[0]).astype(np.uint16)
        for word in range(1, len(query)):
            hamming += np.bitwise_count(codes[word] ^ query[word])
        dead = len(query) * 64 + 1  # farther than any code
        hamming[~alive] = dead
        within = np.cumsum(np.bincount(hamming, minlength=dead + 1))
        bound = int(np.searchsorted(within, depth))  # the smallest distance with >= depth codes at or within it
        return np.flatnonzero(hamming <= min(bound, dead - 1))


def _vec_extension_path() -> str:
    """The sqlite-vec loadable extension, found without importing its package (whose init imports numpy)."""
    spec = importlib.util.find_spec("sqlite_vec")
    if spec is None or not spec.submodule_search_locations:
        raise BackendUnavailable("the sqlite-vec package is not installed", hint="pip install sqlite-vec==0.1.9")
    return str(Path(next(iter(spec.submodule_search_locations))) / "vec0")


def _blob(vector: Sequence[float]) -> bytes:
    return struct.pack(f"<{len(vector)}f", *vector)


class SQLiteVectors:
    """The ``VectorCodec`` of the SQLite engine."""

    def __init__(self) -> None:
        self.vec_version: str | None = None
        self._indexes: dict[MemoryId, VectorIndex] = {}
        self.rerank_depth = RERANK_DEPTH  # 0: scan every row exactly (VectorIndex.nearest)
        self._scan_pool: ThreadPoolExecutor | None = None  # hybrid search's vector scan, beside the FTS statement

    def load(self, conn: apsw.Connection) -> None:
        """Load sqlite-vec and prove it works with an insert/search/delete probe (RFC: never trust a flag)."""
        conn.enable_load_extension(True)
        conn.load_extension(_vec_extension_path())
        conn.enable_load_extension(False)
        self.vec_version = str(conn.execute("SELECT vec_version()").fetchall()[0][0])
        conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.vec_probe USING vec0(embedding float[2])")
        conn.execute("INSERT INTO temp.vec_probe (rowid, embedding) VALUES (1, '[1.0, 0.0]')")
        found = conn.execute("SELECT rowid FROM temp.vec_probe WHERE embedding MATCH '[1.0, 0.0]' AND k = 1").fetchall()
        conn.execute("DELETE FROM temp.vec_probe WHERE rowid = 1")
        conn.execute("DROP TABLE temp.vec_probe")
        if found != [(1,)]:
            raise BackendUnavailable("sqlite-vec loaded but its probe query failed")

    exists_sql = "EXISTS (SELECT 1 FROM sqlite_master WHERE name = 'memory_entry_vector_metadata')"  # see VectorCodec

    def exists(self, conn: Conn) -> bool:
        return bool(conn.q(f"SELECT {self.exists_sql}")[0][0])

    def create(self, conn: Conn, dimension: int) -> None:
        for statement in schema.vector_ddl(dimension).split(";"):
            if statement.strip():
                conn.x(statement)

    def drop(self, conn: Conn) -> None:
        for table in schema.VECTOR_TABLES:
            conn.x(f"DROP TABLE IF EXISTS {table}")
        self._indexes.clear()

    def put(self, conn: Conn, rowid: int, memory_id: MemoryId, vector: tuple[float, ...]) -> None:
        conn.x(
            "INSERT INTO memory_entry_search_vector (rowid, memory_artifact_id, embedding) VALUES (?, ?, ?)",
            (rowid, memory_id, _blob(vector)),
        )

    def delete(self, conn: Conn, rowids: Sequence[int]) -> None:
        for rowid in rowids:
            conn.x("DELETE FROM memory_entry_search_vector WHERE rowid = ?", (rowid,))

    def present(self, conn: Conn) -> set[int]:
        return {int(r[0]) for r in conn.q("SELECT rowid FROM memory_entry_search_vector")}

    def read(self, conn: Conn, rowids: Sequence[int]) -> dict[int, tuple[float, ...]]:
        """The stored vectors of these rowids (``memstone copy`` carries them instead of embedding again)."""
        out: dict[int, tuple[float, ...]] = {}
        for rowid in rowids:
            for r in conn.q("SELECT rowid, embedding FROM memory_entry_search_vector WHERE rowid = ?", (rowid,)):
                blob = bytes(r[1])
                out[int(r[0])] = struct.unpack(f"<{len(blob) // 4}f", blob)
        return out

    def staging(self, conn: Conn, *, keep: bool) -> None:
        if not keep:
            conn.x("DROP TABLE IF EXISTS memory_vector_staging")
            return
        conn.x(
            "CREATE TABLE IF NOT EXISTS memory_vector_staging (entry_version_id TEXT NOT NULL, chunk INTEGER NOT NULL, "
            "memory_artifact_id TEXT NOT NULL, entry_id TEXT NOT NULL, vector BLOB NOT NULL, "
            "PRIMARY KEY (entry_version_id, chunk)) STRICT"
        )

    def knn(self, conn: Conn, ask: Nearest) -> list[tuple[float, int]]:
        memory_ids, vector, k, generation = ask.memory_ids, ask.vector, ask.k, ask.generation
        scored: list[tuple[float, int]] = []
        for mid in memory_ids:
            if ask.exact:
                # The reference: sqlite-vec's exact scan of the float table.
                rows = conn.q(
                    "SELECT rowid, distance FROM memory_entry_search_vector WHERE embedding MATCH ? AND k = ? "
                    "AND memory_artifact_id = ?",
                    (_blob(vector), k, mid),
                )
                scored.extend((float(d), int(rowid)) for rowid, d in rows)
            else:
                scored.extend(self._index(conn, MemoryId(mid), generation).nearest(vector, k, self.rerank_depth))
        return scored

    def begin(self, conn: Conn, ask: Nearest) -> Callable[[], list[tuple[float, int]]] | None:
        memory_ids, vector, k, generation = ask.memory_ids, ask.vector, ask.k, ask.generation
        # Bring the indexes up to date here (SQL, this thread), then scan them on the scan thread while this
        # thread runs the FTS statement; no write can touch them before the search calls the finisher.
        indexes = [self._index(conn, MemoryId(mid), generation) for mid in memory_ids]
        if self._scan_pool is None:
            self._scan_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="memstone-vector-scan")
        depth = self.rerank_depth
        future = self._scan_pool.submit(lambda: [hit for i in indexes for hit in i.nearest(vector, k, depth)])
        return future.result

    def _index(self, conn: Conn, memory_id: MemoryId, generation: str) -> VectorIndex:
        """The in-process index of a Memory's vectors, brought up to date with the store in this transaction.

        sqlite-vec 0.1.9 scans exactly and without SIMD (about 50 ms at 100k x 384 here), so searches use a
        numpy matrix of the same float32 vectors instead (the same distances; ``VectorIndex.nearest``).
        Rows are append-only (AUTOINCREMENT rowids): new windows since the last search are read by rowid range;
        a new window of an entry retires that entry's older windows; a deactivated entry's leftover rows are
        filtered by the authoritative manifest re-check above. Backfill, migration and rebuild bump the
        vector generation, which rebuilds the index.
        """
        index = self._indexes.get(memory_id)
        if index is None or index.generation != generation:
            index = VectorIndex(generation)
            self._indexes[memory_id] = index
        head = conn.q("SELECT revision FROM artifact_heads WHERE artifact_id = ?", (memory_id,))
        revision = int(head[0][0]) if head else 0
        if index.revision != revision or index.max_rowid == 0:
            rows: list[Any]
            if index.max_rowid == 0:
                # First build: one scan of the Memory's partition (point lookups would cost ~80 us a row).
                entries = {
                    r[0]: r[1]
                    for r in conn.q(
                        "SELECT vector_rowid, entry_id FROM memory_entry_vector_metadata WHERE memory_artifact_id = ?",
                        (memory_id,),
                    )
                }
                scan = conn.q(
                    "SELECT rowid, embedding FROM memory_entry_search_vector WHERE memory_artifact_id = ?",
                    (memory_id,),
                )
                rows = sorted((r[0], entries[r[0]], r[1]) for r in scan if r[0] in entries)
            else:
                rows = conn.q(
                    "SELECT m.vector_rowid, m.entry_id, v.embedding FROM memory_entry_vector_metadata m "
                    "JOIN memory_entry_search_vector v ON v.rowid = m.vector_rowid "
                    "WHERE m.memory_artifact_id = ? AND m.vector_rowid > ? ORDER BY m.vector_rowid",
                    (memory_id, index.max_rowid),
                )
            index.add(rows)
            index.revision = revision
        return index

    def close(self) -> None:
        if self._scan_pool is not None:
            self._scan_pool.shutdown(wait=True)
            self._scan_pool = None


__all__ = ["SQLiteVectors", "VectorIndex"]
