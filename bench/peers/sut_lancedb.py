"""LanceDB embedded (``lancedb==0.40.0``): native FTS, a vector index, hybrid with RRF — as its docs show.

One table ``notes(key, text, vector float32[384])``. Bulk: ``create_table`` / ``add`` with all rows, then the
indexes a user creates: ``FTS()`` on ``text`` (native BM25) and, from ``VECTOR_INDEX_MIN`` rows on, an
``HnswSq(distance_type="cosine")`` vector index (below that a flat scan is exact and fast; index training needs
rows). Index builds count in the bulk load. A single write is ``tbl.add([row])`` (new rows are searched
unindexed until ``optimize()``, which ``prepare_search`` runs and times, as LanceDB says to do periodically).
An update is ``merge_insert("key").when_matched_update_all()`` (upsert). Queries: ``fts`` =
``search(q, query_type="fts")``; ``vector`` = ``search(vec).distance_type("cosine").ef(100)`` (the default ef is
low, ``reference/backends.md`` §3); ``hybrid`` = ``search(query_type="hybrid").vector(v).text(q)
.rerank(RRFReranker())``. Embeddings: MiniLM int8, the same model and pipeline as memstone (``embedder.py``).
"""

from __future__ import annotations

import os
from importlib.metadata import version

from base import Note, SystemUnderTest
from embcache import BulkStage, cache_dir
from embedder import DIM, MiniLM

VECTOR_INDEX_MIN = 5000


class System(SystemUnderTest):
    name = "lancedb"

    def __init__(self) -> None:
        import lancedb
        import pyarrow as pa
        from lancedb.rerankers import RRFReranker

        self.lancedb, self.pa = lancedb, pa
        self.reranker = RRFReranker()
        self.model = MiniLM()
        self.schema = pa.schema([("key", pa.string()), ("text", pa.string()), ("vector", pa.list_(pa.float32(), DIM))])
        self.db = None
        self.tbl = None
        self.indexed_rows = 0
        if cache_dir() is not None:  # compare.py --embed-cache: bulk vectors from the cache (embcache.py)
            self.bulk_stage = BulkStage(self.model.embed)

    def modes(self) -> list[str]:
        return ["fts", "vector", "hybrid"]

    def info(self) -> dict[str, object]:
        return {
            "lancedb": version("lancedb"),
            "pyarrow": version("pyarrow"),
            "vector_index": "HnswSq cosine, ef=100",
            "vector_index_min_rows": VECTOR_INDEX_MIN,
        }

    def setup(self, workdir: str, fresh: bool = True) -> None:
        self.workdir = workdir
        os.makedirs(workdir, exist_ok=True)
        self.db = self.lancedb.connect(os.path.join(workdir, "lance"))
        names = self.db.table_names() if hasattr(self.db, "table_names") else list(self.db.list_tables())
        if "notes" in names and not fresh:
            self.tbl = self.db.open_table("notes")
            self.indexed_rows = self.tbl.count_rows()
        else:
            self.tbl = None

    def _rows(self, notes: list[Note], bulk: bool = False) -> list[dict]:
        texts = [n.text for n in notes]
        vecs = self.bulk_stage.take(texts) if bulk and self.bulk_stage is not None else None
        if vecs is None:
            vecs = self.model.embed(texts)
        return [{"key": n.key, "text": n.text, "vector": v.tolist()} for n, v in zip(notes, vecs, strict=True)]

    def _add(self, rows: list[dict]) -> None:
        if self.tbl is None:
            self.tbl = self.db.create_table("notes", data=rows, schema=self.schema)
        else:
            self.tbl.add(rows)

    def _index(self) -> None:
        from lancedb.index import FTS, HnswSq

        self.tbl.create_index("text", config=FTS(), replace=True)
        n = self.tbl.count_rows()
        if n >= VECTOR_INDEX_MIN:
            self.tbl.create_index("vector", config=HnswSq(distance_type="cosine"), replace=True)
        self.indexed_rows = n

    def write(self, notes: list[Note]) -> None:
        for n in notes:
            self._add(self._rows([n]))
            if self.indexed_rows == 0:  # a table's first rows: a user creates the FTS index once
                self._index()

    def write_bulk(self, notes: list[Note]) -> None:
        for i in range(0, len(notes), 1000):
            self._add(self._rows(notes[i : i + 1000], bulk=True))

    def finish_bulk(self) -> None:
        if self.tbl is not None:
            self._index()

    def update(self, key: str, new_text: str) -> None:
        row = self._rows([Note(key, new_text)])
        self.tbl.merge_insert("key").when_matched_update_all().when_not_matched_insert_all().execute(row)

    def prepare_search(self) -> dict[str, float]:
        import time

        t = time.perf_counter()
        if self.tbl is not None:
            self.tbl.optimize()
            if self.indexed_rows < VECTOR_INDEX_MIN <= self.tbl.count_rows():
                self._index()
        return {"optimize_s": time.perf_counter() - t}

    def search(self, query: str, k: int, mode: str) -> list[tuple[str, str]]:
        if self.tbl is None:
            return []
        if mode == "fts":
            q = self.tbl.search(query, query_type="fts")
        else:
            vec = self.model.embed([query])[0]
            if mode == "vector":
                q = self.tbl.search(vec).distance_type("cosine").ef(100)
            else:
                q = (
                    self.tbl.search(query_type="hybrid")
                    .vector(vec)
                    .text(query)
                    .distance_type("cosine")
                    .ef(100)
                    .rerank(self.reranker)
                )
        rows = q.limit(k).to_arrow()
        return list(zip(rows.column("key").to_pylist(), rows.column("text").to_pylist(), strict=True))
