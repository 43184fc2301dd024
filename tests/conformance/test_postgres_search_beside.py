"""PostgreSQL runs a hybrid search's two channels at once: the HNSW statement on a second pooled connection that
imports the search transaction's exported snapshot, while the first runs the FTS statement."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

import psycopg
from test_postgres_engine import libpq_trace  # noqa: F401  (a fixture)

from memstone import EntryInput, open_service
from memstone.backends import open_store
from memstone.backends.postgres.engine import PostgresEngine


def _engine(bundle: object) -> PostgresEngine:
    engine = bundle.memory.postgres  # type: ignore[attr-defined]
    assert isinstance(engine, PostgresEngine)
    return engine


async def test_a_statement_beside_a_search_reads_the_searchs_snapshot_on_another_connection(postgres_url: str) -> None:
    """A row another session commits after the search transaction began is not seen beside it either: both read
    the one exported snapshot (so the vector windows and the manifest they are checked against agree), on two
    server processes, at the same time."""
    with psycopg.connect(postgres_url, autocommit=True) as other:
        other.execute("CREATE TABLE probe (x int)")
        other.execute("INSERT INTO probe VALUES (1)")
    bundle = await open_store(postgres_url)
    engine = _engine(bundle)

    def search_like() -> tuple[Any, Any, float, int]:
        with engine.read_txn():
            conn = engine.conn
            conn.export_snapshot()
            (mine,) = conn.q("SELECT count(*), pg_backend_pid() FROM probe")
            with psycopg.connect(postgres_url, autocommit=True) as other:
                other.execute("INSERT INTO probe VALUES (2)")  # committed after this transaction's snapshot
            t0 = time.perf_counter()
            finish = conn.beside(("SELECT count(*), pg_backend_pid() FROM probe, pg_sleep(0.6)", ()))
            assert finish is not None
            conn.q("SELECT pg_sleep(0.6)")
            (theirs,) = finish()
            both = time.perf_counter() - t0
            again = conn.q("SELECT count(*) FROM probe")[0][0]
        return mine, theirs, both, again

    try:
        mine, theirs, both, again = await asyncio.to_thread(search_like)
    finally:
        await bundle.memory.aclose()
    assert mine[0] == theirs[0] == again == 1  # the same snapshot on both connections
    assert mine[1] != theirs[1]  # two server processes
    assert both < 1.1, both  # at once: 0.6 s, not 1.2
    with psycopg.connect(postgres_url, autocommit=True) as other:
        assert other.execute("SELECT count(*) FROM probe").fetchone() == (2,)


async def test_a_statement_beside_needs_the_snapshot_exported_first(postgres_url: str) -> None:
    bundle = await open_store(postgres_url)
    engine = _engine(bundle)

    def unshared() -> object:
        with engine.read_txn():
            engine.conn.q("SELECT 1")
            return engine.conn.beside(("SELECT 1", ()))

    try:
        assert await asyncio.to_thread(unshared) is None  # the caller runs the statement itself
    finally:
        await bundle.memory.aclose()


async def test_a_hybrid_search_runs_its_hnsw_statement_beside_the_fts_one_with_the_same_hits(
    postgres_url: str,
    libpq_trace: Callable[[], str],  # noqa: F811
) -> None:
    """With a free pooled connection the HNSW statement runs on it in the search's exported snapshot (the old code
    ran it after the FTS statement, on one connection); with a pool of one it still runs after it, on the same
    connection. The hits are the same either way."""
    texts = [f"deploy step {i} runs with uv on the build host" for i in range(30)]
    texts += [f"the cache of job {i} is kept for a week" for i in range(30)]
    async with open_service(postgres_url, embedding="hashing-64") as svc:
        rev = await svc.remember(None, entries=[EntryInput(kind="fact", text=t) for t in texts])
        assert rev is not None
    read = libpq_trace
    found = {}
    for url in (postgres_url + "?pool_size=1", postgres_url):
        read()  # connections opened from here on are traced
        async with open_service(url, embedding="hashing-64") as svc:
            for _ in range(2):  # the second search finds the pool grown
                await svc.search("deploy step 3 build host", memories=[rev], mode="hybrid", limit=10)
            # A search whose second connection is not back in the pool within BESIDE_WAIT_S runs its statements
            # one after the other (same hits): on a loaded machine that happens now and then, so the pooled
            # store gets up to five searches to show one that ran beside (the old code never did).
            for _ in range(1 if url != postgres_url else 5):
                start = len(read())
                result = await svc.search("deploy step 3 build host", memories=[rev], mode="hybrid", limit=10)
                traced = read()[start:]
                if traced.count("SET TRANSACTION SNAPSHOT"):
                    break
        found[url] = [(h.entry_version_id, round(h.score, 9), h.matched_by) for h in result.hits]
        imports = traced.count("SET TRANSACTION SNAPSHOT")
        assert imports == (url == postgres_url), (url, imports)
        assert traced.count("pg_export_snapshot()") == (url == postgres_url)
    serial, beside = found.values()
    assert beside == serial and len(beside) == 10
    assert any(m == ("fts", "vector") for _, _, m in beside)
