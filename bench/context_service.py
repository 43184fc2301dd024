"""Neighbour context through the real service, on every family, dev and held-out halves (issue 15).

    nice .venv/bin/python bench/context_service.py [--models minilm-l6-int8] [--dialogues 211-360:5]

Opens the stores ``bench/bench_retrieval.py --parts families`` built and cached (``bench/.cache``; the same
dialogues are needed to find them) and runs every family's queries through ``search(limit=10)`` in every mode,
once with ``context=False`` and once with ``context=True`` (``domain/context.py``: the entries written next to
each of the first seven hits in the same Memory, looked up in the store). The calibration is the shipped one
(``CALIBRATIONS``). Cells: R@10 / MRR; the last column is the change of R@10 / MRR.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_retrieval as br
import families

import memstone


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", default="minilm-l6-int8")
    ap.add_argument("--dialogues", default="211-360:5")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--modes", default=",".join(families.MODES))
    args = ap.parse_args()
    span, _, step = args.dialogues.partition(":")
    lo, _, hi = span.partition("-")
    dialogues = list(range(int(lo), int(hi or lo) + 1, int(step or 1)))
    fams = families.load_families(dialogues)
    for model in args.models.split(","):
        real = br.real_model(model, args.threads)
        cached = br.CachedModel(real, br.VectorCache(real.profile))
        print(f"\n## Neighbour context through the service ({model}; limit=10; load at start {br.load()})\n")
        print("| family | half | n | mode | context off | context on | change |\n|---|---|---|---|---|---|---|")
        stores: dict[str, tuple[str, dict[str, str], dict[str, str]]] = {}
        t0 = time.perf_counter()
        for fam in fams:
            if fam.qset.name not in stores:
                if fam.by_session:
                    path, memories, entries = await families.session_store(fam.qset, cached)
                    stores[fam.qset.name] = (f"sqlite:///{path}", memories, entries)
                else:
                    stores[fam.qset.name] = await br.quality_store(fam.qset, cached)
            url, memories, entries = stores[fam.qset.name]
            await cached.prefetch(list({q.text for q in fam.queries}), f"{fam.name} queries")
            async with memstone.open_service(url, embedding=cached) as svc:
                heads = {g: await svc.head(m) for g, m in memories.items()}
                for half in ("dev", "heldout"):
                    qs = [q for q in fam.queries if fam.splits[q.qid] == half]
                    if not qs:
                        continue
                    for mode in args.modes.split(","):
                        cells = []
                        for context in (False, True):
                            ranked, _ = await br.run_queries(svc, heads, entries, qs, mode, context=context)
                            cells.append(br.score(ranked, qs))
                        off, on = cells
                        print(
                            f"| {fam.name} | {half} | {len(qs)} | {mode} | {off.r10:.3f} / {off.mrr:.3f} | "
                            f"{on.r10:.3f} / {on.mrr:.3f} | {on.r10 - off.r10:+.3f} / {on.mrr - off.mrr:+.3f} |",
                            flush=True,
                        )
            br.log(f"  {fam.name} done ({time.perf_counter() - t0:.0f} s, load {br.load()})")
        print(f"\nload at end {br.load()}, {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    asyncio.run(main())
