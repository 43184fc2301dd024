"""Leaving common terms out of SQLite's candidate MATCH (issue 15): fit, held-out check and speed.

    PYTHONPATH=src nice .venv/bin/python bench/fts_prune.py [--shares 0.005,0.01,0.02,0.05] [--speed-runs 3]
        [--distractors 100000]

``memstone.backends.sqlite.fts.COMMON_SHARE`` is the share of indexed rows above which a query term is
"common" (1.0: nothing is, the search as before). With no model (stores built with ``embedding=None``, so
``search(mode="fts")`` is the lexical channel that ``auto``/``hybrid`` fuse), for every family of
``bench/families.py`` and every candidate share:

1. **fit** on the dev halves: R@10 and MRR@10 of ``fts``; the chosen share is the one with the lowest CPU p50 at
   100k among those whose dev R@10 and MRR stay within 0.005 of 1.0's on every family and whose top-10 lists on
   the 100k speed store (the speed queries, which have no gold) agree at >= 0.99 with 1.0's;
2. **held-out** halves: R@10 and MRR@10 at 1.0 and at the chosen share, with the top-10 agreement
   (|pruned top 10 and unpruned top 10| / |unpruned top 10|) and how many top-10 lists differ at all;
3. **speed** on the ``--speed-models none`` stores of ``bench_retrieval.py`` (run that first: it builds them),
   10k and 100k, the 200 speed queries: passes alternating 1.0 and the chosen share in one process, thread CPU
   and wall p50 / p95 per size, the load average beside them, and the top-10 agreement with 1.0.
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
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_retrieval as br
import families as fm

import memstone
from memstone.backends.sqlite import fts

OFF = 1.0
TOLERANCE = 0.005  # what the dev halves may lose against OFF, per family, on R@10 and MRR@10
AGREEMENT = 0.99  # and the least top-10 agreement with OFF on the 100k speed queries (they have no gold)


def agreement(a: list[list[str]], b: list[list[str]]) -> float:
    """Mean |a top 10 and b top 10| / |b top 10| (1 when b is empty)."""
    return statistics.mean(
        len(set(x[:10]) & set(y[:10])) / len(y[:10]) if y else 1.0 for x, y in zip(a, b, strict=True)
    )


def differ(a: list[list[str]], b: list[list[str]]) -> int:
    return sum(x[:10] != y[:10] for x, y in zip(a, b, strict=True))


async def quality(fams: list[fm.Family], shares: list[float]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for fam in fams:
        path, memories, entries = await fm.session_store(fam.qset, None)
        async with memstone.open_service(f"sqlite:///{path}", embedding=None) as svc:
            heads = {g: await svc.head(m) for g, m in memories.items()}
            for half in ("dev", "heldout"):
                qs = [q for q in fam.queries if fam.splits[q.qid] == half]
                if not qs:
                    continue
                for share in shares:
                    fts.COMMON_SHARE = share
                    ranked, _ = await br.run_queries(svc, heads, entries, qs, "fts")
                    s = br.score(ranked, qs)
                    out[f"{fam.name}|{half}|{share}"] = {
                        "r10": s.r10,
                        "mrr": s.mrr,
                        "n": len(qs),
                        "ranked": ranked,
                    }
        br.log(f"  {fam.name}: done")
    fts.COMMON_SHARE = OFF
    return out


def speed_store(n: int) -> tuple[Path, str]:
    texts = br.speed_texts(n)
    fp = br.fingerprint([br.BUILD_VERSION, n, texts[:n]])
    path = br.CACHE / f"speed-none-{n}-{fp}.db"
    if not path.with_suffix(".json").exists():
        raise SystemExit(f"no {path}: run bench_retrieval.py --parts speed --speed-models none first")
    return path, json.loads(path.with_suffix(".json").read_text())["memory_id"]


async def speed(sizes: list[int], shares: list[float], runs: int) -> list[dict[str, Any]]:
    queries = br.speed_queries(200)
    rows = []
    for n in sizes:
        path, memory_id = speed_store(n)
        cpu: dict[float, list[float]] = {s: [] for s in shares}
        wall: dict[float, list[float]] = {s: [] for s in shares}
        tops: dict[float, list[list[str]]] = {s: [] for s in shares}
        loads = []
        async with memstone.open_service(f"sqlite:///{path}", embedding=None) as svc:
            head = await svc.head(memory_id)
            for share in shares:  # warm both paths (and the term counts)
                fts.COMMON_SHARE = share
                for q in queries:
                    await svc.search(q, memories=[head], limit=br.LIMIT, mode="fts")
            for run in range(runs):
                for share in shares if run % 2 == 0 else shares[::-1]:
                    fts.COMMON_SHARE = share
                    loads.append(os.getloadavg()[0])
                    for q in queries:
                        t, c = time.perf_counter(), time.thread_time()
                        res = await svc.search(q, memories=[head], limit=br.LIMIT, mode="fts")
                        cpu[share].append((time.thread_time() - c) * 1000)
                        wall[share].append((time.perf_counter() - t) * 1000)
                        if run == 0:
                            tops[share].append([h.entry_id for h in res.hits])
        fts.COMMON_SHARE = OFF
        for share in shares:
            rows.append(
                {
                    "entries": n,
                    "share": share,
                    "cpu_p50": statistics.median(cpu[share]),
                    "cpu_p95": br.pct(cpu[share], 0.95),
                    "wall_p50": statistics.median(wall[share]),
                    "wall_p95": br.pct(wall[share], 0.95),
                    "agree10": agreement(tops[share], tops[OFF]),
                    "load": f"{min(loads):.1f}-{max(loads):.1f}",
                }
            )
            br.log(f"  speed {n} share {share}: cpu p50 {rows[-1]['cpu_p50']:.2f} ms")
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shares", default="0.005,0.01,0.02,0.05")
    ap.add_argument("--dialogues", default="211-360")
    ap.add_argument("--speed-runs", type=int, default=3)
    ap.add_argument("--distractors", type=int, default=0, help="also paraphrase+<n> (n MemoryCode turns added)")
    ap.add_argument("--json", dest="json_out")
    args = ap.parse_args()
    shares = [OFF] + [float(x) for x in args.shares.split(",") if x]
    print(f"# fts_prune: {' '.join(sys.argv[1:])}\n\n{br.machine()}\n")
    span, _, step = args.dialogues.partition(":")
    lo, _, hi = span.partition("-")
    fams = fm.load_families(list(range(int(lo), int(hi or lo) + 1, int(step or 1))))
    if args.distractors:  # a family whose store is large enough for the rule to trigger
        big = br.load_paraphrase(args.distractors)
        fams.append(fm.Family(big.name, big, big.queries, {q.qid: fm.note_split(min(q.gold)) for q in big.queries}))
    q = asyncio.run(quality(fams, shares))
    print("## Dev halves: fts R@10 / MRR@10 per share (top-10 agreement with 1.0; top-10 lists that differ)\n")
    head = ["family", "queries"] + [str(s) for s in shares]
    body = []
    ok: dict[float, bool] = {s: True for s in shares}
    for fam in fams:
        key = f"{fam.name}|dev|"
        if key + str(OFF) not in q:
            continue
        base = q[key + str(OFF)]
        cells = [fam.name, base["n"]]
        for s in shares:
            r = q[key + str(s)]
            ok[s] &= r["r10"] >= base["r10"] - TOLERANCE and r["mrr"] >= base["mrr"] - TOLERANCE
            agree, n_differ = agreement(r["ranked"], base["ranked"]), differ(r["ranked"], base["ranked"])
            cells.append(f"{r['r10']:.3f} / {r['mrr']:.3f} ({agree:.3f}; {n_differ})")
        body.append(cells)
    print(br.table(head, body))
    sp = asyncio.run(speed([100000], shares, 1))
    cpu = {r["share"]: r["cpu_p50"] for r in sp}
    agreed = {r["share"]: r["agree10"] for r in sp}
    fit = min((s for s in shares if ok[s] and agreed[s] >= AGREEMENT), key=lambda s: cpu[s])
    print("\n100k fts CPU p50 (top-10 agreement with 1.0) per share, 1 pass each: ", end="")
    print(", ".join(f"{s}: {cpu[s]:.2f} ms ({agreed[s]:.3f})" for s in shares))
    print(
        f"\n**Fitted share: {fit}** (lowest 100k CPU p50 among the shares within {TOLERANCE} on every dev family "
        f"and with a 100k top-10 agreement >= {AGREEMENT})\n"
    )
    print("## Held-out halves: fts R@10 / MRR@10 (top-10 agreement with 1.0; top-10 lists that differ)\n")
    body = []
    for fam in fams:
        key = f"{fam.name}|heldout|"
        if key + str(OFF) not in q:
            continue
        base, r = q[key + str(OFF)], q[key + str(fit)]
        body.append(
            [
                fam.name,
                base["n"],
                f"{base['r10']:.3f} / {base['mrr']:.3f}",
                f"{r['r10']:.3f} / {r['mrr']:.3f}",
                f"{agreement(r['ranked'], base['ranked']):.3f}",
                differ(r["ranked"], base["ranked"]),
            ]
        )
    print(br.table(["family", "queries", "1.0", str(fit), "top-10 agreement", "lists differing"], body))
    rows = asyncio.run(speed([10000, 100000], [OFF, fit], args.speed_runs))
    print(f"\n## FTS search speed, 200 speed queries x {args.speed_runs} passes, alternating (ms)\n")
    print(
        br.table(
            ["entries", "share", "cpu p50 / p95", "wall p50 / p95", "top-10 agreement", "load 1m"],
            [
                [
                    r["entries"],
                    r["share"],
                    f"{r['cpu_p50']:.2f} / {r['cpu_p95']:.2f}",
                    f"{r['wall_p50']:.2f} / {r['wall_p95']:.2f}",
                    f"{r['agree10']:.3f}",
                    r["load"],
                ]
                for r in rows
            ],
        )
    )
    if args.json_out:
        Path(args.json_out).write_text(json.dumps({"fit": fit, "speed": rows, "fit_speed": sp}, indent=1))


if __name__ == "__main__":
    main()
