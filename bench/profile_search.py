"""Where a short FTS search's time goes on a 10k store (issue 11's "no worse than before"; a probe).

    nice .venv/bin/python bench/profile_search.py [--entries 10000] [--queries 500]
    cd <old tree> && PYTHONPATH=src nice <venv>/bin/python <this tree>/bench/profile_search.py   # the same, older code

Builds one Memory of ``--entries`` ``bench/corpus.py`` notes (the store ``bench_core.py`` searches), warms up, then
prints: the wall p50 of ``search(mode="fts")`` over ``corpus.query()`` queries; the SQL statements of one search
(an apsw exec trace); a cProfile of ``--queries`` searches (SQLite time = ``execute`` + ``fetchall``, Python calls
per search, the top functions by own time); and, with ``--after-write``, the thread-CPU p50 of a search that
follows a single-entry write, with SQLite's common-term split (issue 15) on and off, when the tree has it.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import io
import pstats
import statistics
import sys
import tempfile
import time
from pathlib import Path

import apsw

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus import Corpus

import memstone
from memstone import EntryInput

TRACING = [False]
STATEMENTS: list[str] = []


def _trace(cursor: object, sql: str, bindings: object) -> bool:
    if TRACING[0]:
        STATEMENTS.append(" ".join(sql.split())[:120])
    return True


apsw.connection_hooks.append(lambda conn: conn.set_exec_trace(_trace))


async def run(entries: int, queries: int, after_write: bool) -> None:
    corpus = Corpus(seed=entries)
    with tempfile.TemporaryDirectory() as folder:
        async with memstone.open_service(f"sqlite:///{folder}/s.db", embedding=None) as svc:
            head = None
            for done in range(0, entries, 1000):
                batch = [EntryInput(kind="fact", text=corpus.note()) for _ in range(min(1000, entries - done))]
                head = await svc.remember(head, entries=batch)
                print(f"\r  load {done + len(batch):>7}/{entries}", end="", file=sys.stderr, flush=True)
            print(file=sys.stderr)
            assert head is not None
            qs = [corpus.query() for _ in range(200 + 2 * queries)]
            for q in qs[:200]:
                await svc.search(q, memories=[head], limit=8, mode="fts")
            lat = []
            for q in qs[200 : 200 + queries]:
                t = time.perf_counter()
                await svc.search(q, memories=[head], limit=8, mode="fts")
                lat.append((time.perf_counter() - t) * 1000)
            print(f"search p50 {statistics.median(lat):.3f} ms, mean {statistics.mean(lat):.3f} ms ({queries} queries)")
            TRACING[0] = True
            await svc.search(qs[-1], memories=[head], limit=8, mode="fts")
            TRACING[0] = False
            print("statements of one search:", *STATEMENTS, sep="\n  ")
            prof = cProfile.Profile()
            prof.enable()
            for q in qs[200 + queries :]:
                await svc.search(q, memories=[head], limit=8, mode="fts")
            prof.disable()
            stats = pstats.Stats(prof)
            raw = stats.stats  # type: ignore[attr-defined]
            sql = sum(
                v[2]
                for k, v in raw.items()
                if k[2]
                in ("<method 'execute' of 'apsw.Connection' objects>", "<method 'fetchall' of 'apsw.Cursor' objects>")
            )
            calls = sum(v[1] for v in raw.values())
            total = sum(v[2] for v in raw.values())
            print(
                f"profiled: {total / queries * 1000:.2f} ms per search, SQLite {sql / queries * 1000:.2f} ms, "
                f"{calls / queries:.0f} Python calls"
            )
            out = io.StringIO()
            pstats.Stats(prof, stream=out).sort_stats("tottime").print_stats(15)
            print(out.getvalue())
            if after_write:
                await _after_write(svc, head, corpus)


async def _after_write(svc: memstone.MemoryService, head: object, corpus: Corpus) -> None:
    try:
        from memstone.backends.sqlite import fts
    except ImportError:
        return
    if not hasattr(fts, "COMMON_SHARE"):
        print("this tree has no common-term split")
        return
    qs = [corpus.query() for _ in range(800)]
    for rnd in range(2):
        for share in (0.01, 1.0):
            fts.COMMON_SHARE = share
            lat = []
            for q in qs[rnd * 400 : (rnd + 1) * 400]:
                head = await svc.remember(head, entries=[EntryInput(kind="fact", text=corpus.note())])  # type: ignore[arg-type]
                t = time.thread_time()
                await svc.search(q, memories=[head], limit=8, mode="fts")  # type: ignore[list-item]
                lat.append((time.thread_time() - t) * 1000)
            print(f"search after a write, common-term share {share}: CPU p50 {statistics.median(lat):.3f} ms")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--entries", type=int, default=10_000)
    ap.add_argument("--queries", type=int, default=500)
    ap.add_argument("--after-write", action="store_true", help="also time a search after each single-entry write")
    args = ap.parse_args()
    asyncio.run(run(args.entries, args.queries, args.after_write))


if __name__ == "__main__":
    main()
