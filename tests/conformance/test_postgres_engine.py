"""What the PostgreSQL engine promises beyond the shared suite: per-Memory locks (no store-wide lock), opening a new
database from several processes at once, a read never creating a store, and the ``postgres://`` alias."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from pathlib import Path

import psycopg
import pytest

from memstone import EntryInput, open_service
from memstone.backends import open_store
from memstone.backends.postgres import schema as pg_schema
from memstone.backends.sql.core import StoreCore
from memstone.backends.sql.engine import later
from memstone.domain.errors import BackendError, NotFound, RevisionConflictError
from memstone.domain.model import EntryPatch
from memstone.embedding.hashing import HashingEmbedder


def _tables(url: str) -> list[str]:
    with psycopg.connect(url) as conn:
        rows = conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY 1").fetchall()
    return [r[0] for r in rows]


async def test_a_read_only_open_of_an_empty_database_creates_nothing(postgres_url: str) -> None:
    with pytest.raises(NotFound, match="no memstone store"):
        await open_store(postgres_url, create=False)
    assert _tables(postgres_url) == []


async def test_two_opens_of_a_new_database_at_once_both_succeed(postgres_url: str) -> None:
    first, second = (b.memory for b in await asyncio.gather(open_store(postgres_url), open_store(postgres_url)))
    try:
        assert {first.state.schema_version, second.state.schema_version} == {pg_schema.LATEST}
        migrated = sorted(first.state.applied_migrations + second.state.applied_migrations)
        assert migrated == list(range(1, pg_schema.LATEST + 1))  # exactly one migrated
    finally:
        await first.aclose()
        await second.aclose()


async def test_a_writer_of_one_memory_never_blocks_a_writer_of_another(postgres_url: str) -> None:
    async with open_service(postgres_url, embedding=None) as svc:
        a = await svc.remember(None, entries=[EntryInput(kind="fact", text="Memory A starts here.")])
        b = await svc.remember(None, entries=[EntryInput(kind="fact", text="Memory B starts here.")])
        assert a is not None and b is not None
        # Another session holds Memory A's write lock, as a commit in progress would.
        with psycopg.connect(postgres_url) as holder:
            holder.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (f"memory:{a.memory_id}",))
            blocked = asyncio.create_task(
                svc.remember(a.ref, entries=[EntryInput(kind="fact", text="A second fact for A.")])
            )
            b2 = await asyncio.wait_for(
                svc.remember(b.ref, entries=[EntryInput(kind="fact", text="A second fact for B.")]), timeout=30
            )
            assert b2 is not None and b2.revision == 2  # B committed while A's lock was held
            await asyncio.sleep(0.5)
            assert not blocked.done()  # A waits for its lock
            holder.rollback()  # releases the transaction-scoped lock
        a2 = await asyncio.wait_for(blocked, timeout=30)
        assert a2 is not None and a2.revision == 2
        assert (await svc.verify()).ok


async def test_the_postgres_scheme_is_an_alias(postgres_url: str) -> None:
    alias = "postgres://" + postgres_url.partition("://")[2]
    async with open_service(alias, embedding=None) as svc:
        rev = await svc.remember(None, entries=[EntryInput(kind="fact", text="Written through the alias.")])
        assert rev is not None
    async with open_service(postgres_url, embedding=None) as svc:
        assert (await svc.head(rev.memory_id)).revision == 1


def test_the_cli_writes_and_reads_a_postgres_store(postgres_url: str) -> None:
    from click.testing import CliRunner

    from memstone.cli.main import cli

    run = CliRunner()
    wrote = run.invoke(
        cli, ["--url", postgres_url, "remember", "--kind", "fact", "--text", "The CLI writes to PostgreSQL."]
    )
    assert wrote.exit_code == 0, wrote.stderr
    listed = run.invoke(cli, ["--url", postgres_url, "list", "--json"])
    assert listed.exit_code == 0, listed.stderr
    assert "The CLI writes to PostgreSQL." in listed.stdout


def test_a_server_that_is_down_is_named_at_once_with_the_reason() -> None:
    from click.testing import CliRunner

    from memstone.cli.main import cli

    result = CliRunner().invoke(cli, ["--url", "postgresql://memstone@127.0.0.1:1/x", "list", "--json"])
    assert result.exit_code != 0
    error = json.loads(result.stdout)["error"]
    assert error["code"] == "backend_unavailable"
    assert "cannot reach PostgreSQL at 127.0.0.1:1/x" in error["message"] and "refused" in error["message"]


def _trips(trace: str) -> list[list[str]]:
    """The statements of each network round trip in a libpq trace (a trip ends where the server is ready again)."""
    trips: list[list[str]] = [[]]
    for line in trace.splitlines():
        fields = line.split("\t")
        if len(fields) >= 3 and fields[0] == "F" and fields[2].startswith(("Parse", "Query")):
            trips[-1].append(" ".join(fields[2:]))
        elif len(fields) >= 3 and fields[0] == "B" and fields[2].startswith("ReadyForQuery"):
            trips.append([])
    return [t for t in trips if t]


@pytest.fixture
def libpq_trace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[], str]]:
    """Trace every psycopg connection opened from the first call on (libpq's own trace); yields a reader of it."""
    from psycopg.pq import Trace

    path = tmp_path / "libpq.trace"
    with path.open("w") as log:
        connect = psycopg.Connection.connect

        opened: list[psycopg.Connection[object]] = []

        def trace(conn: psycopg.Connection[object]) -> None:
            conn.pgconn.trace(log.fileno())
            conn.pgconn.set_trace_flags(Trace.SUPPRESS_TIMESTAMPS | Trace.REGRESS_MODE)

        def traced(*args: object, **kwargs: object) -> psycopg.Connection[object]:
            conn = connect(*args, **kwargs)  # type: ignore[arg-type]
            trace(conn)
            opened.append(conn)
            return conn

        def read() -> str:
            monkeypatch.setattr(psycopg.Connection, "connect", traced)
            for conn in opened:  # libpq buffers each connection's trace: untrace flushes it
                if not conn.closed:
                    conn.pgconn.untrace()
                    trace(conn)
            log.flush()
            return path.read_text()

        yield read
        monkeypatch.undo()


async def test_a_write_sends_begin_its_locks_and_its_checks_with_its_first_statement(
    postgres_url: str, libpq_trace: Callable[[], str]
) -> None:
    """BEGIN and the locks travel with the first statement, and that statement reads the migration marker, the org
    profiles, the head revision and whether the vector table exists: none of them costs a round trip of its own
    (the store has no vector table, so the old code asked for it at each head row it wrote)."""
    async with open_service(postgres_url, embedding=None) as svc:
        first = await svc.remember(None, entries=[EntryInput(kind="fact", text="The first fact of the Memory.")])
        assert first is not None
    read = libpq_trace
    read()  # connections opened from here on are traced
    async with open_service(postgres_url, embedding=None) as svc:
        start = len(read())
        second = await svc.remember(first.ref, entries=[EntryInput(kind="fact", text="A second fact, traced.")])
        assert second is not None and second.revision == 2
        traced = read()[start:]
        trips = _trips(traced)
    bookkeeping = ("BEGIN", "SELECT pg_advisory_xact_lock", "COMMIT")
    alone = [t for t in trips if all(any(b in s for b in bookkeeping) for s in t)]
    assert not [t for t in alone if not all("COMMIT" in s for s in t)], alone  # only COMMIT travels alone
    writes = [t for t in trips if any("pg_advisory_xact_lock" in s for s in t)]
    assert len(writes) == 1 and "BEGIN ISOLATION LEVEL READ COMMITTED" in writes[0][0], writes
    assert len(writes[0]) >= 3  # BEGIN, the locks, and the statement they guard: one trip
    checks = ("to_regclass", "store_meta", "FROM artifact_heads")
    first_statement = next(s for s in writes[0] if "store_meta" in s)
    assert all(c in first_statement for c in checks), writes[0]
    write = trips[trips.index(writes[0]) :]
    later = [s for t in write[1:] for s in t if any(c in s for c in checks)]
    assert not later, later


def _stored(url: str) -> tuple[int, ...]:
    """Revisions, head rows, versions, indexed head rows (their postings' length row) and the highest head."""
    with psycopg.connect(url) as conn:
        counts = conn.execute(
            "SELECT (SELECT count(*) FROM artifact_revisions), (SELECT count(*) FROM memory_entry_heads), "
            "(SELECT count(*) FROM memory_entry_versions), (SELECT count(*) FROM memory_entry_postings "
            "WHERE term = ''), (SELECT max(revision) FROM artifact_heads)"
        ).fetchone()
    assert counts is not None
    return tuple(counts)


async def _a_second_write_traced(url: str, read: Callable[[], str]) -> str:
    """libpq's trace of a process's second single-entry write, on the head its first one wrote."""
    read()  # connections opened from here on are traced
    async with open_service(url, embedding=None) as svc:
        first = await svc.remember(None, entries=[EntryInput(kind="fact", text="The first fact of the Memory.")])
        assert first is not None
        start = len(read())
        second = await svc.remember(first, entries=[EntryInput(kind="fact", text="A second fact, traced.")])
        assert second is not None and second.revision == 2
        return read()[start:]


async def test_a_write_sends_its_inserts_and_its_compare_and_swap_with_commit(
    postgres_url: str, libpq_trace: Callable[[], str]
) -> None:
    """Nothing a write inserts waits for a reply of its own, and neither does the head's compare-and-swap: the
    Revision, its manifest nodes, the entry version, the swap (a statement that fails unless it moved the head:
    ``defer_one``), the head row and its postings travel in one trip, the trip of the locks and the guard of the
    write's start, with no BEGIN and no COMMIT: the server runs a pipeline's statements up to its Sync as one
    implicit transaction and commits it there. The old code sent each in a trip of its own: 7 trips from BEGIN to
    COMMIT; then 3 (the swap's row count was read before the head row was sent); then 2 (the start read first);
    then 1 with BEGIN and COMMIT. The row writes that read no other row (the Revision, its nodes, the version, the
    swap and the head row) are one statement of data-modifying CTEs (``_folded``), whose final SELECT is the swap's
    row-count check; the postings, which read the head row, follow. (Before the nodes travelled as two array
    parameters, the head row went alone once the nodes took the statement past the 50 parameters psycopg keeps a
    statement's conversion for.)"""
    traced = await _a_second_write_traced(postgres_url, libpq_trace)
    begin = max(0, traced.rfind("\n", 0, traced.index("pg_advisory_xact_lock")))  # the write's first statement
    assert traced[begin:].count("\tReadyForQuery") == 1, _trips(traced[begin:])
    assert "BEGIN" not in traced and "COMMIT" not in traced, _trips(traced)
    write = _trips(traced[begin:])
    statements = [s.split('"')[3] for s in write[-1] if s.startswith("Parse")]
    rows = next(i for i, s in enumerate(statements) if "INSERT INTO artifact_revisions" in s)
    assert statements[rows - 1].startswith("SELECT CASE WHEN g.ok IS TRUE"), statements  # the guard, then the rows
    folded = statements[rows]
    order = [
        "INSERT INTO artifact_revisions",
        "INSERT INTO manifest_nodes",
        "INSERT INTO memory_entry_versions",
        "changed AS (UPDATE artifact_heads SET revision = $",
        " RETURNING 1)",
        " SELECT CASE WHEN count(*) = 1 THEN 1 ",
    ]
    at = [folded.find(part) for part in order]
    assert folded.startswith("WITH ") and -1 not in at and at == sorted(at), folded
    head = folded if "INSERT INTO memory_entry_heads" in folded else statements[rows + 1]  # past 50 parameters
    assert "INSERT INTO memory_entry_heads" in head and head.find("INSERT INTO memory_entry_heads") > at[-3], head
    posts = statements.index(head) + 1
    assert statements[posts].startswith("WITH h AS (SELECT projection_id FROM memory_entry_heads"), statements
    after = traced[traced.index("WITH h AS (SELECT projection_id") :]
    assert after.count("\tReadyForQuery") == 1 and after.count("\tSync") == 1  # the same trip's Sync commits


async def test_a_write_on_a_head_the_process_wrote_takes_one_round_trip(
    postgres_url: str, libpq_trace: Callable[[], str]
) -> None:
    """A single-entry write on a head this process committed (a server's steady state, and the benchmark's), with no
    model to run: one job, one trip. Its start (no migration, no org profile, the vector table as it was) is the last
    write's, sent as a guard after the locks with the duplicate check in it (``Routes.guarded_start``), then the
    Revision, its manifest nodes, the entry version, the head's compare-and-swap, the head row, its postings and
    the pipeline's Sync, which commits them (no BEGIN, no COMMIT: one implicit transaction). The base Revision is not
    read back (this process committed it). The old code took 11, then 4, then 2 (BEGIN, the locks, the duplicate
    check and the start read, answered before the rest was sent)."""
    traced = await _a_second_write_traced(postgres_url, libpq_trace)
    assert traced.count("\tReadyForQuery") == 1, _trips(traced)
    (write,) = _trips(traced)
    # The locks, the guard, one statement of the Revision, its nodes (two array parameters however many), the
    # version, the swap and the head row, then its postings: 4 statements at any size (with BEGIN and COMMIT: 6;
    # before the nodes were arrays: 7 once they passed psycopg's 50 parameters; before the fold: 10; before it 12
    # and one per node).
    assert traced.count("\tBind\t") == 4, write  # one Bind a statement, prepared or not
    assert "BEGIN" not in traced and "COMMIT" not in traced, write
    guard = next(s for s in write if "SELECT CASE WHEN g.ok IS TRUE" in s)
    assert "store_meta" in guard and "FROM memory_entry_versions WHERE memory_artifact_id" in guard, write
    assert "entry_content_hash IN" in guard and "to_regclass" in guard, guard
    assert [i for i, s in enumerate(write) if "pg_advisory_xact_lock" in s][-1] < write.index(guard)
    assert "FROM artifact_revisions" not in traced and "SELECT h.head" not in traced, write


async def test_a_write_sent_in_one_trip_is_one_transaction_at_read_committed(postgres_url: str) -> None:
    """A write whose statements all travel in its last trip is sent without BEGIN and COMMIT: the server runs them
    as one implicit transaction up to the pipeline's Sync. It is still READ COMMITTED (what the write's guard after
    its locks relies on: it reads what the lock's last holder committed) when the database's default is another
    level, and it is still all or nothing: a statement that fails rolls back the ones before it."""
    dbname = postgres_url.rsplit("/", 1)[1]
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(f"ALTER DATABASE {dbname} SET default_transaction_isolation = 'serializable'")
        conn.execute("CREATE TABLE seen (what text)")
    bundle = await open_store(postgres_url)
    try:
        store = bundle.memory
        assert isinstance(store, StoreCore)
        engine = store.engine

        def write(*statements: str) -> None:
            with engine.write_txn():
                for sql in statements:
                    later(engine.conn, sql)

        await engine.run(write, "INSERT INTO seen SELECT current_setting('transaction_isolation')")
        with pytest.raises(BackendError, match="division by zero"):
            await engine.run(write, "INSERT INTO seen VALUES ('rolled back')", "INSERT INTO seen VALUES ((1/0)::text)")
        await engine.run(write, "INSERT INTO seen VALUES ('after')")  # the connection is usable after the failure
    finally:
        await bundle.aclose()
    with psycopg.connect(postgres_url) as conn:
        seen = [row[0] for row in conn.execute("SELECT what FROM seen").fetchall()]
        assert conn.execute("SHOW transaction_isolation").fetchone() == ("serializable",)  # the database's default
    assert seen == ["read committed", "after"]


async def test_a_write_on_a_head_another_process_moved_is_a_conflict_and_stores_nothing(postgres_url: str) -> None:
    """Two processes (two stores, each its own pool and caches) write one Memory. A's write on the head it wrote
    last is sent in one trip on its last start; B moved the head meanwhile, so A's compare-and-swap finds it moved:
    RevisionConflictError, nothing of A's write stored, B's Revision the head; A then writes on B's head."""
    async with open_service(postgres_url, embedding=None) as a, open_service(postgres_url, embedding=None) as b:
        first = await a.remember(None, entries=[EntryInput(kind="fact", text="The first fact of the Memory.")])
        assert first is not None
        second = await a.remember(first, entries=[EntryInput(kind="fact", text="A second fact, from A.")])
        assert second is not None and second.revision == 2
        third = await b.remember(second, entries=[EntryInput(kind="fact", text="A third fact, from B.")])
        assert third is not None and third.revision == 3
        with pytest.raises(RevisionConflictError, match="based on revision 2") as info:
            await a.remember(second, entries=[EntryInput(kind="fact", text="A stale fact from A.")])
        assert info.value.actual == 3  # read after the swap failed: the error says where the head is
        assert (await a.head(first.memory_id)).revision == 3
        assert _stored(postgres_url) == (3, 3, 3, 3, 3)
        fourth = await a.remember(third, entries=[EntryInput(kind="fact", text="A fourth fact, from A.")])
        assert fourth is not None and fourth.revision == 4
        assert (await a.verify()).ok


async def test_a_migration_another_process_started_pauses_a_write_sent_on_its_last_start(postgres_url: str) -> None:
    """A's last write found no model migration; B starts one. A's next write, sent in one trip on that start, finds
    the marker in its guard, reads the start again and waits, as any write does while a migration holds its lease
    (the service retries StoreMigratingError), storing nothing; once B aborts the migration, it commits."""
    old, new = HashingEmbedder(dimension=32), HashingEmbedder(dimension=48)
    async with open_service(postgres_url, embedding=old) as a, open_service(postgres_url, embedding=old) as b:
        first = await a.remember(None, entries=[EntryInput(kind="fact", text="The first fact of the Memory.")])
        assert first is not None
        second = await a.remember(first, entries=[EntryInput(kind="fact", text="A second fact, from A.")])
        assert second is not None
        backend = b.backend
        assert isinstance(backend, StoreCore)
        await backend.start_migration(new.profile)
        try:
            paused = asyncio.create_task(
                a.remember(second, entries=[EntryInput(kind="fact", text="A fact written during it.")])
            )
            await asyncio.sleep(1.5)
            assert not paused.done()  # the old code's hinted start would have committed at once
            assert (await b.head(first.memory_id)).revision == 2
        finally:
            await backend.abort_migration()
        third = await asyncio.wait_for(paused, timeout=30)
        assert third is not None and third.revision == 3


async def test_a_write_whose_start_changed_reads_it_again_and_commits(
    postgres_url: str, libpq_trace: Callable[[], str]
) -> None:
    """What the guard of a write's start finds changed is read again and the write commits, once: a text whose
    version is stored but not live (it was revised), and a vector table another process created after A's last
    write. Each write: the guarded trip (one implicit transaction, rolled back at its Sync), then the start read and
    the write in two trips, between BEGIN and COMMIT."""

    def _read_again(traced: str) -> None:
        failed = traced.index("ErrorResponse")
        assert "the start state of the write changed" in traced[failed:].splitlines()[0], _trips(traced)
        guarded = traced[traced.rindex("SELECT /* locks */", 0, failed) : failed]
        assert "SELECT CASE WHEN g.ok IS TRUE" in guarded and "SELECT h.head" not in guarded, _trips(traced)
        assert "BEGIN" not in traced[:failed], _trips(traced)
        again = traced.index("BEGIN ISOLATION LEVEL READ COMMITTED", failed)
        assert traced.index("SELECT h.head", again) < traced.index('CommandComplete\t "COMMIT"', again)
        assert traced.count("ErrorResponse") == 1, _trips(traced)

    read = libpq_trace
    read()  # connections opened from here on are traced
    async with open_service(postgres_url, embedding=None) as a:
        first = await a.remember(None, entries=[EntryInput(kind="fact", text="The cache holds four hundred rows.")])
        assert first is not None
        entry = first.changes[0].entry_id
        revised = (await a.update(entry, EntryPatch(text="The cache holds five hundred rows."))).revision
        start = len(read())
        again = await a.remember(revised, entries=[EntryInput(kind="fact", text="The cache holds four hundred rows.")])
        assert again is not None and again.revision == 3 and again.changes[0].op == "add"
        traced = read()[start:]
        _read_again(traced)
        async with open_service(postgres_url, embedding=HashingEmbedder(dimension=32)) as b:
            other = await b.remember(None, entries=[EntryInput(kind="fact", text="B's Memory records a model.")])
            assert other is not None
        start = len(read())
        fourth = await a.remember(again, entries=[EntryInput(kind="fact", text="A fact after the vector table.")])
        assert fourth is not None and fourth.revision == 4
        traced = read()[start:]
        _read_again(traced)
        assert (await a.verify()).ok


async def test_a_write_that_fails_in_its_last_trip_stores_nothing(postgres_url: str) -> None:
    """The inserts of a write that nobody reads back, and the head's compare-and-swap, travel with COMMIT, so the
    database refuses an insert only there (here a trigger refuses the version): the whole write still rolls back,
    with the engine's error, and the next write succeeds."""
    async with open_service(postgres_url, embedding=None) as svc:
        first = await svc.remember(None, entries=[EntryInput(kind="fact", text="The first fact of the Memory.")])
        assert first is not None
        with psycopg.connect(postgres_url, autocommit=True) as conn:
            conn.execute(
                "CREATE FUNCTION break_write() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
                "IF NEW.text LIKE '%broken%' THEN RAISE EXCEPTION 'version refused by the test'; END IF; "
                "RETURN NEW; END $$"
            )
            conn.execute(
                "CREATE TRIGGER break_write BEFORE INSERT ON memory_entry_versions "
                "FOR EACH ROW EXECUTE FUNCTION break_write()"
            )
        with pytest.raises(BackendError, match="version refused by the test"):
            await svc.remember(first, entries=[EntryInput(kind="fact", text="A fact the database has broken.")])
        assert (await svc.head(first.memory_id)).revision == 1
        assert _stored(postgres_url) == (1, 1, 1, 1, 1)
        second = await svc.remember(first, entries=[EntryInput(kind="fact", text="A second fact, accepted.")])
        assert second is not None and second.revision == 2


async def test_a_head_moved_under_the_swap_by_a_writer_without_the_lock_is_a_conflict(postgres_url: str) -> None:
    """A writer that skipped the Memory's lock (another transaction, holding the head row) moves the head while the
    write's swap waits for that row: the swap finds the head moved (READ COMMITTED re-reads the row it waited for),
    the whole write rolls back with RevisionConflictError, as when the swap's row count was read at once, having
    stored nothing, and the next write on the moved head succeeds. (It replaces a trigger that moved the head inside
    the write's own transaction: the swap and the rows it travels with are one statement now, whose sub-statements
    run in no promised order, so a trigger of one sees the others' rows or not; another transaction's writes are
    seen as before.)"""
    async with open_service(postgres_url, embedding=None) as svc:
        first = await svc.remember(None, entries=[EntryInput(kind="fact", text="The first fact of the Memory.")])
        assert first is not None
        mem = first.memory_id
        with psycopg.connect(postgres_url) as other:
            other.execute("SELECT 1 FROM artifact_heads WHERE artifact_id = %s FOR UPDATE", (mem,))
            write = asyncio.ensure_future(
                svc.remember(first, entries=[EntryInput(kind="fact", text="A fact written as the head moves.")])
            )
            with psycopg.connect(postgres_url, autocommit=True) as watch:
                for _ in range(400):  # until the write's swap waits for the row the other writer holds
                    waiting = watch.execute(
                        "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                        "AND query LIKE '%UPDATE artifact_heads SET revision%'"
                    ).fetchone()
                    if waiting is not None and waiting[0]:
                        break
                    await asyncio.sleep(0.025)
                else:
                    raise AssertionError("the write's swap never waited for the head row")
            other.execute(
                "INSERT INTO artifact_revisions (artifact_id, revision, content, content_hash, manifest_root, "
                "entry_count, active_count, lineage, author, surface, created_at) SELECT artifact_id, 99, content, "
                "content_hash, manifest_root, entry_count, active_count, lineage, author, surface, created_at "
                "FROM artifact_revisions "
                "WHERE artifact_id = %s AND revision = 1",
                (mem,),
            )
            other.execute("UPDATE artifact_heads SET revision = 99 WHERE artifact_id = %s", (mem,))
            other.commit()
        with pytest.raises(RevisionConflictError, match="based on revision 1, head is"):
            await write
        assert (await svc.head(mem)).revision == 99
        assert _stored(postgres_url) == (2, 1, 1, 1, 99)  # the other writer's Revision; nothing of the write's
        moved = await svc.head(mem)
        second = await svc.remember(moved, entries=[EntryInput(kind="fact", text="A second fact, accepted.")])
        assert second is not None and second.revision == 100


async def test_a_bulk_write_takes_about_one_round_trip_per_entry(
    postgres_url: str, libpq_trace: Callable[[], str]
) -> None:
    read = libpq_trace
    read()  # connections opened from here on are traced
    async with open_service(postgres_url, embedding=None) as svc:
        start = len(read())
        rev = await svc.remember(
            None, entries=[EntryInput(kind="fact", text=f"Bulk fact number {i} about trips.") for i in range(60)]
        )
        assert rev is not None
        trips = _trips(read()[start:])
        # The postings of each head row travel with the next statement instead of costing two trips of their own.
        assert len(trips) < 60 + 30, len(trips)
        found = await svc.search("trips", memories=[rev.ref], mode="fts", limit=100)
        assert len(found.hits) == 60  # every row indexed, the last one's postings too (sent before COMMIT)
        assert (await svc.verify()).ok


async def test_pool_size_in_the_url_bounds_the_connections_of_a_process(postgres_url: str) -> None:
    url = postgres_url + ("&" if "?" in postgres_url else "?") + "pool_size=2"
    async with open_service(url, embedding=None) as svc:
        rev = await svc.remember(
            None, entries=[EntryInput(kind="fact", text=f"Fact {i} about pools.") for i in range(5)]
        )
        assert rev is not None
        found = await asyncio.gather(*(svc.search("pools", memories=[rev.ref], mode="fts") for _ in range(12)))
        assert all(len(r.hits) == 5 for r in found)
        with psycopg.connect(postgres_url, autocommit=True) as probe:
            row = probe.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
            ).fetchone()
        assert row is not None and 1 <= row[0] <= 2


