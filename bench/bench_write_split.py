"""Where a ``remember`` (and, with ``--searches``, a full-text search) spends its time on a server engine:
``python bench/bench_write_split.py --url postgresql://…`` or ``--url oceanbase://…``.

On a fresh database (dropped afterwards): one Memory of ``--seed`` entries (loaded 1,000 per ``remember``), then
``--writes`` single-entry ``remember`` calls, each timed end to end and around every statement the engine sends
(PostgreSQL: ``PostgresConn._execute``, which every query, insert and deferred pipeline goes through; ``COMMIT``
and ``executemany`` are not in it. OceanBase: every statement of the engine's ``Connection``, ``BEGIN`` and
``COMMIT`` included). Prints the p50 of the wall time, of the time inside statements, of the ``COMMIT`` alone and
of the number of statements per write: what is left is the client's work (the service's Python, the hand-offs to
the engine's worker threads). ``--searches N`` then times N two-term ``mode="fts"`` searches the same way. On
OceanBase it also reads the server's own time for the same statements (``V$OB_PLAN_CACHE_PLAN_STAT``: elapsed
time summed over the database's plans, per write or search on average; ``BEGIN`` and ``COMMIT`` are not plans),
so the time inside statements splits into the server's work and the rest (round trips, waits for a core), and
``--size`` reports the database's bytes (its SSTables, and with its memtables). ``--start-postgres`` /
``--start-oceanbase`` start the test server of ``memstone.testing.servers`` instead.

On PostgreSQL a write's wall time is split further (``split``, ms per write, means): the engine's jobs on their
worker threads (``in_jobs``) and the hand-offs to them and back (``to_thread``, ``back_to_loop``: the executor's
queue and the event loop's wake-up), the waits for a pooled connection (``pool``), the network trips the engine
made (``trips``: statements or pipelines it waited for, COMMIT and ``executemany`` included) and the time in them
(``in_trips``); what is left of ``in_jobs`` is the core's Python on the worker thread, what is left of the wall
time the service's Python on the event loop. ``--keep NAME`` builds the seed Memory once in a database of that name
and reuses it (so two codes can be timed alternately on the same rows; it is not dropped).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import statistics
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import engines
from corpus import Corpus

from memstone import EntryInput, open_service

_spent = {"seconds": 0.0, "statements": 0, "commit": 0.0}
_split = {"in_jobs": 0.0, "to_thread": 0.0, "back_to_loop": 0.0, "pool": 0.0, "trips": 0, "in_trips": 0.0, "jobs": 0}


def _timed(fn: Callable[..., Any]) -> Callable[..., Any]:
    def timed(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            spent = time.perf_counter() - start
            _spent["seconds"] += spent
            _spent["statements"] += 1
            if len(args) > 1 and args[1] == "COMMIT":  # OceanBase's COMMIT waits for its redo log
                _spent["commit"] += spent

    return timed


@contextlib.contextmanager
def statements_timed(engine: str) -> Iterator[None]:
    """Time every statement the engine sends (its own entry points, patched for the run)."""
    if engine == "postgresql":
        from memstone.backends.postgres.engine import PostgresConn as cls

        names = ["_execute"]
    else:
        from memstone.backends.oceanbase.connection import Connection as cls

        names = ["_cursor_run", "many", "execute"]  # q/x/insert_id, executemany, BEGIN/COMMIT/locks: no nesting
    saved = {name: getattr(cls, name) for name in names}
    for name, fn in saved.items():
        setattr(cls, name, _timed(fn))
    try:
        yield
    finally:
        for name, fn in saved.items():
            setattr(cls, name, fn)


@contextlib.contextmanager
def postgres_split() -> Iterator[None]:
    """Time the PostgreSQL engine's jobs, their hand-offs, its pool waits and its network trips (see the module's
    docstring), by patching its entry points for the run."""
    import threading

    from psycopg_pool import ConnectionPool

    from memstone.backends.postgres.engine import PostgresConn
    from memstone.backends.sql.workers import Workers

    inside = threading.local()  # a trip inside a trip (many calls flush) is counted once

    def trip(fn: Callable[..., Any], when: Callable[..., bool] = lambda *a: True) -> Callable[..., Any]:
        def timed(*args: Any) -> Any:
            if getattr(inside, "on", False) or not when(*args):
                return fn(*args)
            inside.on, start = True, time.perf_counter()
            try:
                return fn(*args)
            finally:
                inside.on = False
                _split["in_trips"] += time.perf_counter() - start
                _split["trips"] += 1

        return timed

    def waited(fn: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                _split["pool"] += time.perf_counter() - start

        return timed

    async def run(self: Workers, fn: Callable[..., Any], *args: object) -> Any:
        marks: dict[str, float] = {}

        def job() -> Any:
            marks["start"] = time.perf_counter()
            try:
                return fn(*args)
            finally:
                marks["end"] = time.perf_counter()

        submitted = time.perf_counter()
        result = await asyncio.get_running_loop().run_in_executor(self.executor, job)
        _split["to_thread"] += marks["start"] - submitted
        _split["in_jobs"] += marks["end"] - marks["start"]
        _split["back_to_loop"] += time.perf_counter() - marks["end"]
        _split["jobs"] += 1
        return result

    saved = [
        (PostgresConn, "_execute", trip(PostgresConn._execute)),
        (PostgresConn, "many", trip(PostgresConn.many)),
        (PostgresConn, "flush", trip(PostgresConn.flush, lambda conn: bool(conn.pending))),
        (ConnectionPool, "getconn", waited(ConnectionPool.getconn)),
        (Workers, "run", run),
    ]
    originals = [(cls, name, getattr(cls, name)) for cls, name, _ in saved]
    for cls, name, fn in saved:
        setattr(cls, name, fn)
    try:
        yield
    finally:
        for cls, name, fn in originals:
            setattr(cls, name, fn)


class ServerClock:
    """OceanBase's own time for the statements of one database: the plan cache's elapsed time, summed."""

    def __init__(self, url: str) -> None:
        import pymysql

        from memstone.testing.servers import oceanbase_connect_args

        self.url = url
        self.conn = pymysql.connect(autocommit=True, **oceanbase_connect_args(url))

    def plans(self) -> dict[int, tuple[str, float, int]]:
        """Plan id → (statement, elapsed ms, executions) for the database's plans, cumulative since cached."""
        with self.conn.cursor() as cur:
            cur.execute(
                "SELECT p.plan_id, p.statement, p.elapsed_time, p.executions "
                "FROM oceanbase.V$OB_PLAN_CACHE_PLAN_STAT p "
                "JOIN oceanbase.__all_database d ON d.database_id = p.db_id WHERE d.database_name = database()"
            )
            return {int(i): (str(sql), float(us) / 1000, int(n)) for i, sql, us, n in cur.fetchall()}

    @staticmethod
    def spent(before: dict[int, tuple[str, float, int]], after: dict[int, tuple[str, float, int]]) -> list[Any]:
        """Per plan between two readings: (elapsed ms, executions, statement), the most elapsed first."""
        rows = []
        for plan, (sql, ms, n) in after.items():
            _, ms0, n0 = before.get(plan, (sql, 0.0, 0))
            if n > n0:
                rows.append((ms - ms0, n - n0, " ".join(sql.split())))
        return sorted(rows, reverse=True)

    def sstable_bytes(self) -> int:
        """The database's SSTable bytes by the server's own count (seekdb compacts on its own, every ~30 s under
        writes; an ``ALTER SYSTEM MAJOR FREEZE`` asked meanwhile started no compaction of its own)."""
        with self.conn.cursor() as cur:
            cur.execute(
                "SELECT coalesce(sum(occupy_size), 0) FROM oceanbase.DBA_OB_TABLE_SPACE_USAGE "
                "WHERE database_name = database()"
            )
            return int(cur.fetchone()[0])

    def close(self) -> None:
        self.conn.close()


