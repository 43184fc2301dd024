"""The client's CPU of single-entry ``remember`` calls on a kept store, per thread, and under callgrind in instructions
(issue 13), so two trees can be compared where a shared machine makes wall and CPU time noise:

    valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file=/tmp/cg.out \\
        .venv/bin/python bench/write_instructions.py postgresql://…/DB --seed 100000 --writes 200
    callgrind_annotate /tmp/cg.out | head     # "PROGRAM TOTALS" / writes = instructions per write, every thread

The first run on a store builds a Memory of ``--seed`` entries in ``remember`` calls of 1,000 (as ``bench_core.py``
loads it) and records its id (PostgreSQL: table ``bench_write_instructions``; SQLite: a file beside the store);
later runs write into the same Memory. Each run writes 20 entries untimed, then ``--writes`` timed ones (new texts
each run; ``--texts SEED`` on clones of one store gives two trees the same writes on the same state). Under
callgrind, instrumentation (``search_instructions.py``'s client requests) is on from the first timed write to the
last, so the count covers those writes alone, in every thread (the event loop's and the engine's workers).
Outside valgrind it prints the CPU time per write of the whole process, of the event loop's thread and of the
engine's jobs (``time.thread_time`` around each job on a worker thread), and the wall time. ``--floor`` counts the
floor's writes instead (the same rows by plain SQL, ``engines.RawRemember``). Give ``PYTHONPATH``
the ``src`` of the tree to measure; run the trees in turn on the same store.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus import Corpus
from search_instructions import START_INSTRUMENTATION, STOP_INSTRUMENTATION, _request

_TABLE = "bench_write_instructions"


def _pg(url: str, sql: str, args: tuple[object, ...] = ()) -> list[tuple[Any, ...]]:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        cur = conn.execute(sql, args)
        return cur.fetchall() if cur.description is not None else []


def _kept(target: str, label: str) -> tuple[str, str | None, Callable[[str], object]]:
    """(store URL, the kept Memory's id or None, how to record a new one)."""
    if target.startswith("postgresql"):
        _pg(target, f"CREATE TABLE IF NOT EXISTS {_TABLE} (label text PRIMARY KEY, memory_id text NOT NULL)")
        rows = _pg(target, f"SELECT memory_id FROM {_TABLE} WHERE label = %s", (label,))

        def record(memory_id: str) -> object:
            return _pg(target, f"INSERT INTO {_TABLE} VALUES (%s, %s)", (label, memory_id))

        return target, (str(rows[0][0]) if rows else None), record
    path = Path(target.removeprefix("sqlite:///"))
    id_file = path.with_name(f"{path.name}.{label}.memory")
    found = id_file.read_text().strip() if id_file.exists() else None
    return f"sqlite:///{path}", found, id_file.write_text


def _time_jobs(spent: list[float]) -> None:
    """Add each engine job's thread CPU time to ``spent[0]`` (the jobs run on the engine's worker threads)."""
    from memstone.backends.sql.workers import Workers

    run = Workers.run

    async def timed(self: Workers, fn: Callable[..., Any], *args: object) -> Any:
        def job(*a: object) -> Any:
            start = time.thread_time()
            try:
                return fn(*a)
            finally:
                spent[0] += time.thread_time() - start

        return await run(self, job, *args)

    Workers.run = timed  # type: ignore[method-assign]


async def main(target: str, seed: int, writes: int, label: str, text_seed: int | None = None) -> None:
    from memstone import EntryInput, open_service

    url, found, record = _kept(target, label)
    async with open_service(url, embedding=None) as svc:
        if found is not None:
            head = await svc.head(found)
        else:
            corpus, head = Corpus(seed=seed), None
            for done in range(0, seed, 1000):
                batch = [EntryInput(kind="fact", text=corpus.note()) for _ in range(min(1000, seed - done))]
                head = await svc.remember(head, entries=batch)
            assert head is not None
            record(head.memory_id)
        corpus = Corpus(seed=time.time_ns() % 2**31 if text_seed is None else text_seed)  # texts no earlier run stored
        for _ in range(20):
            head = await svc.remember(head, entries=[EntryInput(kind="fact", text=corpus.note())])
        texts = [corpus.note() for _ in range(writes)]
        jobs = [0.0]
        _time_jobs(jobs)
        request = _request()
        request(START_INSTRUMENTATION)
        cpu, loop_cpu, wall = time.process_time(), time.thread_time(), time.perf_counter()
        for text in texts:
            head = await svc.remember(head, entries=[EntryInput(kind="fact", text=text)])
        cpu, loop_cpu, wall = time.process_time() - cpu, time.thread_time() - loop_cpu, time.perf_counter() - wall
        request(STOP_INSTRUMENTATION)
    ms = 1000 / writes
    print(
        f"per write: process CPU {cpu * ms:.3f} ms (event loop thread {loop_cpu * ms:.3f}, engine jobs "
        f"{jobs[0] * ms:.3f}), wall {wall * ms:.3f} ms; {writes} writes, load {os.getloadavg()[0]:.2f}"
    )


async def floor(target: str, writes: int, label: str) -> None:
    """``--floor``: the same count for the floor, the rows of one memstone write inserted again by plain SQL
    (``engines.RawRemember``, as ``bench_write_pair.py --floor`` times it): instrumentation is on around each timed
    ``write()`` only (its statements are prepared outside it), on the kept Memory's store."""
    import engines

    from memstone import EntryInput, open_service

    url, found, _ = _kept(target, label)
    assert found is not None, "run without --floor first: it builds the kept Memory"
    corpus = Corpus(seed=time.time_ns() % 2**31)
    async with open_service(url, embedding=None) as svc:
        head = await svc.remember(await svc.head(found), entries=[EntryInput(kind="fact", text=corpus.note())])
        target_head = await svc.remember(None, entries=[EntryInput(kind="fact", text=corpus.note())])
    assert head is not None and target_head is not None
    raw = engines.RawRemember(url, head.memory_id, target_head.memory_id)
    for _ in range(5):
        raw.prepare(corpus.note())
        raw.write()
    request, cpu = _request(), 0.0
    for _ in range(writes):
        raw.prepare(corpus.note())  # not counted
        request(START_INSTRUMENTATION)
        start = time.thread_time()
        raw.write()
        cpu += time.thread_time() - start
        request(STOP_INSTRUMENTATION)
    raw.close()
    print(f"floor per write: CPU {cpu * 1000 / writes:.3f} ms; {writes} writes, load {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("target", help="postgresql://…/DB, or a SQLite file (created on the first run)")
    ap.add_argument("--seed", type=int, default=100_000, help="entries in the kept Memory (first run only)")
    ap.add_argument("--writes", type=int, default=200)
    ap.add_argument("--label", default="main", help="which kept Memory of the store (one per label)")
    ap.add_argument(
        "--texts",
        type=int,
        help="the seed of the written texts (default: new each run); two trees given one seed, each on its own "
        "clone of the kept store (CREATE DATABASE … TEMPLATE …), write the same texts on the same state",
    )
    ap.add_argument("--floor", action="store_true", help="count the floor's writes (engines.RawRemember) instead")
    a = ap.parse_args()
    asyncio.run(floor(a.target, a.writes, a.label) if a.floor else main(a.target, a.seed, a.writes, a.label, a.texts))
