"""Throwaway benchmark of the offline embedding models through the public async API; prints a Markdown table.

    .venv/bin/python bench/embedding_speed.py [--rounds 5] [--queries 100]

Each (model, threads) configuration runs in a fresh subprocess: "ready" is import + load + the first call.
Batch throughput: 1,000 short sentences embedded in batches of 32 (one ``embed`` call per batch), best round
(median round in parentheses). Latency: single-text ``embed`` calls after warm-up, p50/p95 of the best round.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

WORDS = tuple(
    [
        "deploy",
        "staging",
        "database",
        "port",
        "backup",
        "commit",
        "branch",
        "docker",
        "image",
        "cache",
        "latency",
        "queue",
        "worker",
        "retry",
        "token",
        "schema",
        "index",
        "migration",
        "cluster",
        "node",
        "pod",
        "secret",
        "config",
        "review",
        "test",
        "build",
        "release",
        "rollback",
        "metric",
        "alert",
    ]
)

QUERIES = (
    "which program is already occupying a port",
    "how do I undo my last commit",
    "where are the database backups kept",
    "what does the team prefer for code review",
    "how to restart a stuck worker",
    "why is the cache hit rate so low",
    "when do we rotate the api tokens",
    "how is the staging cluster reached",
    "我怎么撤销最近一次提交",
    "数据库备份放在哪里",
)


def sentences(n: int) -> list[str]:
    out = []
    for i in range(n):
        k = 6 + (i * 7) % 15
        out.append(" ".join(WORDS[(i * 13 + j * 5) % len(WORDS)] for j in range(k)) + ".")
    return out


def run_one(name: str, threads: int, rounds: int, n_queries: int) -> dict[str, object]:
    import asyncio

    t0 = time.perf_counter()
    import memstone.embedding as emb

    model = emb.load_model(name, threads=threads)

    async def main() -> dict[str, object]:
        await model.embed(("warm up",))
        ready = time.perf_counter() - t0
        texts = sentences(1000)
        rates = []
        for _ in range(rounds):
            start = time.perf_counter()
            for i in range(0, len(texts), 32):
                await model.embed(tuple(texts[i : i + 32]))
            rates.append(len(texts) / (time.perf_counter() - start))
        queries = [QUERIES[i % len(QUERIES)] for i in range(n_queries)]
        for q in queries[:10]:
            await model.embed((q,))
        best: list[float] | None = None
        for _ in range(rounds):
            lat = []
            for q in queries:
                start = time.perf_counter()
                await model.embed((q,))
                lat.append((time.perf_counter() - start) * 1e3)
            lat.sort()
            if best is None or statistics.median(lat) < statistics.median(best):
                best = lat
        assert best is not None
        return {
            "model": name,
            "threads": threads,
            "ready_s": ready,
            "best_rate": max(rates),
            "median_rate": statistics.median(rates),
            "p50_ms": statistics.median(best),
            "p95_ms": best[int(0.95 * (len(best) - 1))],
        }

    return asyncio.run(main())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--one", nargs=2, metavar=("MODEL", "THREADS"))
    args = parser.parse_args()
    if args.one:
        print(json.dumps(run_one(args.one[0], int(args.one[1]), args.rounds, args.queries)))
        return
    rows = []
    for name in ("minilm-l6-int8", "use-multilingual-v3"):
        for threads in (1, 2):
            cmd = [sys.executable, __file__, "--one", name, str(threads), "--rounds", str(args.rounds)]
            cmd += ["--queries", str(args.queries)]
            out = subprocess.run(cmd, capture_output=True, text=True, check=True)
            rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
    load = os.getloadavg()
    print(f"cpus={os.cpu_count()} loadavg={load[0]:.2f}/{load[1]:.2f}/{load[2]:.2f} rounds={args.rounds}\n")
    print("| model | threads | ready s | batch-32 texts/s best (median) | 1-query p50 ms | p95 ms |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['model']} | {r['threads']} | {r['ready_s']:.2f} | {r['best_rate']:.0f} ({r['median_rate']:.0f}) "
            f"| {r['p50_ms']:.2f} | {r['p95_ms']:.2f} |"
        )


if __name__ == "__main__":
    main()
