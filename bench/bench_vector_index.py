"""Vector-path speed at scale without the embedding cost: ``python bench/bench_vector_index.py [N] [--url URL]``.

Loads N entries (default 100,000; 1,000 per ``remember``) into one Memory with a deterministic 384-dimension
test model (feature hashing), so the store has real vectors of MiniLM's dimension in minutes, then prints
fts / vector / hybrid search p50 and p95 (200 queries after 20 warm-ups, limit 10), the recall@10 of the
search path against the engine's exact scan (``exact=True``) over 100 queries, and the engine's raw statements
over the same rows (``bench/engines.py``: full-text, nearest neighbours, both for hybrid) with memstone's p50 over
theirs. SQLite by default (a temporary file); ``--url postgresql://…`` or ``--url oceanbase://…`` runs on that
server, in a database named by N that is kept and reused by a rerun against the same server (``--fresh`` builds
it again); ``--start-postgres`` / ``--start-oceanbase`` start a test server for the run. Add the model's query
embedding time (``bench/embedding_speed.py``) for an end-to-end figure.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import engines
from corpus import Corpus

import memstone
from memstone import EntryInput
from memstone.embedding import HashingEmbedder


def p50_p95(lat: list[float]) -> tuple[float, float]:
    lat = sorted(lat)
    return statistics.median(lat), lat[int(0.95 * len(lat))]


async def build(url: str, n: int, corpus: Corpus, model: HashingEmbedder) -> str:
    t0 = time.time()
    head = None
    async with memstone.open_service(url, embedding=model) as svc:
        with engines.bulk_vectors(url, model.profile.dimension):  # PostgreSQL: HNSW built once, after the load
            for i in range(0, n, 1000):
                head = await svc.remember(
                    head, entries=[EntryInput(kind="fact", text=corpus.note()) for _ in range(min(1000, n - i))]
                )
                print(
                    f"\r  loaded {min(i + 1000, n)}/{n} ({time.time() - t0:.0f} s)", end="", file=sys.stderr, flush=True
                )
    print(file=sys.stderr)
    assert head is not None
    print(f"{n} entries loaded in {time.time() - t0:.0f} s")
    return head.memory_id


async def measure(url: str, path: Path | None, memory_id: str, corpus: Corpus, model: HashingEmbedder) -> None:
    print(f"engine {engines.engine_of(url)}; machine: {os.cpu_count()} cores; load {os.getloadavg()}")
    queries = [corpus.query() for _ in range(220)]
    p50s: dict[str, float] = {}
    async with memstone.open_service(url, embedding=model) as svc:
        head = await svc.head(memory_id)
        for mode in ("fts", "vector", "hybrid"):
            lat = []
            for i, q in enumerate(queries):
                t = time.perf_counter()
                await svc.search(q, memories=[head], mode=mode, limit=10)  # type: ignore[arg-type]
                if i >= 20:
                    lat.append((time.perf_counter() - t) * 1000)
            p50s[mode], p95 = p50_p95(lat)
            print(f"{mode:<7} p50 {p50s[mode]:.2f} ms  p95 {p95:.2f} ms")
        recalls = []
        for q in queries[:100]:
            fast = await svc.search(q, memories=[head], mode="vector", limit=10)
            exact = await svc.search(q, memories=[head], mode="vector", limit=10, exact=True)
            if exact.hits:
                recalls.append(len({h.entry_id for h in fast} & {h.entry_id for h in exact}) / len(exact.hits))
        print(f"recall@10 of the search path vs exact: {sum(recalls) / len(recalls):.3f} over {len(recalls)} queries")
        # memstone and the engine's own statements over the same rows, timed in pairs (same load for both)
        raw = engines.RawEngine(url, path, memory_id, model.profile.dimension)
        vectors = {q: (await model.embed((q,))).vectors[0] for q in queries}
        jobs: dict[str, Callable[[str], object]] = {
            "fts": lambda q: raw.fts(q, 10),
            "vector": lambda q: raw.knn(vectors[q], 10),
            "hybrid": lambda q: (raw.fts(q, 10), raw.knn(vectors[q], 10)),
        }
        for mode, job in jobs.items():
            ours, theirs = [], []
            for i, q in enumerate(queries):
                t = time.perf_counter()
                await svc.search(q, memories=[head], mode=mode, limit=10)  # type: ignore[arg-type]
                t1 = time.perf_counter()
                job(q)
                t2 = time.perf_counter()
                if i >= 20:
                    ours.append((t1 - t) * 1000)
                    theirs.append((t2 - t1) * 1000)
            (o50, o95), (r50, r95) = p50_p95(ours), p50_p95(theirs)
            print(
                f"paired {mode:<7} memstone p50 {o50:.2f} / p95 {o95:.2f} ms, raw p50 {r50:.2f} / p95 {r95:.2f} ms: "
                f"{o50 / r50:.2f}x"
            )
        raw.close()
    print(f"load at end {os.getloadavg()}")


async def main(n: int, server: str | None, fresh: bool) -> None:
    corpus = Corpus(seed=n)
    model = HashingEmbedder(dimension=384)
    if server is None:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "vectors.db"
            url = f"sqlite:///{path}"
            memory_id = await build(url, n, corpus, model)
            await measure(url, path, memory_id, corpus, model)
        return
    name = f"bench_vector_index_{n}"
    if fresh:
        engines.drop_database(server, name)
    with engines.server_database(server, name) as (url, existed):
        memory_id = engines.built_memory(url) if existed else None
    if memory_id is None:
        if existed:  # a build that did not finish
            engines.drop_database(server, name)
            with engines.server_database(server, name) as (url, _):
                pass
        memory_id = await build(url, n, corpus, model)
        engines.mark_built(url, memory_id)
    else:
        print(f"reusing database {name} ({n} entries)")
        for _ in range(n):  # the queries follow the notes in the corpus's random stream
            corpus.note()
    await measure(url, None, memory_id, corpus, model)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("entries", nargs="?", type=int, default=100_000)
    ap.add_argument("--url", help="a postgresql:// or oceanbase:// server to run on (its database is kept)")
    ap.add_argument("--start-postgres", action="store_true", help="start the embedded PostgreSQL test server")
    ap.add_argument("--start-oceanbase", action="store_true", help="start a private seekdb (OceanBase) server")
    ap.add_argument("--fresh", action="store_true", help="drop the kept database and build it again")
    args = ap.parse_args()
    start = "postgres" if args.start_postgres else "oceanbase" if args.start_oceanbase else None
    with contextlib.ExitStack() as stack:
        server = stack.enter_context(engines.server_for(args.url, start))
        asyncio.run(main(args.entries, server, args.fresh))
