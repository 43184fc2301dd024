"""Search candidates from LanceDB's own indexes: an FTS index over the head projection's analyzer tokens and a
vector index over the store's vectors, in tables beside the log (docs/engines/lancedb.md, "Search").

The tables are projections of the replica, fed by maintenance (``feed``), append only:

``memstone_search_text``
    One row per head entry version ever fed: ``memory_id``, ``entry_id``, ``entry_version_id`` and ``tokens``
    (the row's ``searchable_text``: Analyzer v1's tokens, which LanceDB's whitespace tokenizer keeps whole; no
    lower-casing, stemming, stop words or folding). A version's tokens never change, so a row is never updated;
    a superseded version's row stays, and the replica's check drops it.
``memstone_search_vectors_N``
    One row per vector window: ``rowid`` (the replica's ``vector_rowid``, never reused within a vector
    generation), ``memory_id``, ``entry_version_id`` and ``vector``. A new vector generation (backfill, model
    migration, rebuild) feeds a new table ``N + 1``.
``memstone_search_state``
    One row: the log position the tables were fed at, and the **watermarks**: per Memory the head revision fed
    (head rows written by a later Revision are not in the text table), and the last vector rowid fed.

A search asks LanceDB for candidates among rows at or below the watermarks (LanceDB searches rows added since
its index's last build exactly, beside the index) and searches the rows above them exactly on the replica, so a
write is found the moment it commits. Every candidate is then checked and scored on the replica (``engine.py``).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from ..sql.engine import Conn
from .log import LanceLog, sql_quote

TEXT_TABLE = "memstone_search_text"
STATE_TABLE = "memstone_search_state"
VECTOR_PREFIX = "memstone_search_vectors_"
_BATCH = 5000

_TEXT_SCHEMA = pa.schema(
    [("memory_id", pa.string()), ("entry_id", pa.string()), ("entry_version_id", pa.string()), ("tokens", pa.string())]
)
_STATE_SCHEMA = pa.schema(
    [
        ("key", pa.string()),
        ("fed_seq", pa.int64()),
        ("text_marks", pa.string()),  # JSON {memory_id: head revision fed}
        ("vector_table", pa.string()),  # "" when no vectors were fed
        ("vector_mark", pa.int64()),
        ("generation", pa.string()),
    ]
)


@dataclass(frozen=True, slots=True)
class SearchState:
    """What the search tables hold: fed at ``fed_seq``; text up to ``text_marks``, vectors up to ``vector_mark``."""

    fed_seq: int
    text_marks: dict[str, int]
    vector_table: str
    vector_mark: int
    generation: str


def _preempted(exc: Exception) -> bool:
    """LanceDB refused a commit because another process committed a conflicting one first."""
    text = str(exc).lower()
    return "conflict" in text or "preempted" in text


def _unless_preempted(fn: Callable[[Any], None], table: Any) -> None:
    """Run an index build or update, skipped when a concurrent feeder preempted it: the rows it would index are
    searched exactly by LanceDB meanwhile, and the next feed updates the index."""
    try:
        fn(table)
    except Exception as exc:
        if not _preempted(exc):
            raise


def _in(column: str, values: Sequence[str]) -> str:
    return f"{column} IN ({', '.join(sql_quote(v) for v in values)})"


class LanceSearchTables:
    """The search tables of one store, in the LanceDB database of its log."""

    def __init__(self, log: LanceLog, *, vector_index_rows: int = 10_000) -> None:
        self.log = log
        self.vector_index_rows = vector_index_rows  # below this many vectors LanceDB scans them exactly
        self._state: tuple[int, SearchState | None] | None = None  # (state table version, state)
        self._tables: dict[str, Any] = {}

    # ---------------------------------------------------------------- reading
    def _open(self, name: str) -> Any:
        table = self._tables.get(name)
        if table is None:
            table = self.log.db.open_table(name)
            self._tables[name] = table
        return table

    def state(self) -> SearchState | None:
        """The state row (None: never fed, or dropped by a purge). One version listing while nothing changed."""
        try:
            table = self._open(STATE_TABLE)
            version = int(table.version)
        except Exception:
            self._tables.clear()
            self._state = None
            return None
        if self._state is not None and self._state[0] == version:
            return self._state[1]
        rows = table.to_arrow().to_pylist()
        found = None
        if rows:
            r = rows[0]
            found = SearchState(
                int(r["fed_seq"]),
                {str(k): int(v) for k, v in json.loads(r["text_marks"]).items()},
                str(r["vector_table"]),
                int(r["vector_mark"]),
                str(r["generation"]),
            )
        self._state = (version, found)
        return found

    def text_candidates(
        self, memory_ids: Sequence[str], terms: Sequence[str], limit: int
    ) -> list[tuple[str, str, str]]:
        """(memory_id, entry_id, entry_version_id) of the best ``limit`` rows matching any term, by LanceDB's BM25."""
        from lancedb.query import FullTextOperator, MatchQuery

        match: Any = MatchQuery  # a pydantic dataclass: its defaults are invisible to mypy
        query = match(" ".join(terms), "tokens", operator=FullTextOperator.OR)
        rows = (
            self._open(TEXT_TABLE)
            .search(query, query_type="fts")
            .where(_in("memory_id", memory_ids), prefilter=True)
            .select(["memory_id", "entry_id", "entry_version_id", "_score"])
            .limit(limit)
            .to_arrow()
            .to_pylist()
        )
        return [(r["memory_id"], r["entry_id"], r["entry_version_id"]) for r in rows]

    def nearest(
        self, table: str, memory_ids: Sequence[str], vector: Sequence[float], limit: int
    ) -> list[tuple[float, int, str]]:
        """(squared L2 distance, rowid, entry_version_id) of the ``limit`` nearest windows, nearest first."""
        rows = (
            self._open(table)
            .search(list(vector), vector_column_name="vector")
            .distance_type("l2")
            .ef(max(4 * limit, 1000))  # HNSW's search breadth (ignored by an exact scan): 0.92 → 0.98 same hits at 10k
            .where(_in("memory_id", memory_ids), prefilter=True)
            .select(["rowid", "entry_version_id", "_distance"])
            .limit(limit)
            .to_arrow()
            .to_pylist()
        )
        return [(float(r["_distance"]), int(r["rowid"]), str(r["entry_version_id"])) for r in rows]

    def indexes(self) -> dict[str, list[str]]:
        """The index types of each search table (``FTS``, ``IVF_HNSW_SQ``…), for tests and ``stats``."""
        out: dict[str, list[str]] = {}
        state = self.state()
        names = [TEXT_TABLE] + ([state.vector_table] if state is not None and state.vector_table else [])
        for name in names:
            try:
                out[name] = [str(i.index_type) for i in self._open(name).list_indices()]
            except Exception:
                continue
        return out

    # ---------------------------------------------------------------- feeding (maintenance)
    def feed(self, conn: Conn, fed_seq: int, generation: str, dimension: int | None) -> dict[str, int]:
        """Bring the tables up to the replica (``conn``, inside a read transaction at log position ``fed_seq``):
        append the head rows and vector windows above the watermarks, build or update the indexes, then move the
        state. The state is written last, so it never names a row the tables do not hold."""
        old = self.state()
        marks = dict(old.text_marks) if old is not None else {}
        texts: list[dict[str, str]] = []
        for mid, revision in conn.q("SELECT artifact_id, revision FROM artifact_heads ORDER BY artifact_id"):
            mark = marks.get(str(mid), 0)
            if int(revision) <= mark:
                continue
            for entry_id, version_id, tokens in conn.q(
                "SELECT entry_id, entry_version_id, searchable_text FROM memory_entry_heads "
                "WHERE memory_artifact_id = ? AND head_revision > ?",
                (mid, mark),
            ):
                texts.append({"memory_id": mid, "entry_id": entry_id, "entry_version_id": version_id, "tokens": tokens})
            marks[str(mid)] = int(revision)
        text = self._append(TEXT_TABLE, _TEXT_SCHEMA, texts)
        if texts or not text.list_indices():
            _unless_preempted(self._index_text, text)
        vector_table, vector_mark, fed_vectors = "", 0, 0
        if dimension is not None:
            vector_table, vector_mark, fed_vectors = self._feed_vectors(conn, old, generation, dimension)
        state = {
            "key": ["search"],
            "fed_seq": [fed_seq],
            "text_marks": [json.dumps(marks, sort_keys=True)],
            "vector_table": [vector_table],
            "vector_mark": [vector_mark],
            "generation": [generation],
        }
        self._write_state(pa.table(state, schema=_STATE_SCHEMA))
        if old is not None and old.vector_table and old.vector_table != vector_table:
            self._drop(old.vector_table)  # a reader still on it fails and searches the replica instead
        return {"search_text_fed": len(texts), "search_vectors_fed": fed_vectors}

    def _append(self, name: str, schema: pa.Schema, rows: list[dict[str, Any]]) -> Any:
        try:
            table = self._open(name)
        except Exception:
            table = self.log.db.create_table(name, schema=schema, exist_ok=True)
            self._tables[name] = table
        for i in range(0, len(rows), _BATCH):
            table.add(pa.Table.from_pylist(rows[i : i + _BATCH], schema=schema))
        return table

    @staticmethod
    def _index_text(table: Any) -> None:
        if not table.list_indices():
            if table.count_rows() == 0:
                return
            # Analyzer v1's tokens, kept whole: no lower-casing, stemming, stop words, folding or length cut.
            from lancedb.index import FTS

            config = FTS(
                base_tokenizer="whitespace",
                lower_case=False,
                stem=False,
                remove_stop_words=False,
                ascii_folding=False,
                max_token_length=None,
                with_position=False,
            )
            table.create_index("tokens", config=config)
        else:
            table.optimize()  # merges the rows added since the last build into the index, compacts fragments

    def _feed_vectors(
        self, conn: Conn, old: SearchState | None, generation: str, dimension: int
    ) -> tuple[str, int, int]:
        if old is not None and old.vector_table and old.generation == generation:
            name, mark = old.vector_table, old.vector_mark
        else:  # a new vector generation: rowids may have been reused, so a fresh table
            number = int(old.vector_table.rsplit("_", 1)[1]) + 1 if old is not None and old.vector_table else 1
            name, mark = f"{VECTOR_PREFIX}{number}", 0
            self._drop(name)  # a leftover of a feed that crashed before its state moved
        schema = pa.schema(
            [
                ("rowid", pa.int64()),
                ("memory_id", pa.string()),
                ("entry_version_id", pa.string()),
                ("vector", pa.list_(pa.float32(), dimension)),
            ]
        )
        rows = conn.q(
            "SELECT m.vector_rowid, m.memory_artifact_id, m.entry_version_id, v.embedding "
            "FROM memory_entry_vector_metadata m JOIN memory_entry_search_vector v ON v.rowid = m.vector_rowid "
            "WHERE m.vector_rowid > ? ORDER BY m.vector_rowid",
            (mark,),
        )
        import numpy as np

        for i in range(0, len(rows), _BATCH):
            batch = rows[i : i + _BATCH]
            flat = np.frombuffer(b"".join(bytes(r[3]) for r in batch), dtype=np.float32)
            data = pa.table(
                {
                    "rowid": [int(r[0]) for r in batch],
                    "memory_id": [r[1] for r in batch],
                    "entry_version_id": [r[2] for r in batch],
                    "vector": pa.FixedSizeListArray.from_arrays(pa.array(flat, type=pa.float32()), dimension),
                },
                schema=schema,
            )
            self._append(name, schema, []).add(data)
        table = self._append(name, schema, [])
        if rows:
            mark = int(rows[-1][0])
            _unless_preempted(self._index_vectors, table)
        return name, mark, len(rows)

    def _index_vectors(self, table: Any) -> None:
        if table.list_indices():
            table.optimize()  # the windows added since the last build join the index
        elif table.count_rows() >= self.vector_index_rows:
            from lancedb.index import HnswSq

            table.create_index("vector", config=HnswSq(distance_type="l2"))

    def _write_state(self, data: pa.Table) -> None:
        try:
            table = self._open(STATE_TABLE)
        except Exception:
            self.log.db.create_table(STATE_TABLE, data=data, exist_ok=True)
            self._tables.pop(STATE_TABLE, None)
            table = self._open(STATE_TABLE)
        for attempt in range(5):  # another feeder's state write preempted this one: the last one wins
            try:
                table.merge_insert("key").when_matched_update_all().when_not_matched_insert_all().execute(data)
                return
            except Exception as exc:
                if not _preempted(exc) or attempt == 4:
                    raise

    def _drop(self, name: str) -> None:
        self._tables.pop(name, None)
        with contextlib.suppress(Exception):  # absent already
            self.log.db.drop_table(name)

    def drop_all(self) -> None:
        """Drop every search table and the state (a purge: they may hold the purged tokens; the next feed
        rebuilds them). Searches meanwhile run on the replica."""
        names = [n for n in self.log.table_names() if n.startswith(VECTOR_PREFIX)]
        for name in (STATE_TABLE, TEXT_TABLE, *names):
            self._drop(name)
        self._state = None


__all__ = ["LanceSearchTables", "SearchState"]
