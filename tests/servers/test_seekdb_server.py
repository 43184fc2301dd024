"""The seekdb (OceanBase 4.3.5 kernel) test server does what the OceanBase engine needs (issue 13)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pymysql
import pytest

from memstone.testing import servers

DIM = 384


@pytest.fixture
def conn(oceanbase_url: str) -> Iterator[pymysql.connections.Connection]:
    connection = pymysql.connect(autocommit=True, **servers.oceanbase_connect_args(oceanbase_url))
    try:
        yield connection
    finally:
        connection.close()


def structured_vectors(n: int, seed: int = 11) -> np.ndarray:
    """Unit vectors near a rank-32 subspace (like text embeddings; iid random vectors defeat any ANN index)."""
    rng = np.random.default_rng(seed)
    latent = rng.standard_normal((n, 32)) @ rng.standard_normal((32, DIM))
    vectors = latent + 0.1 * rng.standard_normal((n, DIM)) * np.abs(latent).mean()
    return (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)


def literal(vector: np.ndarray) -> str:
    return "[" + ",".join(f"{x:.6f}" for x in vector) + "]"


def test_the_url_names_a_fresh_empty_database(oceanbase_url: str, conn: pymysql.connections.Connection) -> None:
    with conn.cursor() as cur:
        cur.execute("SELECT database(), version()")
        name, version = cur.fetchone()
        cur.execute("SHOW TABLES")
        tables = cur.fetchall()
    assert name.startswith("memstone_test_") and name in oceanbase_url
    assert "OceanBase" in version
    assert tables == ()


def test_hnsw_vector_index_knn_agrees_with_exact_search(conn: pymysql.connections.Connection) -> None:
    vectors = structured_vectors(300)
    with conn.cursor() as cur:
        cur.execute(
            f"CREATE TABLE item (id bigint PRIMARY KEY, embedding VECTOR({DIM}) NOT NULL,"
            " VECTOR INDEX item_hnsw (embedding) WITH (distance=cosine, type=hnsw, lib=vsag)) ORGANIZATION = HEAP"
        )
        cur.executemany("INSERT INTO item VALUES (%s, %s)", [(i, literal(v)) for i, v in enumerate(vectors)])
        knn = f"SELECT id FROM item ORDER BY cosine_distance(embedding, '{literal(vectors[42])}') APPROXIMATE LIMIT 10"
        cur.execute("EXPLAIN " + knn)
        plan = "\n".join(str(row[0]) for row in cur.fetchall())
        cur.execute(knn.replace(" APPROXIMATE", ""))
        exact = [row[0] for row in cur.fetchall()]  # exact search sees committed rows at once
        # The HNSW index is fed asynchronously from the redo log: right after a write, APPROXIMATE can return fewer
        # rows (0 here, 0.7 s later all 10) and miss the newest ones. The engine must not rely on it for
        # read-your-writes.
        ann: list[int] = []
        deadline = time.monotonic() + 30
        while len(ann) < 10 and time.monotonic() < deadline:
            cur.execute(knn)
            ann = [row[0] for row in cur.fetchall()]
            time.sleep(0.1)
    assert "VECTOR INDEX" in plan.upper()
    assert exact == list(np.argsort(-(vectors @ vectors[42]), kind="stable")[:10])
    assert ann[0] == 42
    assert len(set(ann) & set(exact)) >= 9


def test_fulltext_index_with_the_space_parser_matches_whole_tokens(conn: pymysql.connections.Connection) -> None:
    docs = ["alpha beta gamma", "beta delta", "alphabet soup", "café naïve tokens", "gamma ray"]
    with conn.cursor() as cur:
        cur.execute(
            "CREATE TABLE doc (id bigint PRIMARY KEY, body text NOT NULL,"
            " FULLTEXT INDEX doc_ft (body) WITH PARSER space) ORGANIZATION = HEAP"
        )
        cur.executemany("INSERT INTO doc VALUES (%s, %s)", list(enumerate(docs)))
        cur.execute("SELECT id FROM doc WHERE MATCH (body) AGAINST ('alpha') ORDER BY id")
        alpha = cur.fetchall()
        cur.execute("SELECT id FROM doc WHERE MATCH (body) AGAINST ('beta gamma') ORDER BY id")
        either = cur.fetchall()
        cur.execute("SELECT id FROM doc WHERE MATCH (body) AGAINST ('naïve') ORDER BY id")
        non_ascii = cur.fetchall()
        cur.execute("EXPLAIN SELECT id FROM doc WHERE MATCH (body) AGAINST ('alpha')")
        plan = "\n".join(str(row[0]) for row in cur.fetchall())
    assert alpha == ((0,),)  # whole tokens: "alphabet" does not match "alpha"
    assert either == ((0,), (1,), (4,))
    assert non_ascii == ((3,),)
    assert "doc_ft" in plan


def test_ddl_inside_a_transaction_commits_it_implicitly(conn: pymysql.connections.Connection) -> None:
    """As in MySQL: DDL ends the open transaction with a COMMIT, so DDL must stay off the engine's write paths."""
    with conn.cursor() as cur:
        cur.execute("CREATE TABLE t (id int PRIMARY KEY)")
        conn.autocommit(False)
        conn.begin()
        cur.execute("INSERT INTO t VALUES (1)")
        cur.execute("CREATE TABLE u (id int PRIMARY KEY)")  # commits the open transaction, then runs
        cur.execute("INSERT INTO t VALUES (2)")
        conn.rollback()
        conn.autocommit(True)
        cur.execute("SELECT id FROM t ORDER BY id")
        kept = cur.fetchall()
        cur.execute("SHOW TABLES")
        tables = {row[0] for row in cur.fetchall()}
    assert kept == ((1,),)  # row 1 was committed by the DDL; row 2 (after it) was rolled back
    assert tables == {"t", "u"}


def test_a_stopped_server_leaves_no_process_and_no_folder(servers_required: bool) -> None:
    before = set(Path("/tmp").glob("memstone-seekdb-*"))
    try:
        with servers.seekdb_server() as url:
            conn = pymysql.connect(**servers.oceanbase_connect_args(url))
            conn.close()
            (folder,) = set(Path("/tmp").glob("memstone-seekdb-*")) - before
            pid = int((folder / "db" / "run" / "seekdb.pid").read_text())
            assert _alive(pid)
    except servers.ServerUnavailable as exc:
        if servers_required:
            raise
        pytest.skip(str(exc))
    assert not folder.exists()
    assert not _alive(pid)


def _alive(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False
    return "State:\tZ" not in status
