"""Two codes' single-entry ``remember`` timed in lockstep on one server:
``python bench/bench_write_pair.py --url postgresql://… --keep NAME --src OLD/src --src NEW/src`` (PostgreSQL).

On a machine shared with other work the load moves a write's wall time by 2× within minutes, more than a change
to the write path does, so runs of two codes one after the other do not compare them. Here each code runs in a
worker process of its own (``PYTHONPATH`` at its ``src``), each on a Memory of its own of ``--seed`` entries in
one kept database (``--keep NAME``: built by the first run, reused by the next ones, never dropped), and the
coordinator asks the workers for one write at a time, in turn (which one goes first alternates), so both codes
meet the same load. Each worker first writes 20 entries untimed, like ``bench_core.py``; then each timed write is
one new entry on the head that worker wrote last. Prints each code's p50 / p95 wall time and the load average
before and after. ``--floor``: after each write the worker also times the floor, the same rows written by plain SQL
(``engines.RawRemember``, prepared untimed, as ``bench_core.py`` pairs them) into a Memory of its own, and each code's
ratio to its own floor is printed: the issue's ratio with both codes under the same load.
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


async def worker(url: str, seed: int, label: str, with_floor: bool = False) -> None:
    """Build (or find) this label's Memory, then one timed write per ``w`` line read; its ms on stdout (with
    ``with_floor``, then the ms of the floor writing the same rows, ``engines.RawRemember``, on the same line)."""
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
        floor = None
        if with_floor:  # the same rows by plain SQL into a Memory of this worker's own (engines.RawRemember)
            target = await svc.remember(None, entries=[EntryInput(kind="fact", text=corpus.note())])
            assert head is not None and target is not None
            floor = engines.RawRemember(url, head.memory_id, target.memory_id)
        print("ready", flush=True)
        for line in sys.stdin:
            if line.strip() != "w":
                break
            text = corpus.note()
            start = time.perf_counter()
            head = await svc.remember(head, entries=[EntryInput(kind="fact", text=text)])
            took = f"{(time.perf_counter() - start) * 1000:.4f}"
            if floor is not None:
                floor.prepare(corpus.note())  # not timed
                start = time.perf_counter()
                floor.write()
                took += f" {(time.perf_counter() - start) * 1000:.4f}"
            print(took, flush=True)
        if floor is not None:
            floor.close()


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


def coordinate(url: str, seed: int, writes: int, sources: list[str], floor: bool = False) -> dict[str, object]:
    args = [
        [url, "--seed", str(seed), "--label", f"code{i}", *(["--floor"] if floor else [])] for i in range(len(sources))
    ]
    procs = start_workers(__file__, sources, args)
    try:
        load_before = os.getloadavg()[0]
        times: list[list[float]] = [[] for _ in procs]
        floors: list[list[float]] = [[] for _ in procs]
        for n in range(writes):
            order = list(range(len(procs))) if n % 2 == 0 else list(reversed(range(len(procs))))
            for i in order:
                stdin, stdout = procs[i].stdin, procs[i].stdout
                assert stdin is not None and stdout is not None
                stdin.write("w\n")
                stdin.flush()
                took = [float(x) for x in stdout.readline().split()]
                times[i].append(took[0])
                floors[i].extend(took[1:])
        out: dict[str, object] = {"load": [round(load_before, 1), round(os.getloadavg()[0], 1)], "writes": writes}
        for src, t, f in zip(sources, times, floors, strict=True):
            out[src] = {"p50_ms": round(statistics.median(t), 2), "p95_ms": round(pct(t, 0.95), 2)}
            if f:
                ratio = statistics.median(t) / statistics.median(f)
                out[src] |= {"same_rows_p50_ms": round(statistics.median(f), 2), "ratio": round(ratio, 2)}
        return out
    finally:
        stop_workers(procs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--url", help="A postgresql:// server URL.")
    ap.add_argument("--keep", help="The kept database's name (built by the first run).")
    ap.add_argument("--src", action="append", default=[], help="A code's src folder (give two).")
    ap.add_argument("--seed", type=int, default=10000, help="Entries in each code's Memory before the timed writes.")
    ap.add_argument("--writes", type=int, default=200, help="Timed writes per code.")
    ap.add_argument(
        "--floor",
        action="store_true",
        help="After each write, time the same rows written by plain SQL (engines.RawRemember) in the same worker.",
    )
    ap.add_argument("--worker", metavar="DATABASE_URL", help=argparse.SUPPRESS)
    ap.add_argument("--label", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        asyncio.run(worker(args.worker, args.seed, args.label, args.floor))
        return
    if not args.url or not args.keep or len(args.src) != 2:
        ap.error("give --url, --keep and two --src")
    with engines.server_database(args.url, args.keep) as (url, _):
        print(json.dumps(coordinate(url, args.seed, args.writes, args.src, args.floor)))


if __name__ == "__main__":
    main()
