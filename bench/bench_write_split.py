"""Where a PostgreSQL ``remember`` spends its time: ``python bench/bench_write_split.py --url postgresql://…``.

On a fresh database (dropped afterwards): one Memory of ``--seed`` entries, then ``--writes`` single-entry
``remember`` calls, each timed end to end and around every statement the engine sends (``PostgresConn._execute``,
which every query, insert and deferred pipeline goes through; ``COMMIT`` and ``executemany`` are not in it). Prints
the p50 of the wall time, of the time inside statements and of the number of statements per write: what is left
is the client's work (the service's Python, the hand-offs to the engine's worker threads). ``--start-postgres``
starts the test server of ``memstone.testing.servers`` instead.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import engines

from memstone import EntryInput, open_service
from memstone.backends.postgres import engine as pg_engine

_spent = {"seconds": 0.0, "statements": 0}
_execute = pg_engine.PostgresConn._execute


def _timed(self: pg_engine.PostgresConn, sql: str, args: Sequence[object]) -> Any:
    start = time.perf_counter()
    try:
        return _execute(self, sql, args)
    finally:
        _spent["seconds"] += time.perf_counter() - start
        _spent["statements"] += 1


async def run(url: str, seed: int, writes: int) -> dict[str, float]:
    pg_engine.PostgresConn._execute = _timed  # type: ignore[method-assign]
    walls: list[float] = []
    inside: list[float] = []
    counts: list[int] = []
    async with open_service(url, embedding=None) as svc:
        rev = await svc.remember(
            None, entries=[EntryInput(kind="fact", text=f"Seed fact {i} about harbours.") for i in range(seed)]
        )
        assert rev is not None
        for i in range(writes):
            _spent.update(seconds=0.0, statements=0)
            start = time.perf_counter()
            text = f"Write {i} about crane {i} lifting steel."
            rev = await svc.remember(rev.ref, entries=[EntryInput(kind="fact", text=text)])
            assert rev is not None
            walls.append((time.perf_counter() - start) * 1000)
            inside.append(float(_spent["seconds"]) * 1000)
            counts.append(int(_spent["statements"]))
    return {
        "wall_p50_ms": round(statistics.median(walls), 2),
        "statements_p50_ms": round(statistics.median(inside), 2),
        "statements_per_write": statistics.median(counts),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--url", help="A postgresql:// server URL: a fresh database on it, dropped afterwards.")
    ap.add_argument("--start-postgres", action="store_true", help="Start the embedded PostgreSQL test server.")
    ap.add_argument("--seed", type=int, default=200, help="Entries in the Memory before the timed writes.")
    ap.add_argument("--writes", type=int, default=100)
    args = ap.parse_args()
    if not args.url and not args.start_postgres:
        ap.error("give --url postgresql://… or --start-postgres")
    with contextlib.ExitStack() as stack:
        server = stack.enter_context(engines.server_for(args.url, "postgres" if args.start_postgres else None))
        assert server is not None
        url, _ = stack.enter_context(engines.server_database(server))
        result = asyncio.run(run(url, args.seed, args.writes))
    print(f"load {os.getloadavg()[0]:.1f}: {result}")


if __name__ == "__main__":
    main()
