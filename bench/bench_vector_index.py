"""Vector-path speed at scale without the model's embedding cost: ``python bench/bench_vector_index.py [N]``.

Loads N entries (default 100,000; 1,000 per ``remember``) into one Memory with a deterministic 384-dimension
test model (feature hashing), so the store has real vectors of MiniLM's dimension in minutes, then prints
fts / vector / hybrid search p50 and p95 (200 queries after 20 warm-ups, limit 10) and the recall@10 of the
search path against sqlite-vec's exact scan (``exact=True``) over 100 queries. Add the model's query embedding
time (``bench/embedding_speed.py``) for an end-to-end figure.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus import Corpus

import memstone
from memstone import EntryInput
from memstone.embedding import HashingEmbedder


async def main(n: int) -> None:
    corpus = Corpus(seed=n)
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{Path(tmp) / 'vectors.db'}"
        async with memstone.open_service(url, embedding=HashingEmbedder(dimension=384)) as svc:
            head = None
            t0 = time.time()
            for i in range(0, n, 1000):
                head = await svc.remember(
                    head, entries=[EntryInput(kind="fact", text=corpus.note()) for _ in range(min(1000, n - i))]
                )
                print(f"\r  loaded {i + 1000}/{n}", end="", file=sys.stderr, flush=True)
            print(file=sys.stderr)
            assert head is not None
            took = time.time() - t0
            print(f"machine: {os.cpu_count()} cores; load {os.getloadavg()}; {n} entries loaded in {took:.0f} s")
            queries = [corpus.query() for _ in range(220)]
            for mode in ("fts", "vector", "hybrid"):
                lat = []
                for i, q in enumerate(queries):
                    t = time.perf_counter()
                    await svc.search(q, memories=[head], mode=mode, limit=10)  # type: ignore[arg-type]
                    if i >= 20:
                        lat.append((time.perf_counter() - t) * 1000)
                lat.sort()
                print(f"{mode:<7} p50 {statistics.median(lat):.2f} ms  p95 {lat[int(0.95 * len(lat))]:.2f} ms")
            recalls = []
            for q in queries[:100]:
                fast = await svc.search(q, memories=[head], mode="vector", limit=10)
                exact = await svc.search(q, memories=[head], mode="vector", limit=10, exact=True)
                if exact.hits:
                    recalls.append(len({h.entry_id for h in fast} & {h.entry_id for h in exact}) / len(exact.hits))
            print(
                f"recall@10 of the search path vs exact: {sum(recalls) / len(recalls):.3f} over {len(recalls)} queries"
            )
            print(f"load at end {os.getloadavg()}")


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 100_000))
