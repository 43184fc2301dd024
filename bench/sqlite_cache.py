"""SQLite's page cache and a search (issue 15): pages read from the OS and p50 per mode, per ``cache_mib``.

    nice .venv/bin/python bench/sqlite_cache.py [--store bench/.cache/speed-minilm-l6-int8-100000-….db]
        [--cache-mib 2,64] [--rounds 3] [--json out.json]

The store is a speed store ``bench_retrieval.py --parts speed`` built and kept in ``bench/.cache`` (its ``.json``
beside it names the Memory); a MiniLM store is searched in ``fts``, ``vector`` and ``hybrid`` with the real
model (in that order, as ``bench_retrieval.py`` does), a no-model store in ``fts``. For each ``cache_mib`` (the
store URL option; 2 is SQLite's own default size) and mode: one warm pass over the 200 speed queries, then a
counted pass: the connection's page-cache misses per search (``SQLITE_DBSTATUS_CACHE_MISS``: pages read from the
OS, deterministic for a store and a query list) and the wall / CPU p50. The settings alternate in each round, so
they meet the same load; the load average is printed with every round.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import apsw

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_retrieval import real_model, speed_queries

import memstone
from memstone.backends.sqlite import SQLiteMemoryBackend

CACHE = Path(__file__).resolve().parent / ".cache"


def default_store() -> Path:
    stores = sorted(CACHE.glob("speed-minilm-l6-int8-100000-*.db"), key=lambda p: p.stat().st_mtime)
    if not stores:
        raise SystemExit("no kept 100k speed store: run bench/bench_retrieval.py --parts speed --sizes 100000 first")
    return stores[-1]


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


async def one(store: Path, cache_mib: int, queries: list[str], model: Any) -> dict[str, dict[str, float]]:
    memory_id = json.loads(store.with_suffix(".json").read_text())["memory_id"]
    out: dict[str, dict[str, float]] = {}
    async with memstone.open_service(f"sqlite:///{store}?cache_mib={cache_mib}", embedding=model) as svc:
        backend = svc.backend
        assert isinstance(backend, SQLiteMemoryBackend)
        conn = backend.conn
        head = await svc.head(memory_id)
        for mode in ("fts", "vector", "hybrid") if model is not None else ("fts",):
            for q in queries:
                await svc.search(q, memories=[head], limit=10, mode=mode)
            misses, wall, cpu = [], [], []
            for q in queries:
                m0 = conn.status(apsw.SQLITE_DBSTATUS_CACHE_MISS)[0]
                t, c = time.perf_counter(), time.process_time()
                await svc.search(q, memories=[head], limit=10, mode=mode)
                wall.append((time.perf_counter() - t) * 1000)
                cpu.append((time.process_time() - c) * 1000)
                misses.append(conn.status(apsw.SQLITE_DBSTATUS_CACHE_MISS)[0] - m0)
            out[mode] = {
                "misses": statistics.mean(misses),
                "p50": statistics.median(wall),
                "cpu_p50": statistics.median(cpu),
                "cache_used_mb": conn.status(apsw.SQLITE_DBSTATUS_CACHE_USED)[0] / 1e6,
            }
    return out


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--store", type=Path, default=None)
    ap.add_argument("--cache-mib", default="2,64")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--json", dest="json_out", type=Path, default=None)
    args = ap.parse_args()
    store = args.store or default_store()
    settings = [int(x) for x in args.cache_mib.split(",")]
    model = real_model("minilm-l6-int8", 1) if "minilm" in store.name else None
    queries = speed_queries(args.queries)
    runs: dict[int, list[dict[str, dict[str, float]]]] = {s: [] for s in settings}
    for r in range(args.rounds):
        for s in settings:
            runs[s].append(await one(store, s, queries, model))
        log(f"round {r + 1}/{args.rounds} done (load {os.getloadavg()[0]:.2f})")
    print(f"store {store.name}, {len(queries)} queries, {args.rounds} rounds, load {os.getloadavg()[0]:.2f}\n")
    print("| cache_mib | mode | pages read from the OS / search | p50 ms (median) | CPU p50 ms | cache used MB |")
    print("|---|---|---|---|---|---|")
    for s in settings:
        for mode in runs[s][0]:
            rows = [run[mode] for run in runs[s]]
            print(
                f"| {s} | {mode} | {statistics.mean(x['misses'] for x in rows):.1f} "
                f"| {statistics.median(x['p50'] for x in rows):.2f} "
                f"| {statistics.median(x['cpu_p50'] for x in rows):.2f} "
                f"| {max(x['cache_used_mb'] for x in rows):.1f} |"
            )
    if args.json_out:
        args.json_out.write_text(json.dumps({str(k): v for k, v in runs.items()}, indent=1))


if __name__ == "__main__":
    asyncio.run(main())
