"""Neighbour context, replayed offline on every family's cached channel lists (issue 15, what-if only).

    nice .venv/bin/python bench/bench_retrieval.py --parts nonsense --models minilm-l6-int8 --dialogues 211-360:5
    nice .venv/bin/python bench/context_replay.py bench/.cache/nonsense-minilm-l6-int8-<fingerprint>.pickle

The first command caches each real query's FTS and vector candidate lists (``bench/nonsense.py``); this script
fuses them as the service does (``convex_fuse`` with the model's calibration, hybrid mode) and compares, per
family and half, the plain ranking with two ways of adding the neighbours of a hit (the previous and the next
turn of the same conversation session; MemoryCode session notes, paraphrase and multilingual notes have none):

- ``smooth λ``: each turn's score plus λ times its best neighbour's (the variant measured in the last round);
- ``append after top k``: the top k hits in their order, then the unseen neighbours of those k, then the rest of
  the ranking, cut at the limit. Hits 1..k keep their ranks, so MRR changes only when the first gold is below k.

The cell is chosen on the dev halves only: the highest mean dev R@10 over the families among the cells that lose
at most 0.005 of MRR and of R@10 on every dev half; the held-out halves are printed beside it, never read.
"""

from __future__ import annotations

import pickle
import statistics
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_retrieval as br
import nonsense  # noqa: F401  (the pickle's Probe class)

from memstone.domain.search import admit_dense, convex_fuse
from memstone.indexing import CALIBRATIONS

Ranker = Callable[[list[tuple[str, float]], set[str]], list[str]]


def neighbours(unit: str) -> list[str]:
    """The previous and next turn of a conversation turn id (cDDD-sSSS-tTTT) in the same session."""
    head, _, t = unit.rpartition("-t")
    if not head or not t.isdigit():
        return []
    n = int(t)
    return [f"{head}-t{m:03d}" for m in (n - 1, n + 1) if m >= 0]


def base(scored: list[tuple[str, float]], units: set[str]) -> list[str]:
    return [u for u, _ in scored][: br.LIMIT]


def smooth(lam: float) -> Ranker:
    def rank(scored: list[tuple[str, float]], units: set[str]) -> list[str]:
        b = dict(scored)
        out = dict(b)
        for u, s in b.items():
            for n in neighbours(u):
                if n in units:
                    out[n] = max(out.get(n, 0.0), b.get(n, 0.0) + lam * s)
        return [u for u, _ in sorted(out.items(), key=lambda kv: (-kv[1], kv[0]))][: br.LIMIT]

    return rank


def append(k: int) -> Ranker:
    def rank(scored: list[tuple[str, float]], units: set[str]) -> list[str]:
        ranked = [u for u, _ in scored]
        out = list(ranked[:k])
        for u in ranked[:k]:
            out += [n for n in neighbours(u) if n in units and n not in out]
        out += [u for u in ranked[k:] if u not in out]
        return out[: br.LIMIT]

    return rank


def fused(p: Any, model: str) -> list[tuple[str, float]]:
    """The service's hybrid ranking of a probe, as (unit, score), best first, one row per unit."""
    cal = CALIBRATIONS[model]
    vec = admit_dense(
        p.lists.vector,
        floor=cal.vector_min_cosine,
        min_top=cal.prose_bar if p.prose else cal.vector_min_top,
        supported=p.lists.support[cal.support_prefix],
    )
    best: dict[str, float] = {}
    for f in convex_fuse(
        p.lists.fts,
        vec,
        vector_share=cal.share(),
        coverage_power=cal.coverage_power,
        cosine_floor=cal.vector_min_cosine,
    ):
        best.setdefault(p.units[f.candidate.entry_id], f.score)
    return list(best.items())


def main() -> None:
    path = Path(sys.argv[1])
    model = path.name.removeprefix("nonsense-").rsplit("-", 1)[0]
    probes = [p for p in pickle.loads(path.read_bytes()) if p.real]
    cells: dict[str, Ranker] = {"base": base}
    for lam in (0.05, 0.1, 0.2, 0.3, 0.5):
        cells[f"smooth {lam}"] = smooth(lam)
    for k in (1, 3, 5, 7, 8, 9):
        cells[f"append after top {k}"] = append(k)
    units: dict[int, set[str]] = {}
    res: dict[tuple[str, str, str], list[tuple[float, float]]] = {}
    for p in probes:
        pool = units.setdefault(id(p.units), set(p.units.values()))
        scored = fused(p, model)
        for name, rank in cells.items():
            r = rank(scored, pool)
            r10 = len(p.gold & set(r)) / len(p.gold)
            mrr = next((1 / (i + 1) for i, u in enumerate(r) if u in p.gold), 0.0)
            res.setdefault((name, p.family, p.half), []).append((r10, mrr))
    fams = sorted({p.family for p in probes})

    def m(name: str, fam: str, half: str, i: int) -> float:
        return statistics.mean(x[i] for x in res[(name, fam, half)])

    fit = []
    for name in cells:
        mean_r10 = statistics.mean(m(name, f, "dev", 0) for f in fams)
        worst = min(min(m(name, f, "dev", i) - m("base", f, "dev", i) for i in (0, 1)) for f in fams)
        fit.append((worst >= -0.005, mean_r10, worst, name))
    print(f"model {model}; dev fit: mean dev R@10 over {len(fams)} families, worst dev change of R@10 or MRR\n")
    print("| cell | mean dev R@10 | worst dev change | eligible |\n|---|---|---|---|")
    for ok, mean_r10, worst, name in sorted(fit, key=lambda x: (not x[0], -x[1])):
        print(f"| {name} | {mean_r10:.4f} | {worst:+.4f} | {'yes' if ok else 'no'} |")
    chosen = max((x for x in fit if x[0]), key=lambda x: x[1])[3]
    print(f"\nchosen on the dev halves: {chosen}\n")
    print("| family | half | queries | base R@10 / MRR | chosen R@10 / MRR | smooth 0.3 R@10 / MRR |")
    print("|---|---|---|---|---|---|")
    for f in fams:
        for half in ("dev", "heldout"):
            if ("base", f, half) not in res:
                continue
            cols = [f"{m(c, f, half, 0):.3f} / {m(c, f, half, 1):.3f}" for c in ("base", chosen, "smooth 0.3")]
            print(f"| {f} | {half} | {len(res[('base', f, half)])} | " + " | ".join(cols) + " |")


if __name__ == "__main__":
    main()
