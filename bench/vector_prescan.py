"""The SQLite fast path's 1-bit prescan at 100k: recall against the exact scan and time, by rerank depth.

    nice .venv/bin/python bench/vector_prescan.py [--runs 3]
    nice .venv/bin/python bench/vector_prescan.py --pairs [--rounds 2]

Reads the 100k MiniLM speed store that ``bench/bench_retrieval.py --parts speed --sizes 100000`` built in
``bench/.cache`` (read-only) and the speed queries' cached vectors, builds the in-process ``VectorIndex`` the search
uses, and compares ``nearest(q, k)`` with a prescan of ``rerank_depth`` codes against the full exact scan
(``rerank_depth=0``). The queries are split in two halves: even positions (dev) fit the depth, odd positions
(held out) only report it. ``k`` 120 is what ``search(limit=10)`` asks the index for (``window_depth``).

``--pairs`` times whole searches through the service on the same store instead (MiniLM, 1 ONNX thread, limit 10),
the full exact scan (``rerank_depth`` 0, the code before the prescan) and the prescan alternating query by query
(which goes first alternates too), so both see the same machine load: hybrid and vector with the query embedded,
then both with the query vector from the cache ("index only").
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

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "src"))

import apsw  # noqa: E402
import bench_retrieval as br  # noqa: E402

import memstone  # noqa: E402
from memstone.backends.sql.vectors import window_depth  # noqa: E402
from memstone.backends.sqlite.vectors import VectorIndex, _vec_extension_path  # noqa: E402
from memstone.domain.search import candidate_depth  # noqa: E402
from memstone.embedding import load_model  # noqa: E402

DEPTHS = (1024, 2048, 4096, 8192)
KS = (10, window_depth(candidate_depth(10)), window_depth(candidate_depth(25)))
DEV_RECALL10, DEV_RECALL_K = 0.995, 0.98  # the fit: the smallest depth whose dev half reaches both


def speed_index(n: int) -> tuple[VectorIndex, int]:
    store = next(br.CACHE.glob(f"speed-minilm-l6-int8-{n}-*.db"), None)
    if store is None:
        raise SystemExit(f"no speed store of {n} entries in {br.CACHE}: run bench_retrieval.py --parts speed first")
    conn = apsw.Connection(f"file:{store}?mode=ro", flags=apsw.SQLITE_OPEN_URI | apsw.SQLITE_OPEN_READONLY)
    conn.enable_load_extension(True)
    conn.load_extension(_vec_extension_path())
    entries = dict(conn.execute("SELECT vector_rowid, entry_id FROM memory_entry_vector_metadata").fetchall())
    rows = sorted(
        (r, entries[r], e)
        for r, e in conn.execute("SELECT rowid, embedding FROM memory_entry_search_vector").fetchall()
        if r in entries
    )
    index = VectorIndex("bench")
    index.add(rows)
    return index, len(rows)


def query_vectors() -> list[tuple[float, ...]]:
    model = load_model("minilm-l6-int8")
    cache = br.VectorCache(model.profile)
    queries = br.speed_queries(200)
    windows = [(model.windows(q) or (q,))[0] for q in queries]
    found = cache.get(windows)
    missing = [w for w in windows if w not in found]
    if missing:
        raise SystemExit(f"{len(missing)} speed queries are not in the vector cache: run bench_retrieval.py first")
    return [found[w] for w in windows]


def recall(index: VectorIndex, qs: list[tuple[float, ...]], k: int, depth: int, exact: list[list[int]]) -> list[float]:
    out = []
    for q, ex in zip(qs, exact, strict=True):
        got = {rowid for _, rowid in index.nearest(q, k, depth)}
        out.append(len(got.intersection(ex[:k])) / len(ex[:k]))
    return out


def timed(index: VectorIndex, qs: list[tuple[float, ...]], k: int, depth: int, runs: int) -> tuple[float, float]:
    p50s, reranked = [], []
    for _ in range(runs):
        lat = []
        for q in qs:
            t = time.perf_counter()
            index.nearest(q, k, depth)
            lat.append((time.perf_counter() - t) * 1000)
            reranked.append(index.reranked)
        p50s.append(statistics.median(lat))
    return statistics.median(p50s), statistics.median(reranked)


async def pairs(n: int, rounds: int) -> None:
    store = next(br.CACHE.glob(f"speed-minilm-l6-int8-{n}-*.db"))
    memory_id = json.loads(store.with_suffix(".json").read_text())["memory_id"]
    real = br.real_model("minilm-l6-int8", 1)
    cached = br.CachedModel(br.real_model("minilm-l6-int8", 1), br.VectorCache(real.profile))
    queries = br.speed_queries(200)
    await cached.prefetch(queries, "speed queries")
    print(f"# vector_prescan --pairs: {n} entries, {len(queries)} queries x {rounds} rounds, load {br.load()}\n")
    print("| search | exact scan p50 / p95 ms | prescan p50 / p95 ms | CPU ms p50, exact / prescan | load at start |")
    print("|---|---|---|---|---|")
    async with memstone.open_service(f"sqlite:///{store}", embedding=real) as svc:
        head = await svc.head(memory_id)
        default = svc.backend.rerank_depth
        for label, mode, model in (
            ("hybrid", "hybrid", real),
            ("vector", "vector", real),
            ("hybrid index only", "hybrid", cached),
            ("vector index only", "vector", cached),
        ):
            svc.indexer.model = model
            lat: dict[int, list[float]] = {0: [], default: []}
            cpu: dict[int, list[float]] = {0: [], default: []}  # the process's CPU time: every thread of it
            started = br.load()
            for q in queries[:10]:  # warm both
                for depth in lat:
                    svc.backend.rerank_depth = depth
                    await svc.search(q, memories=[head], limit=br.LIMIT, mode=mode)
            for r in range(rounds):
                for i, q in enumerate(queries):
                    for depth in (0, default) if (i + r) % 2 == 0 else (default, 0):
                        svc.backend.rerank_depth = depth
                        t, c = time.perf_counter(), time.process_time()
                        await svc.search(q, memories=[head], limit=br.LIMIT, mode=mode)
                        lat[depth].append((time.perf_counter() - t) * 1000)
                        cpu[depth].append((time.process_time() - c) * 1000)
            cells = [f"{statistics.median(v):.2f} / {br.pct(v, 0.95):.2f}" for v in (lat[0], lat[default])]
            used = f"{statistics.median(cpu[0]):.2f} / {statistics.median(cpu[default]):.2f}"
            print(f"| {label} | {cells[0]} | {cells[1]} | {used} | {started} |", flush=True)
        svc.backend.rerank_depth = default
    print(f"\nrerank_depth {default}; load at end {br.load()}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--entries", type=int, default=100_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--pairs", action="store_true", help="time whole searches, exact scan and prescan in turn")
    ap.add_argument("--rounds", type=int, default=2, help="--pairs: passes over the queries")
    args = ap.parse_args()
    if args.pairs:
        asyncio.run(pairs(args.entries, args.rounds))
        return
    t0 = time.perf_counter()
    index, n = speed_index(args.entries)
    qs = query_vectors()
    dev, held = qs[0::2], qs[1::2]
    kmax = max(KS)
    exact = {id(q): [r for _, r in index.nearest(q, kmax, 0)] for q in qs}
    print(f"# vector_prescan: {n} rows, {len(dev)} dev + {len(held)} held-out queries, load {br.load()}")
    print(f"index built in {time.perf_counter() - t0:.1f} s; resident arrays: {resident(index)}\n")
    results = []
    for depth in DEPTHS:
        row: dict[str, object] = {"rerank_depth": depth}
        for k in KS:
            for half, name in ((dev, "dev"), (held, "held")):
                r = recall(index, half, k, depth, [exact[id(q)] for q in half])
                row[f"{name}_r@{k}"] = statistics.mean(r)
                row[f"{name}_min_r@{k}"] = min(r)
        results.append(row)
    k = KS[1]
    fitted = next(
        (r["rerank_depth"] for r in results if r[f"dev_r@{KS[0]}"] >= DEV_RECALL10 and r[f"dev_r@{k}"] >= DEV_RECALL_K),
        None,
    )
    print(
        "| rerank depth | rows reranked (k 120) | index p50 ms (k 120) | "
        + " | ".join(f"R@{kk} dev / held-out (min)" for kk in KS)
        + " |"
    )
    print("|---" * (3 + len(KS)) + "|")
    for r in [{"rerank_depth": 0}, *results]:
        depth = int(r["rerank_depth"])  # type: ignore[call-overload]
        p50, reranked = timed(index, held, k, depth, args.runs)
        cells = [
            "exact scan" if depth == 0 else str(depth) + (" (fitted)" if depth == fitted else ""),
            f"{reranked:.0f}",
            f"{p50:.2f}",
        ]
        for kk in KS:
            cells.append(
                "1 / 1"
                if depth == 0
                else f"{r[f'dev_r@{kk}']:.4f} / {r[f'held_r@{kk}']:.4f} ({r[f'held_min_r@{kk}']:.2f})"
            )
        print("| " + " | ".join(cells) + " |")
    print(
        f"\nfitted on dev (R@{KS[0]} >= {DEV_RECALL10}, R@{k} >= {DEV_RECALL_K}): rerank_depth {fitted}; "
        f"load {br.load()}"
    )
    print(json.dumps({"entries": n, "fitted": fitted, "results": results}))


def resident(index: VectorIndex) -> str:
    parts = {
        "float32 matrix": index._buf[: index._n].nbytes,
        "codes": index._codes[: index._n].nbytes,
        "rowids + alive": index._n * 9,
    }
    rss = int(Path("/proc/self/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    return ", ".join(f"{k} {v / 1e6:.1f} MB" for k, v in parts.items()) + f" (process RSS {rss / 1e6:.0f} MB)"


if __name__ == "__main__":
    main()
