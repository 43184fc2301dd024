"""The physical floor: the same rows in plain SQLite FTS5 + an exact sqlite-vec scan, no memstone logic.

apsw + sqlite-vec (memstone's pinned versions; runs in memstone's .venv, whose packages it shares), the same
pragmas as memstone (WAL, ``synchronous=NORMAL``). One table of notes, an external-content FTS5 table kept in
sync by triggers (``unicode61 remove_diacritics 2``), and a vec0 table (float[384], cosine). Keyword queries are
the OR of the query's quoted words, ranked by bm25; vector is the exact KNN of vec0; hybrid is RRF (k = 60) over
the top 50 of each, in one SQL statement (as in ``reference/backends.md`` §2.2). Embeddings: MiniLM int8, the
same model and pipeline as memstone (``embedder.py``), computed before each write's transaction. An update is
``UPDATE`` of the row (the FTS trigger swaps the terms) and of the vector.
"""

from __future__ import annotations

import os
from importlib.metadata import version

from base import Note, SystemUnderTest, words
from embcache import BulkStage, cache_dir
from embedder import MiniLM

SCHEMA = """
CREATE TABLE IF NOT EXISTS notes (id INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE, text TEXT NOT NULL);
CREATE VIRTUAL TABLE IF NOT EXISTS notes_fts USING fts5(text, content='notes', content_rowid='id',
    tokenize='unicode61 remove_diacritics 2');
CREATE TRIGGER IF NOT EXISTS notes_ai AFTER INSERT ON notes BEGIN
    INSERT INTO notes_fts (rowid, text) VALUES (new.id, new.text);
END;
CREATE TRIGGER IF NOT EXISTS notes_au AFTER UPDATE OF text ON notes BEGIN
    INSERT INTO notes_fts (notes_fts, rowid, text) VALUES ('delete', old.id, old.text);
    INSERT INTO notes_fts (rowid, text) VALUES (new.id, new.text);
END;
CREATE VIRTUAL TABLE IF NOT EXISTS notes_vec USING vec0(embedding float[384] distance_metric=cosine);
"""

HYBRID = """
WITH f AS (SELECT rowid AS id, row_number() OVER (ORDER BY rank) AS r FROM notes_fts WHERE notes_fts MATCH ?
           ORDER BY rank LIMIT 50),
     v AS (SELECT rowid AS id, row_number() OVER (ORDER BY distance) AS r FROM notes_vec
           WHERE embedding MATCH ? AND k = 50)
SELECT n.key, n.text
FROM (SELECT id, sum(1.0 / (60 + r)) AS s FROM (SELECT * FROM f UNION ALL SELECT * FROM v) GROUP BY id) x
JOIN notes n ON n.id = x.id ORDER BY x.s DESC, x.id LIMIT ?
"""


def match_expr(query: str) -> str | None:
    terms = list(dict.fromkeys(words(query)))
    if not terms:
        return None
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)


class System(SystemUnderTest):
    name = "floor"

    def __init__(self) -> None:
        import apsw
        import numpy as np
        import sqlite_vec

        self.apsw, self.np, self.sqlite_vec = apsw, np, sqlite_vec
        self.model = MiniLM()
        self.conn = None
        if cache_dir() is not None:  # compare.py --embed-cache: bulk vectors from the cache (embcache.py)
            self.bulk_stage = BulkStage(self.model.embed)

    def modes(self) -> list[str]:
        return ["fts", "vector", "hybrid"]

    def info(self) -> dict[str, object]:
        return {"apsw": version("apsw"), "sqlite": self.apsw.sqlite_lib_version(), "sqlite-vec": version("sqlite-vec")}

    def setup(self, workdir: str, fresh: bool = True) -> None:
        self.workdir = workdir
        os.makedirs(workdir, exist_ok=True)
        conn = self.apsw.Connection(os.path.join(workdir, "floor.db"))
        conn.enable_load_extension(True)
        conn.load_extension(self.sqlite_vec.loadable_path())
        conn.enable_load_extension(False)
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute(SCHEMA)
        self.conn = conn

    def _blob(self, vec) -> bytes:
        return self.np.asarray(vec, dtype=self.np.float32).tobytes()

    def _insert(self, notes: list[Note], vecs=None) -> None:
        if vecs is None:
            vecs = self.model.embed([n.text for n in notes])  # outside the transaction
        with self.conn:
            for n, v in zip(notes, vecs, strict=True):
                self.conn.execute("INSERT INTO notes (key, text) VALUES (?, ?)", (n.key, n.text))
                rowid = self.conn.last_insert_rowid()
                self.conn.execute("INSERT INTO notes_vec (rowid, embedding) VALUES (?, ?)", (rowid, self._blob(v)))

    def write(self, notes: list[Note]) -> None:
        for n in notes:
            self._insert([n])

    def write_bulk(self, notes: list[Note]) -> None:
        for i in range(0, len(notes), 1000):
            chunk = notes[i : i + 1000]
            staged = self.bulk_stage.take([n.text for n in chunk]) if self.bulk_stage is not None else None
            self._insert(chunk, staged)

    def update(self, key: str, new_text: str) -> None:
        v = self.model.embed([new_text])[0]
        with self.conn:
            (rowid,) = self.conn.execute("SELECT id FROM notes WHERE key = ?", (key,)).fetchone()
            self.conn.execute("UPDATE notes SET text = ? WHERE id = ?", (new_text, rowid))
            self.conn.execute("UPDATE notes_vec SET embedding = ? WHERE rowid = ?", (self._blob(v), rowid))

    def search(self, query: str, k: int, mode: str) -> list[tuple[str, str]]:
        match = match_expr(query)
        if mode == "fts":
            if match is None:
                return []
            rows = self.conn.execute(
                "SELECT n.key, n.text FROM notes_fts f JOIN notes n ON n.id = f.rowid WHERE notes_fts MATCH ? "
                "ORDER BY f.rank LIMIT ?",
                (match, k),
            ).fetchall()
            return [(r[0], r[1]) for r in rows]
        qv = self._blob(self.model.embed([query])[0])
        if mode == "vector" or match is None:
            rows = self.conn.execute(
                "SELECT n.key, n.text FROM (SELECT rowid, distance FROM notes_vec WHERE embedding MATCH ? AND k = ?) v "
                "JOIN notes n ON n.id = v.rowid ORDER BY v.distance",
                (qv, k),
            ).fetchall()
            return [(r[0], r[1]) for r in rows]
        return [(r[0], r[1]) for r in self.conn.execute(HYBRID, (match, qv, k)).fetchall()]

    def size_on_disk(self) -> int:
        if self.conn is not None:
            self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return super().size_on_disk()

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None