@pytest.mark.parametrize("value", ["0", "101", "abc", "2&pool_size=3", ""])
async def test_a_bad_pool_size_is_refused_before_connecting(value: str) -> None:
    from memstone.domain.errors import InvalidInput

    with pytest.raises(InvalidInput, match="pool_size must be one whole number") as raised:
        await open_store(f"postgresql://nobody@127.0.0.1:1/none?pool_size={value}")
    assert raised.value.hint is not None and "pool_size=16" in raised.value.hint


async def test_a_vector_search_sends_its_index_settings_with_the_search(
    postgres_url: str, libpq_trace: Callable[[], str]
) -> None:
    from memstone.embedding import HashingEmbedder

    read = libpq_trace
    read()  # connections opened from here on are traced
    async with open_service(postgres_url, embedding=HashingEmbedder(dimension=16)) as svc:
        rev = await svc.remember(None, entries=[EntryInput(kind="fact", text=f"Vector fact {i}.") for i in range(5)])
        assert rev is not None
        start = len(read())
        found = await svc.search("vector fact", memories=[rev.ref], mode="vector", limit=3)
        assert len(found.hits) == 3
        trips = _trips(read()[start:])
    settings = [t for t in trips if any("hnsw.ef_search" in s for s in t)]
    assert settings and all(any("ORDER BY embedding <->" in s for s in t) for t in settings), settings


