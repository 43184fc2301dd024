"""OceanBase-only behaviour (issue 13): the RFC's DDL, the isolation contract with row locks, DDL kept out of
transactions, the FULLTEXT dialect's gaps, error translation, and vector integrity. Runs on the seekdb fixture."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import pymysql
import pytest

from memstone import EntryInput, open_service
from memstone.backends import open_store
from memstone.backends.oceanbase.connection import (
    LOCK_WAIT,
    QUERY_TIMEOUT_S,
    TRX_TIMEOUT_S,
    Connection,
    connect_args,
)
from memstone.domain.errors import BackendUnavailable, InvalidInput, NotFound
from memstone.ports import VectorStatusQuery
from memstone.testing import servers

SCOPE = "memstone://orgs/acme/projects/web"


def fact(text: str, **kw: Any) -> EntryInput:
    return EntryInput(kind=kw.pop("kind", "fact"), text=text, **kw)


@pytest.fixture
def raw(oceanbase_url: str) -> Iterator[pymysql.connections.Connection]:
    conn = pymysql.connect(autocommit=True, **servers.oceanbase_connect_args(oceanbase_url))
    try:
        yield conn
    finally:
        conn.close()


def rows(conn: pymysql.connections.Connection, sql: str, args: Any = None) -> list[Any]:
    with conn.cursor() as cur:
        cur.execute(sql, args)
        return list(cur.fetchall())


async def test_the_head_table_carries_fulltext_and_hnsw_as_the_rfc_shows(
    oceanbase_url: str, raw: pymysql.connections.Connection
) -> None:
    async with open_service(oceanbase_url, embedding="hashing-64") as svc:
        rev = await svc.remember(None, entries=[fact("postgres backups run nightly")])
        assert rev is not None
        literal = "[" + ",".join(["0.125"] * 64) + "]"
        ddl = rows(raw, "SHOW CREATE TABLE memory_entry_heads")[0][1]
        plan = "\n".join(
            r[0]
            for r in rows(
                raw,
                "EXPLAIN SELECT entry_id FROM memory_entry_heads WHERE memory_artifact_id = %s "
                "AND embedding_rowid IS NOT NULL ORDER BY l2_distance(embedding_d64, %s) APPROXIMATE LIMIT 5",
                (rev.memory_id, literal),
            )
        )
        fts_plan = "\n".join(
            r[0]
            for r in rows(
                raw, "EXPLAIN SELECT entry_id FROM memory_entry_heads WHERE MATCH (searchable_text) AGAINST ('backups')"
            )
        )
    assert "FULLTEXT KEY `ftx_memory_entry_heads_text` (`searchable_text`) WITH PARSER space" in ddl
    assert "min_token_size=1" in ddl
    assert "VECTOR KEY `vidx_memory_entry_heads_d64` (`embedding_d64`) WITH (DISTANCE=L2, TYPE=HNSW" in ddl
    assert "VECTOR INDEX" in plan.upper()
    assert "TEXT RETRIEVAL SCAN" in fts_plan.upper()
    tables = {r[0] for r in rows(raw, "SHOW TABLES")}
    # The head table holds the vectors (window 0); only windows 2.. of long entries have a table of their own.
    assert {"memory_entry_heads", "memory_entry_archive", "memory_vector_windows_d64"} <= tables
    assert rows(raw, "SELECT COUNT(*) FROM memory_entry_heads WHERE embedding_d64 IS NOT NULL") == [(1,)]
    assert rows(raw, "SELECT COUNT(*) FROM memory_vector_windows_d64") == [(0,)]
    assert not any(t.startswith("memory_entry_search") for t in tables)


def test_ddl_is_refused_inside_a_transaction(oceanbase_url: str) -> None:
    # MySQL mode commits an open transaction implicitly at DDL: the connection never lets one run there.
    conn = Connection(oceanbase_url)
    try:
        with conn.write(), pytest.raises(AssertionError, match="DDL inside a write transaction"):
            conn.ddl("CREATE TABLE never (id BIGINT PRIMARY KEY)")
        with conn.read(), pytest.raises(AssertionError, match="DDL inside a read transaction"):
            conn.ddl("CREATE TABLE never (id BIGINT PRIMARY KEY)")
        assert conn.q("SHOW TABLES LIKE 'never'") == []
    finally:
        conn.close()


def test_a_read_transaction_is_one_snapshot(oceanbase_url: str, raw: pymysql.connections.Connection) -> None:
    rows(raw, "CREATE TABLE snap (id BIGINT PRIMARY KEY, v BIGINT)")
    rows(raw, "INSERT INTO snap VALUES (1, 1)")
    conn = Connection(oceanbase_url)
    try:
        with conn.read():
            assert conn.q("SELECT v FROM snap") == [(1,)]
            rows(raw, "UPDATE snap SET v = 2")  # committed by another session meanwhile
            assert conn.q("SELECT v FROM snap") == [(1,)]
        assert conn.q("SELECT v FROM snap") == [(2,)]
    finally:
        conn.close()


async def test_a_writer_waits_only_for_the_memory_it_writes(oceanbase_url: str) -> None:
    # The isolation contract with row locks: a write locks its Memory's head row, never the store.
    async with open_service(oceanbase_url, embedding=None) as svc:
        a = await svc.remember(None, entries=[fact("memory a")])
        b = await svc.remember(None, entries=[fact("memory b")])
        assert a is not None and b is not None
        holder = pymysql.connect(**servers.oceanbase_connect_args(oceanbase_url))
        locked, released = threading.Event(), threading.Event()
        unlocked_at: list[float] = []

        def hold() -> None:
            # Another session holds Memory a's head row lock until told to let go (then 1 s more).
            with holder.cursor() as cur:
                cur.execute("BEGIN")
                cur.execute("SELECT revision FROM artifact_heads WHERE artifact_id = %s FOR UPDATE", (a.memory_id,))
                locked.set()
                released.wait(60)
                time.sleep(1.0)
                unlocked_at.append(time.monotonic())
                cur.execute("ROLLBACK")

        thread = threading.Thread(target=hold)
        thread.start()
        try:
            assert locked.wait(30)
            await svc.remember(b, entries=[fact("b is not blocked")])  # completes while a is still locked
            b_done_while_locked = not released.is_set()
            released.set()
            await svc.remember(a, entries=[fact("a waited for the lock")])
            a_done = time.monotonic()
        finally:
            released.set()
            thread.join()
            holder.close()
        assert b_done_while_locked
        assert unlocked_at and a_done >= unlocked_at[0]  # a's write queued on its head row until the lock went
        assert {e.text for e in await svc.entries(await svc.head(a.memory_id))} == {"memory a", "a waited for the lock"}
        assert (await svc.verify()).ok


async def test_terms_the_fulltext_index_cannot_hold_are_still_found(oceanbase_url: str) -> None:
    long_token = "x" * 100
    async with open_service(oceanbase_url, embedding=None) as svc:
        rev = await svc.remember(
            None,
            entries=[
                fact("the docs live on www"),  # `www`: a stopword of the SPACE parser, informative to Analyzer v1
                fact(f"the build id is {long_token}"),  # over the parser's 84-character token limit
                fact("ui uses react"),  # two letters: under the parser's default min_token_size of 3
                fact("nothing else here"),
            ],
        )
        assert rev is not None
        for query, expected in (("www", "the docs live on www"), (long_token, f"the build id is {long_token}"),
                                ("ui", "ui uses react")):  # fmt: skip
            hits = (await svc.search(query, memories=[rev], mode="fts")).hits
            assert [h.text for h in hits] == [expected], query


async def test_reads_never_create_a_store(seekdb_server_url: str) -> None:
    with servers.oceanbase_database(seekdb_server_url) as url:
        with pytest.raises(NotFound, match="no memstone store"):
            await open_store(url, create=False)
        conn = pymysql.connect(**servers.oceanbase_connect_args(url))
        try:
            assert rows(conn, "SHOW TABLES") == []
        finally:
            conn.close()
    missing = url.replace("/memstone_test_", "/memstone_missing_")
    with pytest.raises(NotFound):
        await open_store(missing, create=False)


def test_bad_urls_are_refused_with_the_form_to_write() -> None:
    with pytest.raises(InvalidInput, match="no database"):
        Connection("oceanbase://root@localhost/")
    with pytest.raises(InvalidInput, match="not an oceanbase"):
        connect_args("mysql://root@localhost/db")
    args = connect_args("oceanbase://app%40mem_tenant%23obcluster:p%40ss@obproxy.example:2883/memstone")
    assert args == {
        "user": "app@mem_tenant#obcluster",
        "password": "p@ss",
        "charset": "utf8mb4",
        "database": "memstone",
        "host": "obproxy.example",
        "port": 2883,
        "init_command": "SET SESSION ob_query_timeout = 3600000000, ob_trx_timeout = 3600000000",
    }


async def test_a_lost_connection_is_backend_unavailable_and_the_next_call_reconnects(
    oceanbase_url: str, raw: pymysql.connections.Connection
) -> None:
    async with open_service(oceanbase_url, embedding=None) as svc:
        rev = await svc.remember(None, entries=[fact("survives a reconnect")])
        assert rev is not None
        backend: Any = svc.backend
        (conn_id,) = backend.oceanbase.db.q("SELECT CONNECTION_ID()")[0]
        rows(raw, f"KILL {int(conn_id)}")
        with pytest.raises(BackendUnavailable, match="lost the connection"):
            await svc.head(rev.memory_id)
        assert (await svc.head(rev.memory_id)) == rev  # a new connection, nothing lost
        assert (await svc.verify()).ok


async def test_verify_reports_a_stale_head_vector_and_rebuild_drops_it(
    oceanbase_url: str, raw: pymysql.connections.Connection
) -> None:
    async with open_service(oceanbase_url, embedding="hashing-64") as svc:
        rev = await svc.remember(None, entries=[fact("deploy with uv"), fact("the ui uses react")])
        assert rev is not None
        assert (await svc.backend.read(VectorStatusQuery(memories=(rev.ref,))))[rev.memory_id]
        rows(raw, "UPDATE memory_entry_vector_metadata SET embedding_content_hash = REPEAT('0', 64) LIMIT 1")
        report = await svc.verify()
        assert not report.ok and not report.authority_damage
        assert any("stale, orphaned or mis-hashed" in d for d in report.projection_damage), report
        fixed = await svc.rebuild_projections()
        assert fixed.ok, fixed
        assert (await svc.search("deploy", memories=[await svc.head(rev.memory_id)], mode="fts")).hits


def _sent_statements(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every statement PyMySQL sends to the server from now on (observed at the driver edge)."""
    sent: list[str] = []
    send = pymysql.connections.Connection.query

    def query(self: pymysql.connections.Connection, sql: str, unbuffered: bool = False) -> int:
        sent.append(sql)
        return send(self, sql, unbuffered)

    monkeypatch.setattr(pymysql.connections.Connection, "query", query)
    return sent


