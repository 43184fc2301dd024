"""Two codes' single-entry ``remember`` timed in lockstep on one server:
``python bench/bench_write_pair.py --url postgresql://… --keep NAME --src OLD/src --src NEW/src`` (PostgreSQL).

On a machine shared with other work the load moves a write's wall time by 2× within minutes, more than a change
to the write path does, so runs of two codes one after the other do not compare them. Here each code runs in a
worker process of its own (``PYTHONPATH`` at its ``src``), each on a Memory of its own of ``--seed`` entries in
one kept database (``--keep NAME``: built by the first run, reused by the next ones, never dropped), and the
coordinator asks the workers for one write at a time, in turn (which one goes first alternates), so both codes
meet the same load. Each worker first writes 20 entries untimed, like ``bench_core.py``; then each timed write is
one new entry on the head that worker wrote last. Prints each code's p50 / p95 wall time and the load average
before and after.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import engines
from corpus import Corpus


def run_sql(url: str, sql: str, args: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        cur = conn.execute(sql, args)
        return cur.fetchall() if cur.description is not None else []


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def worker(url: str, seed: int, label: str) -> None:
    """Build (or find) this label's Memory, then one timed write per ``w`` line read; its ms on stdout."""
    from memstone import EntryInput, open_service

    run_sql(url, "CREATE TABLE IF NOT EXISTS bench_pair (label text PRIMARY KEY, memory_id text NOT NULL)")
    found = run_sql(url, "SELECT memory_id FROM bench_pair WHERE label = %s", (label,))
    async with open_service(url, embedding=None) as svc:
        if found:
            head = await svc.head(str(found[0][0]))
        else:
            corpus, head = Corpus(seed=seed + len(label)), None
            for done in range(0, seed, 1000):
                entries = [EntryInput(kind="fact", text=corpus.note()) for _ in range(min(1000, seed - done))]
                head = await svc.remember(head, entries=entries)
            assert head is not None
            run_sql(url, "INSERT INTO bench_pair (label, memory_id) VALUES (%s, %s)", (label, head.memory_id))
        corpus = Corpus(seed=time.time_ns() % 2**31)  # texts no earlier run stored
        for _ in range(20):
            head = await svc.remember(head, entries=[EntryInput(kind="fact", text=corpus.note())])
        print("ready", flush=True)
        for line in sys.stdin:
            if line.strip() != "w":
                break
            text = corpus.note()
            start = time.perf_counter()
            head = await svc.remember(head, entries=[EntryInput(kind="fact", text=text)])
            print(f"{(time.perf_counter() - start) * 1000:.4f}", flush=True)


def start_workers(script: str, sources: list[str], args: list[list[str]]) -> list[subprocess.Popen[str]]:
    """One worker process of ``script`` per code (``PYTHONPATH`` at its ``src``), with its ``--worker`` arguments;
    returns once every worker printed ``ready``."""
    procs = []
    for src, extra in zip(sources, args, strict=True):
        env = dict(os.environ, PYTHONPATH=str(Path(src).resolve()))
        cmd = [sys.executable, script, "--worker", *extra]
        procs.append(subprocess.Popen(cmd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True))
    for p in procs:
        assert p.stdout is not None
        if p.stdout.readline().strip() != "ready":
            stop_workers(procs)
            raise SystemExit("a worker failed before its first job")
    return procs


def stop_workers(procs: list[subprocess.Popen[str]]) -> None:
    for p in procs:
        with contextlib.suppress(OSError):
            assert p.stdin is not None
            p.stdin.write("q\n")
            p.stdin.close()
        p.wait(timeout=60)


def coordinate(url: str, seed: int, writes: int, sources: list[str]) -> dict[str, object]:
    args = [[url, "--seed", str(seed), "--label", f"code{i}"] for i in range(len(sources))]
    procs = start_workers(__file__, sources, args)
    try:
        load_before = os.getloadavg()[0]
        times: list[list[float]] = [[] for _ in procs]
        for n in range(writes):
            order = list(range(len(procs))) if n % 2 == 0 else list(reversed(range(len(procs))))
            for i in order:
                stdin, stdout = procs[i].stdin, procs[i].stdout
                assert stdin is not None and stdout is not None
                stdin.write("w\n")
                stdin.flush()
                times[i].append(float(stdout.readline()))
        return {
            "load": [round(load_before, 1), round(os.getloadavg()[0], 1)],
            "writes": writes,
            **{
                src: {"p50_ms": round(statistics.median(t), 2), "p95_ms": round(pct(t, 0.95), 2)}
                for src, t in zip(sources, times, strict=True)
            },
        }
    finally:
        stop_workers(procs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--url", help="A postgresql:// server URL.")
    ap.add_argument("--keep", help="The kept database's name (built by the first run).")
    ap.add_argument("--src", action="append", default=[], help="A code's src folder (give two).")
    ap.add_argument("--seed", type=int, default=10000, help="Entries in each code's Memory before the timed writes.")
    ap.add_argument("--writes", type=int, default=200, help="Timed writes per code.")
    ap.add_argument("--worker", metavar="DATABASE_URL", help=argparse.SUPPRESS)
    ap.add_argument("--label", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        asyncio.run(worker(args.worker, args.seed, args.label))
        return
    if not args.url or not args.keep or len(args.src) != 2:
        ap.error("give --url, --keep and two --src")
    with engines.server_database(args.url, args.keep) as (url, _):
        print(json.dumps(coordinate(url, args.seed, args.writes, args.src)))


if __name__ == "__main__":
    main()