async def test_verify_names_each_kind_of_full_text_damage_and_rebuild_repairs_it(postgres_url: str) -> None:
    async with open_service(postgres_url, embedding=None) as svc:
        rev = await svc.remember(None, entries=[EntryInput(kind="fact", text=f"Deploys run at {i}.") for i in range(3)])
        assert rev is not None
        assert (await svc.verify()).ok
        with psycopg.connect(postgres_url) as conn:  # each statement leaves one count of one check at 1
            conn.execute(
                "DELETE FROM memory_entry_postings WHERE term = '' "
                "AND projection_id = (SELECT min(projection_id) FROM memory_entry_heads)"
            )
            conn.execute("INSERT INTO memory_entry_postings (projection_id, term, tf, dl) VALUES (-1, 'x', 1, 1)")
            conn.execute(
                "INSERT INTO memory_entry_archive_postings (entry_version_id, memory_artifact_id, term, tf) "
                "VALUES ('ver_gone', 'mem_gone', 'x', 1)"
            )
        report = await svc.verify()
        assert not report.ok and not report.authority_damage
        assert {
            "full-text index is missing 1 head projection row(s)",
            "full-text index has 1 posting(s) of rows not in the head projection",
            "full-text statistics disagree with the postings of 1 Memory(ies)",
            "archive full-text index has 1 posting(s) of rows not in the archive projection",
        } <= set(report.projection_damage), report.projection_damage
        assert (await svc.rebuild_projections()).ok