async def test_a_stopword_scan_runs_only_when_match_left_the_depth_unfilled(
    oceanbase_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with open_service(oceanbase_url, embedding=None) as svc:
        rev = await svc.remember(None, entries=[fact(f"zebra crossing number {i} on www") for i in range(40)])
        few = await svc.remember(None, entries=[fact("zebra docs"), fact("mirror on www"), fact("a giraffe")])
        sent = _sent_statements(monkeypatch)
        # `www` is informative to Analyzer v1 but a stopword of the SPACE parser: MATCH sees `zebra` alone. 40 rows
        # match it, more than the candidate depth (32 for limit 5), each with a positive score, so no row found
        # by `www` alone could enter the top: the substring scan is not sent.
        hits = (await svc.search("zebra www", memories=[rev], mode="fts", limit=5)).hits
        assert len(hits) == 5 and all("zebra" in h.text for h in hits)
        assert not [s for s in sent if " LIKE " in s]
        # One row matches `zebra`: MATCH leaves the depth unfilled, and the scan still finds the `www` row.
        hits = (await svc.search("zebra www", memories=[few], mode="fts", limit=5)).hits
        assert [s for s in sent if " LIKE " in s]
        assert {h.text for h in hits} == {"zebra docs", "mirror on www"}


async def test_query_timeout_in_the_url_sets_every_session_of_the_store(oceanbase_url: str) -> None:
    url = oceanbase_url + ("&" if "?" in oceanbase_url else "?") + "query_timeout=90"
    conn = Connection(url)
    try:
        assert conn.q("SELECT @@ob_query_timeout") == [(90_000_000,)]
        conn.close()  # a reconnect sets it again
        assert conn.q("SELECT @@ob_query_timeout") == [(90_000_000,)]
        assert Connection(oceanbase_url).q("SELECT @@ob_query_timeout") != [(90_000_000,)]
    finally:
        conn.close()
    async with open_service(url, embedding=None) as svc:
        rev = await svc.remember(None, entries=[fact(f"bulk row {i}") for i in range(200)])
        assert rev is not None and len(await svc.entries(rev)) == 200
    for bad in ("0", "soon", "-5"):
        with pytest.raises(InvalidInput, match="query_timeout") as caught:
            connect_args(f"oceanbase://root@localhost/db?query_timeout={bad}")
        assert caught.value.hint and "?query_timeout=60" in caught.value.hint


@pytest.fixture
def lowered_server_timeouts(raw: pymysql.connections.Connection) -> Iterator[tuple[int, int]]:
    """The server's own defaults for new sessions lowered to 0.2 s per statement and 0.5 s per transaction."""
    saved = rows(raw, "SELECT @@global.ob_query_timeout, @@global.ob_trx_timeout")[0]
    low = (200_000, 500_000)
    # One statement each: seekdb's `SET GLOBAL a = 1, b = 2` leaves b's global value unchanged.
    set_global = "SET GLOBAL ob_query_timeout = %s", "SET GLOBAL ob_trx_timeout = %s"
    for sql, value in zip(set_global, low, strict=True):
        rows(raw, sql, (value,))
    try:
        yield low
    finally:
        for sql, value in zip(set_global, saved, strict=True):
            rows(raw, sql, (value,))


async def test_a_long_statement_and_a_bulk_load_outlast_the_servers_default_timeouts(
    oceanbase_url: str, lowered_server_timeouts: tuple[int, int]
) -> None:
    # A session that keeps the server's defaults (a bare connection: what the engine opened before) gives up
    # on a statement that runs past them ...
    args = servers.oceanbase_connect_args(oceanbase_url)
    args.pop("init_command", None)
    deadline = time.monotonic() + 30
    while True:  # a global variable reaches new sessions within moments
        bare = pymysql.connect(autocommit=True, **args)
        try:
            found = rows(bare, "SELECT @@ob_query_timeout, @@ob_trx_timeout")[0]
            if found == lowered_server_timeouts:
                with pytest.raises(pymysql.err.Error) as caught:
                    rows(bare, "SELECT SLEEP(1)")
                assert caught.value.args[0] in LOCK_WAIT  # 4012: the statement timed out
                break
        finally:
            bare.close()
        assert time.monotonic() < deadline, f"the lowered defaults never reached a new session: {found}"
        time.sleep(0.5)
    # ... while every session of the engine sets its own, whatever the server's defaults are.
    conn = Connection(oceanbase_url)
    try:
        assert conn.q("SELECT @@ob_query_timeout, @@ob_trx_timeout") == [
            (round(QUERY_TIMEOUT_S * 1e6), round(TRX_TIMEOUT_S * 1e6))
        ]
        assert conn.q("SELECT SLEEP(1)") == [(0,)]
    finally:
        conn.close()
    # A bulk load: one transaction of 1,000 entries runs far past 0.5 s, and its statements past 0.2 s.
    async with open_service(oceanbase_url, embedding=None) as svc:
        started = time.monotonic()
        rev = await svc.remember(None, entries=[fact(f"bulk row {i} about deploy step {i % 7}") for i in range(1000)])
        assert time.monotonic() - started > lowered_server_timeouts[1] / 1e6
        assert rev is not None and len(await svc.entries(rev)) == 1000
        hits = (await svc.search("deploy step", memories=[rev], mode="fts", limit=5)).hits
        assert len(hits) == 5
        assert (await svc.verify()).ok


async def test_a_vector_search_sends_three_statements_and_finds_what_the_exact_scan_finds(
    oceanbase_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with open_service(oceanbase_url, embedding="hashing-64") as svc:
        rev = await svc.remember(None, entries=[fact(f"note {i} about deploy step {i % 7}") for i in range(60)])
        assert rev is not None
        sent = _sent_statements(monkeypatch)
        fast = (await svc.search("deploy step 3", memories=[rev], mode="vector", limit=10)).hits
        scans = [s for s in sent if "l2_distance" in s]
        # the index of the head table and of the windows table, then both second scans (the rows written in the
        # last 30 s, or the exact scan where the index returned fewer than k) in one statement
        assert len(scans) == 3, scans
        assert "UNION ALL" in scans[2]
        exact = (await svc.search("deploy step 3", memories=[rev], mode="vector", limit=10, exact=True)).hits
        assert [h.entry_id for h in fast] == [h.entry_id for h in exact]