async def _timed_calls(
    calls: int, call: Callable[[], Awaitable[object]], clock: ServerClock | None
) -> dict[str, object]:
    walls: list[float] = []
    inside: list[float] = []
    counts: list[int] = []
    commits: list[float] = []
    before = clock.plans() if clock else {}
    for key in _split:
        _split[key] = 0
    for _ in range(calls):
        _spent.update(seconds=0.0, statements=0, commit=0.0)
        start = time.perf_counter()
        await call()
        walls.append((time.perf_counter() - start) * 1000)
        inside.append(_spent["seconds"] * 1000)
        counts.append(int(_spent["statements"]))
        commits.append(_spent["commit"] * 1000)
    result: dict[str, object] = {
        "wall_p50_ms": round(statistics.median(walls), 2),
        "commit_p50_ms": round(statistics.median(commits), 2),
        "statements_p50_ms": round(statistics.median(inside), 2),
        "statements_per_call": statistics.median(counts),
    }
    if _split["jobs"]:
        result["split"] = {
            "wall": round(statistics.mean(walls), 2),
            **{k: round(float(v) * (1 if k in ("trips", "jobs") else 1000) / calls, 2) for k, v in _split.items()},
        }
    if clock:
        spent = clock.spent(before, clock.plans())
        result["server_mean_ms"] = round(sum(r[0] for r in spent) / calls, 2)
        result["server_statements_per_call"] = round(sum(r[1] for r in spent) / calls, 2)
        result["server_top"] = [(round(ms / n, 2), n, sql[:90]) for ms, n, sql in spent[:4]]
    return result