WEB = "memstone://orgs/acme/projects/web"


def _statement_trips(trace: str, start: int) -> list[list[str]]:
    """The statements of each round trip in a libpq trace from offset ``start`` on, prepared ones included (a Bind
    names its statement, prepared earlier in the trace); a trip that only prepares a statement (psycopg's own, once
    per statement and connection) is left out."""
    names: dict[str, str] = {}
    trips: list[list[str]] = [[]]
    for line in trace[:start].splitlines():
        fields = line.split("\t")
        if len(fields) >= 4 and fields[0] == "F" and fields[2] == "Parse":
            name, _, rest = fields[3].strip()[1:].partition('" "')
            names[name] = rest.rsplit('" ', 1)[0]
    for line in trace[start:].splitlines():
        fields = line.split("\t")
        if len(fields) < 4 or fields[0] not in ("F", "B"):
            continue
        body = fields[3].strip()
        if fields[0] == "F" and fields[2] == "Parse":
            name, _, rest = body[1:].partition('" "')
            names[name] = rest.rsplit('" ', 1)[0]
        elif fields[0] == "F" and fields[2] == "Bind":
            trips[-1].append(names[body.split('"')[3]])
        elif fields[0] == "B" and fields[2] == "ReadyForQuery":
            trips.append([])
    return [t for t in trips if t]


