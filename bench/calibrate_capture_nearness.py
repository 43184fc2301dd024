"""Fit the weighted-overlap near-duplicate thresholds on the DEV part of the capture data only.

``python bench/calibrate_capture_nearness.py [--model use-multilingual-v3] [--half A|B] [--rule subject]``

Runs the whole dev part (``bench/data/capture``) through the real capture pipeline once per candidate threshold
of :mod:`memstone.capture.nearness` (lexical without ``--model``; weighted overlap + cosine with it) and prints,
per threshold, duplicates created, corrections that revised their entry, false merges and explicit + correction
recall. The chosen value is the lowest one whose false merges and recall equal those of the rule switched off
(threshold ∞), so the rule only ever adds correct merges on dev. It never reads ``bench/data/capture-heldout``.
Corrections and restatements are swept separately (the correction threshold with the restatement one off).
``--half A`` / ``--half B`` fit on half of the dev projects (alternate files), to see whether a value holds on
the other half.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_capture import run_part

from memstone.capture import nearness
from memstone.embedding import load_model
from memstone.ports import EmbeddingModel, EmbeddingProfile, EmbeddingResult

DEV = Path(__file__).resolve().parent / "data" / "capture"
INF = float("inf")


class CachedModel:
    """The named model with a per-text cache, so a sweep embeds each dev text once (vectors are deterministic)."""

    def __init__(self, inner: EmbeddingModel) -> None:
        self.inner = inner
        self.cache: dict[str, tuple[float, ...]] = {}

    @property
    def profile(self) -> EmbeddingProfile:
        return self.inner.profile

    def windows(self, text: str) -> tuple[str, ...]:
        return self.inner.windows(text)

    async def embed(self, texts: tuple[str, ...]) -> EmbeddingResult:
        missing = tuple(dict.fromkeys(t for t in texts if t not in self.cache))
        if missing:
            vectors = (await self.inner.embed(missing)).vectors
            self.cache.update(zip(missing, vectors, strict=True))
        return EmbeddingResult(vectors=tuple(self.cache[t] for t in texts))


_MODELS: dict[str, CachedModel] = {}


PROJECTS: list[str] = []  # --half: the dev projects of one half (empty: the whole dev part)


def dev_half(which: str) -> list[str]:
    """The dev projects of half ``A`` or ``B``: the sorted dev files taken alternately (a check that a value fitted
    on one half also holds on the other, since the dev part is small)."""
    files = sorted(DEV.glob("*.jsonl"))
    return [f.name for i, f in enumerate(files) if i % 2 == "AB".index(which)]


async def measure(model: str | None) -> dict[str, object]:
    cached = None
    if model is not None:
        cached = _MODELS.setdefault(model, CachedModel(load_model(model)))
    with tempfile.TemporaryDirectory(prefix="memstone-calibrate-") as tmp:
        data = DEV
        if PROJECTS:
            data = Path(tmp) / "data"
            data.mkdir()
            for name in PROJECTS:
                (data / name).symlink_to(DEV / name)
        run_dir = Path(tmp) / "run"
        run_dir.mkdir()
        _, result = await run_part(data, run_dir, cached)  # type: ignore[arg-type]
    return result


def set_thresholds(model: str | None, restate: float, correct: float) -> None:
    if model is None:
        nearness.LEXICAL_MIN, nearness.CORRECTION_MIN = restate, correct
    else:
        nearness.COMBINED_MIN[model], nearness.COMBINED_CORRECTION_MIN[model] = restate, correct


def row(label: str, r: dict[str, object]) -> str:
    merges = r["merges"]
    assert isinstance(merges, list)
    return (
        f"  {label:>9}  dups {r['duplicates_created']:>2}/{r['restatements']:<3} corrections revised "
        f"{r['corrections_revised_target']:>2}/{r['corrections_of_entries']:<3} false merges {len(merges):>2}  "
        f"e+c recall {float(r['explicit_correction_recall']):.3f}"  # type: ignore[arg-type]
    )


async def sweep_constant(module: object, name: str, model: str | None, grid: list[float]) -> float:
    """Sweep one threshold ``module.name`` over ``grid`` (the other thresholds as they are), print a row per value,
    and return the lowest value from which every higher one has no more false merges and no less recall than the
    rule switched off (∞). ``--rule subject`` sweeps ``nearness.SUBJECT_MIN``; calibrate_capture_changes.py the
    change thresholds."""
    setattr(module, name, INF)
    off = await measure(model)
    print(row("off", off))
    off_merges, base_recall = off["merges"], off["explicit_correction_recall"]
    assert isinstance(off_merges, list) and isinstance(base_recall, float)
    clean: dict[float, bool] = {}
    for t in grid:
        setattr(module, name, t)
        r = await measure(model)
        print(row(f"{t:.2f}", r))
        merges, recall = r["merges"], r["explicit_correction_recall"]
        assert isinstance(merges, list) and isinstance(recall, float)
        clean[t] = len(merges) <= len(off_merges) and recall >= base_recall
    ok = [t for t in grid if all(clean[u] for u in grid if u >= t)]
    chosen = min(ok) if ok else INF
    print(f"\nlowest clean {name}: {chosen}")
    return chosen


class _Slot:
    """One profile's value of a per-profile threshold table, set by :func:`sweep_constant` like a constant."""

    _table: dict[str, float]
    _key: str

    def __init__(self, table: dict[str, float], key: str) -> None:
        object.__setattr__(self, "_table", table)
        object.__setattr__(self, "_key", key)

    def __setattr__(self, name: str, value: float) -> None:
        self._table[self._key] = value