async def run(url: str, seed: int, writes: int, searches: int, size: bool) -> dict[str, object]:
    engine = engines.engine_of(url)
    clock = ServerClock(url) if engine == "oceanbase" else None
    corpus = Corpus(seed=seed)
    result: dict[str, object] = {}
    try:
        async with open_service(url, embedding=None) as svc:
            built = engines.built_memory(url)
            if built is None:
                rev = None
                for done in range(0, seed, 1000):
                    entries = [EntryInput(kind="fact", text=corpus.note()) for _ in range(min(1000, seed - done))]
                    rev = await svc.remember(rev.ref if rev else None, entries=entries)
                assert rev is not None
                engines.mark_built(url, rev.memory_id)
            else:  # a kept database: new texts (its seed's are stored), and a warm-up like a fresh run's first load
                corpus = Corpus(seed=time.time_ns() % 2**31)
                rev = await svc.head(built)
                for _ in range(20):
                    rev = await svc.remember(rev, entries=[EntryInput(kind="fact", text=corpus.note())])
            memory = rev

            async def write() -> None:
                nonlocal memory
                memory = await svc.remember(memory.ref, entries=[EntryInput(kind="fact", text=corpus.note())])

            async def search() -> None:
                await svc.search(corpus.query(), memories=[memory], limit=8, mode="fts")

            split = postgres_split() if engine == "postgresql" else contextlib.nullcontext()
            with statements_timed(engine), split:
                result["write"] = await _timed_calls(writes, write, clock)
                if searches:
                    result["fts"] = await _timed_calls(searches, search, clock)
        if clock and size:
            result["sstable_and_memtable_bytes"] = engines.database_bytes(url, None)
            result["sstable_bytes"] = clock.sstable_bytes()
    finally:
        if clock:
            clock.close()
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--url", help="A postgresql:// or oceanbase:// server URL: a fresh database on it, dropped afterwards."
    )
    ap.add_argument("--start-postgres", action="store_true", help="Start the embedded PostgreSQL test server.")
    ap.add_argument("--start-oceanbase", action="store_true", help="Start a private seekdb (OceanBase) server.")
    ap.add_argument("--seed", type=int, default=200, help="Entries in the Memory before the timed writes.")
    ap.add_argument("--writes", type=int, default=100)
    ap.add_argument("--searches", type=int, default=0, help="Also time this many two-term full-text searches.")
    ap.add_argument("--size", action="store_true", help="OceanBase: the database's bytes at the end.")
    ap.add_argument("--keep", metavar="NAME", help="Build the seed Memory once in database NAME and reuse it.")
    args = ap.parse_args()
    if not args.url and not args.start_postgres and not args.start_oceanbase:
        ap.error("give --url postgresql://…, --url oceanbase://…, --start-postgres or --start-oceanbase")
    start = "postgres" if args.start_postgres else "oceanbase" if args.start_oceanbase else None
    with contextlib.ExitStack() as stack:
        server = stack.enter_context(engines.server_for(args.url, start))
        assert server is not None
        url, _ = stack.enter_context(engines.server_database(server, args.keep))
        result = asyncio.run(run(url, args.seed, args.writes, args.searches, args.size))
    print(f"load {os.getloadavg()[0]:.1f}: {result}")


if __name__ == "__main__":
    main()