async def test_a_vector_search_takes_three_round_trips(postgres_url: str, libpq_trace: Callable[[], str]) -> None:
    """A vector search with its query vector (a server's steady state, and the benchmark's) is its read transaction
    alone: BEGIN, the HNSW statement with its windows' metadata and the head with the routing rows (org profiles,
    vector generation) in one trip, the hits' versions with their Memory's scope, COMMIT. The org profiles and the
    vector status check are read in that snapshot (the status cached by head revision and generation). The code
    before took 6: the org profiles in a statement of their own and the status check's transaction (2 trips) came
    first; before that 7 (the HNSW statement had a trip of its own), and 14 before that. The hits are the same,
    each still checked against the manifest."""
    read = libpq_trace
    async with open_service(postgres_url, embedding="hashing-64") as svc:
        texts = [f"deploy step {i} runs with uv on the build host" for i in range(30)]
        rev = await svc.remember(scope=WEB, entries=[EntryInput(kind="fact", text=t) for t in texts])
        assert rev is not None
        exact = await svc.search("deploy step 3", memories=[rev], mode="vector", limit=10, exact=True)
    read()  # connections opened from here on are traced
    async with open_service(postgres_url, embedding="hashing-64") as svc:
        for _ in range(2):  # warm: the Revision and the manifest nodes are cached (immutable)
            warm = await svc.search("deploy step 3", memories=[rev], mode="vector", limit=10)
        start = len(read())
        found = await svc.search("deploy step 3", memories=[rev], mode="vector", limit=10)
        traced = read()[start:]
        trips = _statement_trips(read(), start)
    assert [h.entry_version_id for h in found.hits] == [h.entry_version_id for h in warm.hits]
    assert [h.entry_id for h in found.hits][:3] == [h.entry_id for h in exact.hits][:3]
    assert all(h.scope == WEB and h.text in texts for h in found.hits) and len(found.hits) == 10
    assert len(trips) == 3, trips
    search = trips
    assert search[0][0].startswith("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"), search
    hnsw = [s for s in search[0] if "memory_entry_vectors" in s and "memory_entry_vector_metadata" in s]
    assert len(hnsw) == 1 and "FROM artifact_heads" in search[0][-1] and "store_meta" in search[0][-1], search[0]
    assert "FROM memory_entry_versions" in search[1][0] and "scope_bindings" in search[1][0], search[1]
    assert search[2] == ["COMMIT"], search[2]
    # The HNSW statement asks for 3 windows per hit (LIMIT 30 for 10: an int2 in binary), not 3 per candidate of a
    # fused search (120): it reads a quarter of the windows' metadata rows (a read each, at 100k, of pages the
    # buffer pool does not hold).
    (knn,) = [line for line in traced.splitlines() if "\tBind\t" in line and "'[" in line]
    assert knn.rstrip().endswith("2 '\\x00\\x1e' 1 0"), knn[-40:]


