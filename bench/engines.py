"""The engines the benchmarks run on, and each engine's raw statements (the floor memstone is compared with).

``database(server, name)`` gives a store URL per engine: SQLite (``server`` None: a file in ``workdir``),
``postgresql://…`` or ``oceanbase://…`` (a database on that server; a fresh one dropped afterwards, or, with
``keep``, one named ``name`` that a later run on the same server reuses). ``RawEngine`` runs the engine's own
full-text and nearest-neighbour statements over the store's rows on a bare connection (no store core around
them): FTS5 ``MATCH … ORDER BY rank`` and sqlite-vec's KNN on SQLite; the BM25 posting statement and pgvector's
HNSW ``ORDER BY embedding <-> q`` on PostgreSQL; ``MATCH … AGAINST`` and ``ORDER BY l2_distance(…) APPROXIMATE``
on OceanBase.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from memstone.domain.analyzer import informative_terms, query_terms, searchable_text
from memstone.domain.manifest import EMPTY_ROOT, Node, decode_node


def engine_of(url: str | None) -> str:
    if url is None or url.startswith("sqlite"):
        return "sqlite"
    if url.startswith("postgresql"):
        return "postgresql"
    if url.startswith("oceanbase"):
        return "oceanbase"
    raise SystemExit(f"unknown engine URL {url!r}: sqlite:///…, postgresql://… or oceanbase://…")


@contextlib.contextmanager
def server_for(url: str | None, start: str | None) -> Iterator[str | None]:
    """The server URL to run on: ``url``, or a test server started for the run (``start``: postgres/oceanbase)."""
    if start is None:
        yield url
        return
    from memstone.testing import servers

    cm = servers.postgres_server() if start == "postgres" else servers.seekdb_server()
    with cm as started:
        yield started


def _exists(server: str, name: str) -> bool:
    if engine_of(server) == "postgresql":
        import psycopg

        with psycopg.connect(server, autocommit=True) as conn:
            return conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone() is not None
    import pymysql

    from memstone.testing.servers import oceanbase_connect_args

    args = oceanbase_connect_args(server)
    args.pop("database", None)
    conn = pymysql.connect(autocommit=True, **args)
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT 1 FROM information_schema.schemata WHERE schema_name = %s", (name,))
            return cur.fetchone() is not None
    finally:
        conn.close()


def _create(server: str, name: str) -> str:
    from memstone.testing import servers

    if engine_of(server) == "postgresql":
        import psycopg
        from psycopg import sql

        with psycopg.connect(server, autocommit=True) as conn:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    else:
        import pymysql

        args = servers.oceanbase_connect_args(server)
        args.pop("database", None)
        conn = pymysql.connect(autocommit=True, **args)
        try:
            with conn.cursor() as cur:
                cur.execute(f"CREATE DATABASE `{name}`")
        finally:
            conn.close()
    return servers._with_database(server, name)


@contextlib.contextmanager
def server_database(server: str, name: str | None = None) -> Iterator[tuple[str, bool]]:
    """(URL of a database on ``server``, whether it existed). ``name`` None: a fresh one, dropped on exit."""
    from memstone.testing import servers

    if name is not None:
        found = _exists(server, name)
        yield (servers._with_database(server, name) if found else _create(server, name)), found
        return
    cm = servers.postgres_database(server) if engine_of(server) == "postgresql" else servers.oceanbase_database(server)
    with cm as url:
        yield url, False


def drop_database(server: str, name: str) -> None:
    """Drop a kept database (a build that did not finish)."""
    if engine_of(server) == "postgresql":
        import psycopg
        from psycopg import sql

        with psycopg.connect(server, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
        return
    import pymysql

    from memstone.testing.servers import oceanbase_connect_args

    args = oceanbase_connect_args(server)
    args.pop("database", None)
    conn = pymysql.connect(autocommit=True, **args)
    try:
        with conn.cursor() as cur:
            cur.execute(f"DROP DATABASE IF EXISTS `{name}`")
    finally:
        conn.close()


def _run(url: str, sql: str, args: Sequence[object] = ()) -> list[Any]:
    if engine_of(url) == "postgresql":
        import psycopg

        with psycopg.connect(url, autocommit=True) as conn:
            cur = conn.execute(sql, list(args))
            return cur.fetchall() if cur.description is not None else []
    import pymysql

    from memstone.testing.servers import oceanbase_connect_args

    conn = pymysql.connect(autocommit=True, **oceanbase_connect_args(url))
    try:
        with conn.cursor() as cur:
            cur.execute(sql, tuple(args))
            return list(cur.fetchall())
    finally:
        conn.close()


@contextlib.contextmanager
def bulk_vectors(url: str, dimension: int) -> Iterator[None]:
    """A bulk load's vectors indexed once at its end instead of row by row (PostgreSQL; other engines unchanged).

    pgvector inserts every row into the HNSW graph as it is written (about 200 rows/s on this machine's 2 cores);
    building the graph over the loaded rows is several times faster. The index is dropped for the load and created
    again with the store's own DDL (``schema.vector_ddl``: the same name, ``m``, ``ef_construction``), so the store
    searched afterwards has the index a row-by-row load gives, built in one pass."""
    if engine_of(url) != "postgresql":
        yield
        return
    import psycopg

    from memstone.backends.postgres import schema

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("DROP INDEX IF EXISTS idx_memory_entry_vectors_hnsw")
    yield
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SET maintenance_work_mem = '1GB'")
        for statement in schema.vector_ddl(dimension).split(";"):
            if statement.strip():
                conn.execute(statement)
        conn.execute("ANALYZE")


def mark_built(url: str, memory_id: str, stage: str = "built") -> None:
    """Record in a kept server database that a stage of its build finished (``built_memory`` reads it back):
    ``built`` (the whole build), or a stage a rerun resumes after (``loaded``: the entries, before their vectors)."""
    _run(url, f"CREATE TABLE bench_{stage} (memory_id VARCHAR(64) NOT NULL)")
    _run(url, f"INSERT INTO bench_{stage} (memory_id) VALUES (%s)", (memory_id,))


def built_memory(url: str, stage: str = "built") -> str | None:
    """The Memory a finished stage of this kept database's build wrote, or None (never built, or interrupted)."""
    try:
        rows = _run(url, f"SELECT memory_id FROM bench_{stage}")
    except Exception:  # no such table: the stage did not finish
        return None
    return str(rows[0][0]) if rows else None


def database_bytes(url: str, path: Path | None) -> int:
    """The store's size: the SQLite file (with its WAL), or the server's size of the database."""
    if path is not None:
        return sum(p.stat().st_size for p in path.parent.glob(path.name + "*"))
    if engine_of(url) == "postgresql":
        import psycopg

        with psycopg.connect(url) as conn:
            row = conn.execute("SELECT pg_database_size(current_database())").fetchone()
            assert row is not None
            return int(row[0])
    import pymysql

    from memstone.testing.servers import oceanbase_connect_args

    conn = pymysql.connect(autocommit=True, **oceanbase_connect_args(url))
    try:
        with conn.cursor() as cur:
            # OceanBase keeps no per-database file, and information_schema's data_length counts only merged data
            # (0 for a store whose rows are still in memtables): every SSTable and memtable of the database's
            # tablets (tables and indexes), on disk and in memory, before a compaction merges their row versions.
            cur.execute(
                "SELECT coalesce(sum(s.size), 0) FROM oceanbase.V$OB_SSTABLES s "
                "JOIN oceanbase.__all_tablet_to_table tt ON tt.tablet_id = s.tablet_id "
                "JOIN oceanbase.__all_table t ON t.table_id = tt.table_id "
                "JOIN oceanbase.__all_database d ON d.database_id = t.database_id WHERE d.database_name = database()"
            )
            row = cur.fetchone()
            return int(row[0]) if row else 0
    finally:
        conn.close()


def _fresh(key: str) -> str:
    """A new key of the same length and form as ``key`` (its last 12 characters replaced)."""
    import secrets

    return key[:-12] + secrets.token_hex(6).upper()


class RawRemember:
    """PostgreSQL: the rows a single-entry ``remember`` writes, inserted again by plain SQL (the write's floor).

    ``prepare(text)`` (not timed) reads the rows memstone's last write to ``source`` committed: its Revision, the
    manifest nodes that write added (``nodes``: those reachable from its root and not from its base's, found by
    key, so preparing scans no table), the entry version and its head row. The timed ``write`` inserts copies of
    them, with fresh keys, into a second Memory ``target`` (created by memstone, so its head exists) in one
    transaction on a bare connection: BEGIN, the Revision, the nodes, the version, the head's compare-and-swap,
    the head row, its postings (one statement), the full-text totals, COMMIT, all sent in one psycopg pipeline,
    one round trip. No lock, no check, no read: what is left of a write without memstone.

    The postings are those memstone would write for ``text``, a note of the same corpus that no one has written:
    copies of the write's own postings would land in the index pages that write has just read into the buffer
    pool, so on a store larger than the pool the floor would skip the page reads the write paid (issue 13, 100k).
    """

    def __init__(self, url: str, source: str, target: str) -> None:
        import psycopg

        self._conn = psycopg.connect(url, autocommit=True)
        self._read = psycopg.connect(url, autocommit=True)
        self.source, self.target = source, target
        row = self._read.execute("SELECT revision FROM artifact_heads WHERE artifact_id = %s", (target,)).fetchone()
        assert row is not None, f"no head of {target}"
        self._revision = int(row[0])
        self._statements: list[tuple[str, list[object]]] = []

    def close(self) -> None:
        self._conn.close()
        self._read.close()

    def _one(self, sql: str, args: Sequence[object]) -> dict[str, Any]:
        cur = self._read.execute(sql, list(args))
        row = cur.fetchone()
        assert row is not None and cur.description is not None, sql
        return {d.name: v for d, v in zip(cur.description, row, strict=True)}

    def _all(self, sql: str, args: Sequence[object]) -> list[dict[str, Any]]:
        cur = self._read.execute(sql, list(args))
        assert cur.description is not None
        names = [d.name for d in cur.description]
        return [dict(zip(names, r, strict=True)) for r in cur.fetchall()]

    def _types(self, table: str) -> dict[str, str]:
        rows = self._read.execute(
            "SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute "
            "WHERE attrelid = %s::regclass AND attnum > 0 AND NOT attisdropped",
            (table,),
        ).fetchall()
        return {str(n): str(t) for n, t in rows}

    @staticmethod
    def _insert(table: str, row: dict[str, Any]) -> tuple[str, list[object]]:
        cols = [c for c in row if c != "projection_id"]
        marks = ", ".join(["%s"] * len(cols))
        return f"INSERT INTO {table} ({', '.join(cols)}) VALUES ({marks})", [row[c] for c in cols]

    def _node(self, node_hash: str) -> tuple[dict[str, Any], Node]:
        from memstone.backends.sql.rows import _node_body  # stored compressed, hashed uncompressed

        row = self._one("SELECT * FROM manifest_nodes WHERE node_hash = %s", (node_hash,))
        return row, decode_node(node_hash, _node_body(row["body"]))

    def _path(self, root: str, entry_id: str) -> list[tuple[dict[str, Any], Node]]:
        """The nodes from ``root`` towards ``entry_id``'s leaf (as far as the trie goes)."""
        path: list[tuple[dict[str, Any], Node]] = []
        at: str | None = root
        while at is not None and at != EMPTY_ROOT:
            row, node = self._node(at)
            path.append((row, node))
            if node.children is None or not entry_id.startswith(node.prefix):
                break
            at = node.children.get(entry_id[len(node.prefix)] if len(entry_id) > len(node.prefix) else "")
        return path

    def new_nodes(self, root: str, base_root: str, entry_id: str) -> list[dict[str, Any]]:
        """The manifest nodes a one-entry write from ``base_root`` to ``root`` added: those reachable from
        ``root`` and not from ``base_root``. Only the nodes on the base's path to ``entry_id`` changed, so every
        other node of the base is a child of one of them, referenced by hash."""
        old = {base_root}
        for _, node in self._path(base_root, entry_id):
            old.update((node.children or {}).values())
        found: list[dict[str, Any]] = []
        todo = [root]
        while todo:
            at = todo.pop()
            if at in old:
                continue
            row, node = self._node(at)
            found.append(row)
            todo.extend((node.children or {}).values())
        return found

    def prepare(self, text: str) -> None:
        """Read the rows of the source's last write and make the statements of the next raw write, with the
        postings of ``text`` (not timed)."""
        from memstone.backends.postgres.fts import _postings

        rev = self._one(
            "SELECT r.* FROM artifact_revisions r JOIN artifact_heads h "
            "ON h.artifact_id = r.artifact_id AND h.revision = r.revision WHERE r.artifact_id = %s",
            (self.source,),
        )
        head = self._one(
            "SELECT * FROM memory_entry_heads WHERE memory_artifact_id = %s ORDER BY projection_id DESC LIMIT 1",
            (self.source,),
        )
        assert head["head_revision"] == rev["revision"], "the source's last write was not a new entry"
        base = self._one(
            "SELECT manifest_root FROM artifact_revisions WHERE artifact_id = %s AND revision = %s",
            (self.source, rev["revision"] - 1),
        )
        nodes = self.nodes = self.new_nodes(rev["manifest_root"], base["manifest_root"], str(head["entry_id"]))
        version = self._one(
            "SELECT * FROM memory_entry_versions WHERE entry_version_id = %s", (head["entry_version_id"],)
        )
        terms, tfs, length = _postings(searchable_text("", text, ""))
        postings = [{"term": t, "tf": f, "dl": length} for t, f in zip(terms, tfs, strict=True)]
        new = self._revision + 1
        entry_id, version_id = _fresh(str(head["entry_id"])), _fresh(str(head["entry_version_id"]))
        rev.update(artifact_id=self.target, revision=new)
        version.update(
            memory_artifact_id=self.target,
            entry_id=entry_id,
            entry_version_id=version_id,
            created_in_revision=new,
            previous_version_id=None,
        )
        head.update(memory_artifact_id=self.target, head_revision=new, entry_id=entry_id, entry_version_id=version_id)
        statements = [self._insert("artifact_revisions", rev)]
        statements += [self._insert("manifest_nodes", {**n, "node_hash": _fresh(str(n["node_hash"]))}) for n in nodes]
        statements.append(self._insert("memory_entry_versions", version))
        statements.append(
            (
                "UPDATE artifact_heads SET revision = %s WHERE artifact_id = %s AND revision = %s",
                [new, self.target, self._revision],
            )
        )
        statements.append(self._insert("memory_entry_heads", head))
        types = self._types("memory_entry_postings")
        assert set(types) == {"projection_id", *postings[0]}, f"the postings' columns changed: {sorted(types)}"
        cols = [c for c in types if c != "projection_id"]
        unnest = ", ".join(f"%s::{types[c]}[]" for c in cols)
        statements.append(
            (
                f"INSERT INTO memory_entry_postings (projection_id, {', '.join(cols)}) "
                f"SELECT currval(pg_get_serial_sequence('memory_entry_heads', 'projection_id')), * "
                f"FROM unnest({unnest})",
                [[p[c] for p in postings] for c in cols],
            )
        )
        statements.append(
            (
                "UPDATE memory_fts_stats SET docs = docs + 1, total_len = total_len + %s WHERE memory_artifact_id = %s",
                [length, self.target],
            )
        )
        self._statements = statements
        self._revision = new

    def write(self) -> None:
        """The timed part: the prepared statements in one transaction, one pipeline, one round trip."""
        conn = self._conn
        with conn.pipeline():
            conn.execute("BEGIN")
            for sql, args in self._statements:
                conn.execute(sql, args)
            conn.execute("COMMIT")


def _vec_text(vector: Sequence[float]) -> str:
    return "[" + ",".join(repr(float(x)) for x in vector) + "]"


class RawEngine:
    """The engine's own full-text and nearest-neighbour statements on one bare connection."""

    def __init__(self, url: str, path: Path | None, memory_id: str, dimension: int = 384) -> None:
        self.engine = engine_of(url)
        self.memory_id = memory_id
        self.dimension = dimension
        self._conn: Any
        if self.engine == "sqlite":
            import apsw

            from memstone.backends.sqlite.vectors import SQLiteVectors

            assert path is not None
            self._conn = apsw.Connection(str(path))
            SQLiteVectors().load(self._conn)
        elif self.engine == "postgresql":
            import psycopg

            self._conn = psycopg.connect(url, autocommit=True)
            # the settings memstone's search uses (ef_search 400 for k = 10: vectors.EF_SEARCH_MIN), once per session
            from memstone.backends.postgres.vectors import EF_SEARCH_MIN

            self._conn.execute(f"SET hnsw.ef_search = {EF_SEARCH_MIN}")
            self._conn.execute("SET hnsw.iterative_scan = relaxed_order")
        else:
            import pymysql

            from memstone.testing.servers import oceanbase_connect_args

            self._conn = pymysql.connect(autocommit=True, **oceanbase_connect_args(url))

        self._writer: Any = None
        self._path = path

    def close(self) -> None:
        self._conn.close()
        if self._writer is not None and self._writer is not True:
            self._writer.close()

    def write(self, text: str) -> None:
        """The engine's bare durable write: one row committed on its own (SQLite: a side file with the store's
        WAL and synchronous=FULL; a server: a scratch table ``bench_raw_write`` in the same database)."""
        if self.engine == "sqlite":
            if self._writer is None:
                import apsw

                assert self._path is not None
                self._writer = apsw.Connection(str(self._path.with_name("raw-write-" + self._path.name)))
                self._writer.execute("PRAGMA journal_mode = WAL")
                self._writer.execute("PRAGMA synchronous = FULL")
                self._writer.execute("CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, body TEXT NOT NULL)")
            self._writer.execute("INSERT INTO t (body) VALUES (?)", (text,))
            return
        if self._writer is None:
            self._writer = True
            key = "bigint GENERATED ALWAYS AS IDENTITY" if self.engine == "postgresql" else "BIGINT AUTO_INCREMENT"
            self._rows(f"CREATE TABLE IF NOT EXISTS bench_raw_write (id {key} PRIMARY KEY, body TEXT NOT NULL)", ())
        self._rows("INSERT INTO bench_raw_write (body) VALUES (%s)", (text,))

    def _rows(self, sql: str, args: Sequence[object]) -> list[Any]:
        if self.engine == "sqlite":
            return list(self._conn.execute(sql, tuple(args)).fetchall())
        if self.engine == "postgresql":
            cur = self._conn.execute(sql, list(args))
            return list(cur.fetchall()) if cur.description is not None else []
        with self._conn.cursor() as cur:
            cur.execute(sql, tuple(args))
            return list(cur.fetchall())

    def fts(self, query: str, k: int) -> list[Any]:
        # the terms memstone's search sends to the engine (stopwords dropped, ``SearchPart``): with every term the
        # raw statement did more work than memstone's (OceanBase 100k: MATCH p50 309 ms against 140 ms)
        terms = informative_terms(query_terms(query))
        if self.engine == "sqlite":
            match = " OR ".join(f'"{t}"' for t in terms)
            return self._rows(
                "SELECT rowid, rank FROM memory_entry_search_fts WHERE memory_entry_search_fts MATCH ? "
                "ORDER BY rank LIMIT ?",
                (match, k),
            )
        if self.engine == "postgresql":
            from memstone.backends.postgres.engine import PostgresConn
            from memstone.backends.postgres.fts import PostgresFullText
            from memstone.backends.sql.engine import Candidates

            ask = Candidates([self.memory_id], terms, k, ["h.memory_artifact_id IN (?)"], [self.memory_id])
            # the ranking statement alone (memstone reads the candidates' texts with it)
            return list(PostgresFullText(texts=False).head_candidates(PostgresConn(self._conn), ask))
        from memstone.backends.oceanbase.fts import match_terms

        match = " ".join(match_terms(terms))
        return self._rows(
            "SELECT projection_id, MATCH (searchable_text) AGAINST (%s) AS score FROM memory_entry_heads "
            "WHERE MATCH (searchable_text) AGAINST (%s) AND memory_artifact_id = %s ORDER BY score DESC LIMIT %s",
            (match, match, self.memory_id, k),
        )

    def knn(self, vector: Sequence[float], k: int) -> list[Any]:
        if self.engine == "sqlite":
            import numpy as np

            blob = np.asarray(vector, dtype="<f4").tobytes()
            return self._rows(
                "SELECT rowid, distance FROM memory_entry_search_vector WHERE embedding MATCH ? AND k = ?", (blob, k)
            )
        q = _vec_text(vector)
        if self.engine == "postgresql":
            return self._rows(
                "SELECT vector_rowid FROM memory_entry_vectors WHERE memory_artifact_id = ANY(%s::text[]) "
                "ORDER BY embedding <-> %s::vector LIMIT %s",
                ([self.memory_id], q, k),
            )
        col = f"embedding_d{self.dimension}"
        return self._rows(
            f"SELECT embedding_rowid FROM memory_entry_heads WHERE memory_artifact_id = %s AND {col} IS NOT NULL "
            f"ORDER BY l2_distance({col}, %s) APPROXIMATE LIMIT %s",
            (self.memory_id, q, k),
        )