async def main_async(model: str | None, grid: list[float], rule: str = "weighted") -> None:
    print(f"dev part only ({DEV}{', projects ' + ', '.join(PROJECTS) if PROJECTS else ''}), model {model or 'none'}")
    if rule == "subject":
        await sweep_constant(nearness, "SUBJECT_MIN", model, grid)
        return
    if rule == "subject-cosine":  # seventh pass: the cosine two statements naming the same subject need
        if model is None:
            raise SystemExit("--rule subject-cosine needs --model")
        await sweep_constant(_Slot(nearness.SUBJECT_COSINE, model), "SUBJECT_COSINE", model, grid)
        return
    if rule == "token-cosine":  # the cosine two statements sharing a subject token need (SEMANTIC_THRESHOLDS)
        if model is None:
            raise SystemExit("--rule token-cosine needs --model")
        await sweep_constant(_Slot(nearness.SEMANTIC_THRESHOLDS, model), "SEMANTIC_THRESHOLDS", model, grid)
        return
    set_thresholds(model, INF, INF)
    off = await measure(model)
    print(row("off", off))
    off_merges, base_recall = off["merges"], off["explicit_correction_recall"]
    assert isinstance(off_merges, list) and isinstance(base_recall, float)
    base_merges = len(off_merges)
    chosen: dict[str, float] = {}
    # Without a model, restatements and corrections are swept apart (the other rule off); with a model (each run
    # embeds), one threshold serves both.
    for which in ("restatement", "correction") if model is None else ("both",):
        print(f"\n{which} threshold" + (" (the other off):" if model is None else ":"))
        clean: dict[float, bool] = {}
        for t in grid:
            restate = t if which in ("restatement", "both") else INF
            set_thresholds(model, restate, t if which in ("correction", "both") else INF)
            r = await measure(model)
            print(row(f"{t:.2f}", r))
            merges, recall = r["merges"], r["explicit_correction_recall"]
            assert isinstance(merges, list) and isinstance(recall, float)
            clean[t] = len(merges) <= base_merges and recall >= base_recall
        # The lowest value from which every higher value is clean too (no false merge, no recall lost).
        ok = [t for t in grid if all(clean[u] for u in grid if u >= t)]
        chosen[which] = min(ok) if ok else INF
    print(f"\nlowest clean thresholds: {chosen}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=None, help="embedding profile (default: none, the lexical rule)")
    parser.add_argument("--grid", help="thresholds to try, comma-separated (default: 0.10..0.40, or 0.64..1.20)")
    parser.add_argument("--half", choices=("A", "B"), help="fit on one half of the dev projects only")
    parser.add_argument(
        "--rule",
        choices=("weighted", "subject", "subject-cosine", "token-cosine"),
        default="weighted",
        help="subject: sweep SUBJECT_MIN (sixth pass); subject-cosine: SUBJECT_COSINE of --model (seventh pass); "
        "token-cosine: SEMANTIC_THRESHOLDS of --model",
    )
    args = parser.parse_args()
    if args.half:
        PROJECTS.extend(dev_half(args.half))
    if args.grid:
        grid = [float(x) for x in args.grid.split(",")]
    elif args.model is None:
        grid = [x / 100 for x in range(10, 42, 2)]
    else:
        grid = [x / 100 for x in range(64, 124, 4)]
    asyncio.run(main_async(args.model, grid, args.rule))


if __name__ == "__main__":
    main()