async def test_an_fts_search_takes_one_round_trip(postgres_url: str, libpq_trace: Callable[[], str]) -> None:
    """An FTS search of a head whose Revision the process holds is one round trip: BEGIN, the setting that keeps the
    BM25 statement's plan (``fts._GENERIC``), the head with the routing rows, the BM25 statement (which also returns
    its best candidates' texts, their version rows and their Memory's scope) and COMMIT, in one pipeline. The code
    before took 3 (the hits' versions, with the scope, were a statement and a trip of their own, and COMMIT one
    more); before that 5 (the BM25 statement, then the texts of its top rows, had a trip each). The hits are the
    same, each still checked against the manifest."""
    read = libpq_trace
    async with open_service(postgres_url, embedding=None) as svc:
        texts = [f"deploy step {i} runs with uv on the build host" for i in range(30)]
        rev = await svc.remember(scope=WEB, entries=[EntryInput(kind="fact", text=t) for t in texts])
        assert rev is not None
    read()  # connections opened from here on are traced
    async with open_service(postgres_url, embedding=None) as svc:
        for _ in range(2):  # warm: the Revision and the manifest nodes are cached (immutable)
            warm = await svc.search("deploy step 3 build host", memories=[rev], mode="fts", limit=10)
        start = len(read())
        found = await svc.search("deploy step 3 build host", memories=[rev], mode="fts", limit=10)
        trips = _statement_trips(read(), start)
        start = len(read())
        by_id = await svc.search("deploy step 3 build host", memories=[rev.memory_id], mode="fts", limit=10)
        # By id the search's own read takes the head (the newest Revision of it the process has read): one trip.
        # The code before read the head first, a read of its own (2 trips more).
        by_id_trips = _statement_trips(read(), start)
        start = len(read())
        by_scope = await svc.search("deploy step 3 build host", scopes=[WEB], mode="fts", limit=10)
        # By scope: the binding's read (2 trips), then the search's one; the code before read the head too (2 more).
        *binding, by_scope_search = _statement_trips(read(), start)
    assert len(by_id_trips) == 1 and len(by_id_trips[0]) == 5 and by_id_trips[0][-1] == "COMMIT", by_id_trips
    assert len(binding) == 2 and "scope_bindings" in binding[0][1], binding
    assert by_scope_search == by_id_trips[0], [by_scope_search, by_id_trips]
    assert [(h.entry_version_id, h.score) for h in by_scope.hits] == [(h.entry_version_id, h.score) for h in warm.hits]
    assert [(h.entry_version_id, h.score) for h in found.hits] == [(h.entry_version_id, h.score) for h in warm.hits]
    assert [(h.entry_version_id, h.score) for h in by_id.hits] == [(h.entry_version_id, h.score) for h in warm.hits]
    assert found.hits[0].text == texts[3] and all(h.scope == WEB for h in found.hits) and len(found.hits) == 10
    assert len(trips) == 1, trips
    (trip,) = trips
    assert trip[0].startswith("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY") and trip[-1] == "COMMIT", trip
    assert trip[1] == "SET LOCAL plan_cache_mode = force_generic_plan", trip
    assert "FROM artifact_heads" in trip[2] and "memory_entry_postings" in trip[3] and len(trip) == 5, trip
    assert "h.searchable_text" in trip[3] and "FROM memory_entry_versions" in trip[3], trip
    assert "scope_bindings" in trip[3], trip


