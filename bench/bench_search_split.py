"""Where a search of the kept speed store spends its time on OceanBase, and the same for the raw statements:
``python bench/bench_search_split.py --url oceanbase://…/bench_speed_…``.

The store is the one ``bench_retrieval.py --parts speed --url oceanbase://…`` built and kept (its database URL).
For each of ``--queries`` speed queries and each mode (``fts``, ``vector``, ``hybrid``), memstone's search with the
query vector from the vector cache (the "index only" figure, so no model runs here) and then the raw statement(s)
of ``bench/engines.py`` over the same rows, each call timed end to end, around every statement the engine sends
(``bench_write_split.statements_timed``) and against the server's own elapsed time for the database's plans
(``bench_write_split.ServerClock``, ``V$OB_PLAN_CACHE_PLAN_STAT``, read before and after each phase). So a call's
wall time splits into the server's work, the rest of the time inside statements (round trips, waits for a core, the
driver) and the client's own work (the service's Python, the hand-offs to the engine's worker thread).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_retrieval
import bench_write_split
import engines

import memstone


def _cycle(items: list[str]) -> Iterator[str]:
    while True:
        yield from items


def _phase(queries: list[str], call: Callable[[str], Awaitable[object]]) -> Callable[[], Awaitable[object]]:
    it = _cycle(queries)

    def next_call() -> Awaitable[object]:
        return call(next(it))

    return next_call


async def _raw_call(fn: Callable[[], object]) -> object:
    return fn()


async def run(url: str, model: str, n_queries: int) -> dict[str, Any]:
    memory_id = engines.built_memory(url)
    if memory_id is None:
        raise SystemExit(f"{url}: no finished speed store (run bench_retrieval.py --parts speed --url … first)")
    real = bench_retrieval.real_model(model, 1)
    cached = bench_retrieval.CachedModel(real, bench_retrieval.VectorCache(real.profile))
    queries = bench_retrieval.speed_queries(n_queries)
    vectors = cached.cache.get(queries)
    limit = bench_retrieval.LIMIT
    raw = engines.RawEngine(url, None, memory_id, cached.profile.dimension)
    raw_jobs: dict[str, Callable[[str], object]] = {
        "fts": lambda q: raw.fts(q, limit),
        "vector": lambda q: raw.knn(vectors[q], limit),
        "hybrid": lambda q: (raw.fts(q, limit), raw.knn(vectors[q], limit)),
    }
    clock = bench_write_split.ServerClock(url)
    out: dict[str, Any] = {"load_start": os.getloadavg()[0]}
    try:
        async with memstone.open_service(url, embedding=cached) as svc:
            head = await svc.head(memory_id)
            for q in queries[:10]:  # warm-up: plans cached, connection open
                for mode in raw_jobs:
                    await svc.search(q, memories=[head], limit=limit, mode=mode)
                    raw_jobs[mode](q)
            with bench_write_split.statements_timed("oceanbase"):
                for mode, job in raw_jobs.items():

                    async def ours(q: str, mode: str = mode) -> object:
                        return await svc.search(q, memories=[head], limit=limit, mode=mode)

                    out[mode] = await bench_write_split._timed_calls(len(queries), _phase(queries, ours), clock)
                    out[f"raw-{mode}"] = await bench_write_split._timed_calls(
                        len(queries), _phase(queries, lambda q, job=job: _raw_call(lambda: job(q))), clock
                    )
                    out[mode]["load"] = out[f"raw-{mode}"]["load"] = os.getloadavg()[0]
    finally:
        clock.close()
        raw.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--url", required=True, help="the kept speed store's oceanbase://…/bench_speed_… database URL")
    ap.add_argument("--model", default="minilm-l6-int8", help="the model whose cached vectors the store holds")
    ap.add_argument("--queries", type=int, default=200)
    args = ap.parse_args()
    if engines.engine_of(args.url) != "oceanbase":
        ap.error("--url must be an oceanbase:// database (the server's plan cache is read)")
    t0 = time.perf_counter()
    result = asyncio.run(run(args.url, args.model, args.queries))
    for key, value in result.items():
        print(f"{key}: {json.dumps(value)}")
    print(f"wall {time.perf_counter() - t0:.0f} s; load at end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
