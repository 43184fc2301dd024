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
            rev = None
            for done in range(0, seed, 1000):
                entries = [EntryInput(kind="fact", text=corpus.note()) for _ in range(min(1000, seed - done))]
                rev = await svc.remember(rev.ref if rev else None, entries=entries)
            assert rev is not None
            memory = rev

            async def write() -> None:
                nonlocal memory
                memory = await svc.remember(memory.ref, entries=[EntryInput(kind="fact", text=corpus.note())])

            async def search() -> None:
                await svc.search(corpus.query(), memories=[memory], limit=8, mode="fts")

            with statements_timed(engine):
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
    args = ap.parse_args()
    if not args.url and not args.start_postgres and not args.start_oceanbase:
        ap.error("give --url postgresql://…, --url oceanbase://…, --start-postgres or --start-oceanbase")
    start = "postgres" if args.start_postgres else "oceanbase" if args.start_oceanbase else None
    with contextlib.ExitStack() as stack:
        server = stack.enter_context(engines.server_for(args.url, start))
        assert server is not None
        url, _ = stack.enter_context(engines.server_database(server))
        result = asyncio.run(run(url, args.seed, args.writes, args.searches, args.size))
    print(f"load {os.getloadavg()[0]:.1f}: {result}")


if __name__ == "__main__":
    main()