async def test_a_one_trip_search_that_needs_more_runs_again_in_one_snapshot(
    postgres_url: str, libpq_trace: Callable[[], str]
) -> None:
    """A process that holds the head's Revision but none of its manifest nodes (it read the head alone) tries the
    one-trip search; the hits' check then needs the nodes, a statement after that trip's COMMIT: nothing it read is
    used, and the search runs again in a transaction that stays open until it is done (the nodes read there). Its
    hits are those of a warm search, and the next search is one trip again."""
    read = libpq_trace
    async with open_service(postgres_url, embedding=None) as svc:
        texts = [f"release note {i} names the build host and its owner" for i in range(60)]
        rev = await svc.remember(scope=WEB, entries=[EntryInput(kind="fact", text=t) for t in texts])
        assert rev is not None
        warm = await svc.search("release note 7 build host", memories=[rev], mode="fts", limit=10)
    read()  # connections opened from here on are traced
    async with open_service(postgres_url, embedding=None) as svc:
        head = await svc.head(rev.memory_id)
        start = len(read())
        cold = await svc.search("release note 7 build host", memories=[head], mode="fts", limit=10)
        first = _statement_trips(read(), start)
        start = len(read())
        again = await svc.search("release note 7 build host", memories=[head], mode="fts", limit=10)
        second = _statement_trips(read(), start)
    expected = [(h.entry_version_id, h.score, h.text, h.scope) for h in warm.hits]
    assert [(h.entry_version_id, h.score, h.text, h.scope) for h in cold.hits] == expected
    assert [(h.entry_version_id, h.score, h.text, h.scope) for h in again.hits] == expected
    assert first[0][0].startswith("BEGIN") and first[0][-1] == "COMMIT" and len(first[0]) == 5, first[0]
    assert first[1][0].startswith("BEGIN") and "COMMIT" not in first[1], first  # the read again, left open
    assert any("manifest_nodes" in s for t in first[2:-1] for s in t) and first[-1] == ["COMMIT"], first
    assert len(second) == 1, second


