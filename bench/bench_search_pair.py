"""Two codes' searches and the engine's raw statement timed in lockstep on one kept server store:
``python bench/bench_search_pair.py --url postgresql://…/DATABASE --src OLD/src --src NEW/src [--mode vector]
[--embed]``.

The store is a kept speed store of ``bench_retrieval.py --parts speed --url …`` (its database, with the Memory
its build recorded). Each code runs in a worker process of its own (``PYTHONPATH`` at its ``src``) with the query
vectors from the bench's vector cache (``bench_retrieval.CachedModel``, so no model runs: the index-only figure);
for each query the coordinator asks each worker for one search, in turn (which one goes first alternates), then
runs the engine's own statement(s) for the same query on a bare connection (``engines.RawEngine``, as
``bench_retrieval.py`` pairs them), so the three meet the same load. ``--warm`` warm-up rounds (10) are not counted;
the queries are cycled, so ``--warm 200 --queries 600`` times each query three times once its hits' manifest nodes
are cached (a fresh worker reads them from the server at first, a statement per trie level). Prints
each code's and the raw statement's p50 / p95 and each code's p50 over the raw p50, with the load average before
and after. ``--embed``: each search embeds its query with the real model, as a caller's does (the cache serves
only the raw statement's vector).
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

sys.path.insert(0, str(Path(__file__).resolve().parent))

import engines
from bench_write_pair import pct, start_workers, stop_workers

MODEL = "minilm-l6-int8"


def queries(n: int) -> list[str]:
    """The first ``n`` speed queries, at most 200 (the ones the vector cache holds; ``--queries`` cycles them)."""
    from bench_retrieval import speed_queries

    return speed_queries(min(n, 200))


async def worker(url: str, mode: str, n: int, embed: bool = False) -> None:
    """One timed search per query number read on stdin; its ms on stdout."""
    from bench_retrieval import LIMIT, CachedModel, VectorCache, real_model

    import memstone

    real = real_model(MODEL, 1)
    cached = CachedModel(real, VectorCache(real.profile))
    texts = queries(n)
    memory_id = engines.built_memory(url)
    assert memory_id is not None, "not a kept speed store (run bench_retrieval.py --parts speed --url … first)"
    async with memstone.open_service(url, embedding=real) as svc:
        if not embed:
            svc.indexer.model = cached
        head = await svc.head(memory_id)
        print("ready", flush=True)
        for line in sys.stdin:
            if not line.strip().isdigit():
                break
            start = time.perf_counter()
            await svc.search(texts[int(line) % len(texts)], memories=[head], limit=LIMIT, mode=mode)
            print(f"{(time.perf_counter() - start) * 1000:.4f}", flush=True)


def coordinate(
    url: str, mode: str, n: int, sources: list[str], embed: bool = False, warm: int = 10
) -> dict[str, object]:
    from bench_retrieval import LIMIT, VectorCache, real_model

    texts = queries(n)
    vectors = VectorCache(real_model(MODEL, 1).profile).get(texts)
    memory_id = engines.built_memory(url)
    assert memory_id is not None
    raw = engines.RawEngine(url, None, memory_id, len(vectors[texts[0]]))
    jobs = {
        "fts": lambda q: raw.fts(q, LIMIT),
        "vector": lambda q: raw.knn(vectors[q], LIMIT),
        "hybrid": lambda q: (raw.fts(q, LIMIT), raw.knn(vectors[q], LIMIT)),
    }
    worker_args = [url, "--mode", mode, "--queries", str(n), *(["--embed"] if embed else [])]
    procs = start_workers(__file__, sources, [worker_args for _ in sources])
    try:
        load_before = os.getloadavg()[0]
        times: list[list[float]] = [[] for _ in procs]
        raw_times: list[float] = []
        for k, i in enumerate([*range(warm), *range(n)]):
            order = list(range(len(procs))) if k % 2 == 0 else list(reversed(range(len(procs))))
            for j in order:
                stdin, stdout = procs[j].stdin, procs[j].stdout
                assert stdin is not None and stdout is not None
                stdin.write(f"{i}\n")
                stdin.flush()
                ms = float(stdout.readline())
                if k >= warm:
                    times[j].append(ms)
            t = time.perf_counter()
            jobs[mode](texts[i % len(texts)])
            if k >= warm:
                raw_times.append((time.perf_counter() - t) * 1000)
        raw_p50 = statistics.median(raw_times)
        return {
            "mode": mode,
            "embed": embed,
            "queries": n,
            "load": [round(load_before, 1), round(os.getloadavg()[0], 1)],
            "raw": {"p50_ms": round(raw_p50, 2), "p95_ms": round(pct(raw_times, 0.95), 2)},
            **{
                src: {
                    "p50_ms": round(statistics.median(t), 2),
                    "p95_ms": round(pct(t, 0.95), 2),
                    "vs_raw": round(statistics.median(t) / raw_p50, 2),
                }
                for src, t in zip(sources, times, strict=True)
            },
        }
    finally:
        raw.close()
        stop_workers(procs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--url", help="The kept speed store's postgresql:// URL (its database).")
    ap.add_argument("--src", action="append", default=[], help="A code's src folder (give one or two).")
    ap.add_argument("--mode", choices=("fts", "vector", "hybrid"), default="vector")
    ap.add_argument(
        "--queries", type=int, default=100, help="Timed searches per code (speed queries, cycled past the 200)."
    )
    ap.add_argument("--warm", type=int, default=10, help="Untimed rounds first (200: every query's hits seen once).")
    ap.add_argument("--embed", action="store_true", help="Each search embeds its query with the real model.")
    ap.add_argument("--worker", metavar="DATABASE_URL", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        asyncio.run(worker(args.worker, args.mode, args.queries, args.embed))
        return
    if not args.url or not 1 <= len(args.src) <= 2:
        ap.error("give --url and one or two --src")
    print(json.dumps(coordinate(args.url, args.mode, args.queries, args.src, args.embed, args.warm)))


if __name__ == "__main__":
    main()
