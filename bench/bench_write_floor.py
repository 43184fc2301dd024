"""A ``remember`` against its floor (``engines.RawRemember``) on a kept PostgreSQL store, with each statement's
server time and block reads: ``python bench/bench_write_floor.py --url postgresql://…/DB``.

``DB`` is a database kept by ``bench/bench_write_split.py --keep DB`` (one Memory of ``--seed`` entries). After 20
warm-up writes, ``--writes`` single-entry ``remember`` calls, each followed by the floor writing the same rows
(prepared untimed), as ``bench/bench_core.py`` pairs them. Prints both p50s and, when the server has
``pg_stat_statements`` loaded (``shared_preload_libraries``; ``track_io_timing`` for the read times), every
statement of the run: calls, mean ms, blocks hit and read per call. ``--floor DIR`` takes ``engines.py`` from
another bench folder (an older floor, whose ``prepare`` took no note), to time two floors alternately.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import psycopg

_STATS = (
    "SELECT calls, mean_exec_time, shared_blks_hit, shared_blks_read, shared_blk_read_time, "
    "left(regexp_replace(query, '\\s+', ' ', 'g'), 110) FROM pg_stat_statements "
    "WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) "
    "ORDER BY total_exec_time DESC LIMIT 20"
)


async def run(url: str, writes: int, floor_dir: str | None) -> None:
    sys.path.insert(0, floor_dir or str(Path(__file__).resolve().parent))
    import engines
    from corpus import Corpus

    from memstone import EntryInput, open_service

    corpus = Corpus(seed=time.time_ns() % 2**31)
    built = engines.built_memory(url)
    assert built is not None, "build the store first: bench/bench_write_split.py --keep NAME --seed N"
    async with open_service(url, embedding=None) as svc:
        head = await svc.head(built)
        for _ in range(20):
            warm = await svc.remember(head, entries=[EntryInput(kind="fact", text=corpus.note())])
            assert warm is not None
            head = warm
        other = await svc.remember(None, entries=[EntryInput(kind="fact", text=corpus.note())])
        assert other is not None
        floor = engines.RawRemember(url, head.memory_id, other.memory_id)
        with psycopg.connect(url, autocommit=True) as stats:
            counted = stats.execute("SELECT to_regclass('pg_stat_statements')").fetchone() not in (None, (None,))
            if counted:
                stats.execute("SELECT pg_stat_statements_reset()")
            lat, raw = [], []
            for _ in range(writes):
                t = time.perf_counter()
                written = await svc.remember(head, entries=[EntryInput(kind="fact", text=corpus.note())])
                assert written is not None
                head = written
                lat.append((time.perf_counter() - t) * 1000)
                prepare: Any = floor.prepare  # an older floor's takes no note
                prepare() if floor_dir else prepare(corpus.note())
                t = time.perf_counter()
                floor.write()
                raw.append((time.perf_counter() - t) * 1000)
            floor.close()
            a, b = statistics.median(lat), statistics.median(raw)
            when = time.strftime("%H:%M:%S", time.gmtime())
            print(
                f"{when} load {os.getloadavg()[0]:.1f} floor {floor_dir or 'this'}: remember p50 {a:.2f} ms, "
                f"same rows p50 {b:.2f} ms, {a / b:.2f}x"
            )
            for calls, mean, hit, read, read_ms, sql in stats.execute(_STATS).fetchall() if counted else []:
                print(
                    f"{calls:6d} {mean:7.3f} ms  hit {hit / calls:7.1f}  read {read / calls:5.2f} "
                    f"({read_ms / calls:5.2f} ms)  {sql}"
                )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--url", required=True, help="postgresql://…/DB, a database kept by bench_write_split.py --keep")
    ap.add_argument("--writes", type=int, default=150)
    ap.add_argument("--floor", metavar="DIR", help="A bench folder whose engines.py gives the floor.")
    args = ap.parse_args()
    asyncio.run(run(args.url, args.writes, args.floor))


if __name__ == "__main__":
    main()