async def test_an_fts_page_whose_hit_fails_its_check_is_filled_by_the_next_candidate(
    postgres_url: str, libpq_trace: Callable[[], str]
) -> None:
    """A lexical-only search's BM25 statement reads ahead the version rows of the candidates that can reach its page
    alone (the best ``limit`` of those holding as many of the query's terms: here every one holds both). When a hit
    of the page fails its check against the manifest (a version row edited by hand), the page is filled by the next
    candidate, whose version row the statement did not read: it is read then, in the search's snapshot (the one-trip
    search runs again), and the hit is the one a deeper page had second."""
    read = libpq_trace
    async with open_service(postgres_url, embedding=None) as svc:
        texts = [" ".join(["alpha beta", *(f"x{j}" for j in range(i))]) for i in range(1, 13)]
        rev = await svc.remember(entries=[EntryInput(kind="fact", text=t) for t in texts])
        assert rev is not None
        deeper = await svc.search("alpha beta", memories=[rev], mode="fts", limit=3)
        assert [h.text for h in deeper.hits] == texts[:3]  # the shortest rows rank first
        with psycopg.connect(postgres_url, autocommit=True) as conn:
            conn.execute("ALTER TABLE memory_entry_versions DISABLE TRIGGER USER")
            conn.execute(
                "UPDATE memory_entry_versions SET text = 'tampered' WHERE entry_version_id = %s",
                (deeper.hits[0].entry_version_id,),
            )
            conn.execute("ALTER TABLE memory_entry_versions ENABLE TRIGGER USER")
    read()  # connections opened from here on are traced
    async with open_service(postgres_url, embedding=None) as svc:
        warm = await svc.search("alpha beta", memories=[rev], mode="fts", limit=12)  # the Revision and nodes held
        assert [h.text for h in warm.hits] == texts[1:]
        start = len(read())
        page = await svc.search("alpha beta", memories=[rev], mode="fts", limit=1)
        trips = _statement_trips(read(), start)
    assert [(h.entry_version_id, h.text, h.score) for h in page.hits] == [
        (deeper.hits[1].entry_version_id, texts[1], deeper.hits[1].score)
    ]
    # its version was not among those read ahead: a statement of its own, after the BM25 statement
    assert any("FROM memory_entry_versions WHERE" in s for t in trips[1:] for s in t), trips
