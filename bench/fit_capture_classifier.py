"""Fit capture's learned junk screens on the dev labels: ``python bench/fit_capture_classifier.py [--text | --model P]
[--lopo] [--write]``.

``--text``: the model-free screen (:mod:`memstone.capture.junk_text`): hashed character and word n-grams and the
structural and rule-cue features of each line, an L2 logistic regression fitted in its dual (one n x n Newton
system per step, n the lines), each line the rules admit weighted ``ADMITTED_WEIGHT`` (the screen only sees those);
L2 (``TEXT_L2_GRID``) and threshold (``TEXT_KEEP_LOSS`` of the admitted lines worth keeping) nested as below;
``--write`` writes ``src/memstone/capture/data/junk-text.json``. Without ``--text``, the screen over embeddings:

Data: every ``user_prompt`` line of the dev part (``bench/data/capture/*.jsonl``) except secret lines (refused
before admission), labelled junk when ``should_store`` is false. The held-out part is never read (a ``--data`` path
naming it is refused). Features: the line's unit vector from the embedding profile ``--model`` and the four
structural features of :func:`memstone.capture.junk_model.structure`. Model: L2 logistic regression (Newton steps
in numpy); the structural and embedding features are standardized with the training mean and scale.

Both tuned numbers are fitted inside the training data only, by grouped cross-validation over its projects
(``INNER_FOLDS`` folds): the L2 strength (lowest out-of-fold log loss over ``L2_GRID``) and the threshold (the
lowest p(junk) that drops at most ``KEEP_LOSS`` of the out-of-fold statements worth keeping).

``--lopo``: leave-one-project-out on dev, honest because of the nesting above: for each dev project, fit on the
other 27 and run that project's lines through :func:`memstone.capture.capture` with the model loaded and the fold's
weights (the capture benchmark's own run and figures), then print the benchmark's figures per language next to
the same run without the screen. ``--write``: fit on all of dev and write
``src/memstone/capture/data/junk-<profile>.json`` with the profile id and the training commit.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# One BLAS thread: on this shared 2-core machine the threaded Newton steps were 10x slower (9.4 s -> 0.96 s a fit).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np
from bench_capture import LANG_KEYS, evaluate, lang_of, run_project

from memstone.capture.admission import admit
from memstone.capture.events import UserPrompt
from memstone.capture.junk_model import SCREENED_ORIGINS, STRUCTURE_NAMES, JunkClassifier, structure
from memstone.capture.junk_text import CUE_NAMES, HASH_SIZE, TextJunkClassifier
from memstone.capture.junk_text import features as text_features
from memstone.capture.nearness import semantic_key
from memstone.capture.pipeline import CapturePipeline
from memstone.capture.statements import statement_candidates
from memstone.capture.vector_cache import VectorCache
from memstone.embedding import load_model

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
L2_GRID = (30.0, 100.0, 300.0)
TEXT_L2_GRID = (0.003, 0.01, 0.03, 0.1)  # the model-free screen: each line's n-gram part has norm 1
INNER_FOLDS = 4
KEEP_LOSS = 0.01  # at most 1 % of the statements worth keeping dropped, out of fold
TEXT_KEEP_LOSS = 0.02  # the model-free screen: at most 2 % of the admitted lines worth keeping, out of fold
# The model-free screen only ever sees lines the rules admit; their weight in the loss (the rest: 1). Picked among
# 1, 3, 10, 30 by a 6-fold grouped cross-validation on all dev (not nested: stated in docs/capture.md).
ADMITTED_WEIGHT = 10.0


def dev_rows(data: Path) -> list[dict[str, object]]:
    if "heldout" in str(data.resolve()):
        raise SystemExit(f"{data}: the held-out part is never used for fitting")
    rows = []
    for f in sorted(data.glob("*.jsonl")):
        for line in f.read_text("utf-8").splitlines():
            row = json.loads(line) if line.strip() else None
            if row and row["event"] == "user_prompt" and row["label"]["class"] != "secret":
                rows.append(row)
    return rows


async def embed(profile: str, texts: list[str]) -> np.ndarray:
    model = load_model(profile)
    out: list[tuple[float, ...]] = []
    for i in range(0, len(texts), 64):
        out.extend((await model.embed(tuple(texts[i : i + 64]))).vectors)
    return np.asarray(out, dtype=np.float64)


def features(vectors: np.ndarray, texts: list[str]) -> np.ndarray:
    return np.hstack([vectors, np.asarray([structure(t) for t in texts], dtype=np.float64)])


def fit(
    x: np.ndarray, y: np.ndarray, l2: float, start: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """Mean, scale, weights and bias of an L2 logistic regression (bias not penalised), by Newton steps from
    ``start`` (weights and bias of a neighbouring fit: the optimum is unique, a warm start only saves steps)."""
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale < 1e-9] = 1.0
    z = np.hstack([(x - mean) / scale, np.ones((len(x), 1))])
    w = np.zeros(z.shape[1]) if start is None else start.copy()
    penalty = np.full(z.shape[1], l2)
    penalty[-1] = 0.0
    for _ in range(30):
        p = 1.0 / (1.0 + np.exp(-np.clip(z @ w, -30, 30)))
        grad = z.T @ (p - y) + penalty * w
        hess = (z * (p * (1 - p))[:, None]).T @ z + np.diag(penalty + 1e-9)
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-5:
            break
    return mean, scale, w[:-1], float(w[-1])


def predict(model: tuple[np.ndarray, np.ndarray, np.ndarray, float], x: np.ndarray) -> np.ndarray:
    mean, scale, w, b = model
    return 1.0 / (1.0 + np.exp(-np.clip(((x - mean) / scale) @ w + b, -30, 30)))


def choose(x: np.ndarray, y: np.ndarray, groups: np.ndarray) -> tuple[float, float]:
    """The L2 strength and the threshold, from grouped out-of-fold predictions inside (x, y) only."""
    projects = sorted(set(groups.tolist()))
    fold_of = {p: i % INNER_FOLDS for i, p in enumerate(projects)}
    folds = np.asarray([fold_of[g] for g in groups.tolist()])
    best: tuple[float, float, np.ndarray] | None = None
    warm: dict[int, np.ndarray] = {}
    for l2 in L2_GRID:
        oof = np.zeros(len(y))
        for k in range(INNER_FOLDS):
            test = folds == k
            model = fit(x[~test], y[~test], l2, warm.get(k))
            warm[k] = np.append(model[2], model[3])
            oof[test] = predict(model, x[test])
        loss = float(-np.mean(y * np.log(oof + 1e-12) + (1 - y) * np.log(1 - oof + 1e-12)))
        if best is None or loss < best[1]:
            best = (l2, loss, oof)
    assert best is not None
    l2, _, oof = best
    keep = np.sort(oof[y == 0])  # p(junk) of the statements worth keeping
    allowed = int(np.floor(KEEP_LOSS * len(keep)))
    threshold = float(keep[len(keep) - allowed - 1]) + 1e-6 if allowed < len(keep) else 0.5
    return l2, min(max(threshold, 0.05), 0.999)


def classifier(profile: str, x: np.ndarray, y: np.ndarray, groups: np.ndarray, commit: str) -> JunkClassifier:
    l2, threshold = choose(x, y, groups)
    mean, scale, w, b = fit(x, y, l2)
    return JunkClassifier(
        profile_id=profile,
        dimension=x.shape[1] - len(STRUCTURE_NAMES),
        weights=tuple(round(float(v), 6) for v in w),
        mean=tuple(round(float(v), 6) for v in mean),
        scale=tuple(round(float(v), 6) for v in scale),
        bias=round(b, 6),
        threshold=round(threshold, 6),
        l2=l2,
        commit=commit,
        trained_on=f"bench/data/capture: {len(y)} user_prompt lines ({int(y.sum())} junk), "
        f"{len(set(groups.tolist()))} projects",
    )


# ================================================================ the model-free screen (junk_text.py), --text
def text_matrix(texts: list[str]) -> np.ndarray:
    """One row per text: the hashed n-grams (HASH_SIZE columns) and the cues, as the package computes them."""
    x = np.zeros((len(texts), HASH_SIZE + len(CUE_NAMES)), dtype=np.float32)
    for i, t in enumerate(texts):
        grams, cues = text_features(t)
        x[i, list(grams)] = list(grams.values())
        x[i, HASH_SIZE:] = cues
    return x


def kernel_fit(
    k: np.ndarray, y: np.ndarray, l2: float, weight: np.ndarray, start: np.ndarray | None = None
) -> np.ndarray:
    """Dual weights ``a`` of a weighted L2 logistic regression in the primal ``w = X^T a``, bias ``sum(a)`` (``k``
    is ``X X^T + 1``: the bias is a constant feature 1, penalised like the others; ``weight`` each line's weight in
    the loss). Newton steps: the gradient in ``a`` is ``K g`` with ``g = weight (p - y) + l2 a``, the Hessian
    ``K (weight W K + l2 I)``, so each step solves an n x n system, n the number of lines, not the 16k features."""
    a = np.zeros(len(y)) if start is None else start.copy()
    eye = np.eye(len(y))
    for _ in range(40):
        p = 1.0 / (1.0 + np.exp(-np.clip(k @ a, -30, 30)))
        g = weight * (p - y) + l2 * a
        step = np.linalg.solve((weight * p * (1 - p))[:, None] * k + l2 * eye, g)
        a -= step
        if np.abs(step).max() < 1e-6:
            break
    return a


def screened_texts(text: str) -> list[str]:
    """The texts the screen is asked about for one user line: its statements the rules admit (cleaned, split and
    stripped of leads as capture does: "Build log:" and the line breaks of a pasted log are gone by then)."""
    out = []
    for c in statement_candidates(UserPrompt(text=text)).candidates:
        if c.origin in SCREENED_ORIGINS and admit(c, evidence=dict.fromkeys(c.evidence, text)).admitted:
            out.append(c.text)
    return out


def text_choose(k: np.ndarray, y: np.ndarray, groups: np.ndarray, admitted: np.ndarray) -> tuple[float, float]:
    """The L2 strength and the threshold of the model-free screen, from grouped out-of-fold predictions inside
    (k, y) only (as :func:`choose`); the threshold drops at most ``TEXT_KEEP_LOSS`` of the out-of-fold lines worth
    keeping that the rules admit."""
    projects = sorted(set(groups.tolist()))
    fold_of = {p: i % INNER_FOLDS for i, p in enumerate(projects)}
    folds = np.asarray([fold_of[g] for g in groups.tolist()])
    weight = np.where(admitted, ADMITTED_WEIGHT, 1.0)
    best: tuple[float, float, np.ndarray] | None = None
    for l2 in TEXT_L2_GRID:
        oof = np.zeros(len(y))
        for f in range(INNER_FOLDS):
            test = folds == f
            a = kernel_fit(k[np.ix_(~test, ~test)], y[~test], l2, weight[~test])
            oof[test] = 1.0 / (1.0 + np.exp(-np.clip(k[np.ix_(test, ~test)] @ a, -30, 30)))
        losses = -(y * np.log(oof + 1e-12) + (1 - y) * np.log(1 - oof + 1e-12))
        loss = float(np.sum(weight * losses) / np.sum(weight))
        if best is None or loss < best[1]:
            best = (l2, loss, oof)
    assert best is not None
    l2, _, oof = best
    keep = np.sort(oof[(y == 0) & admitted])
    allowed = int(np.floor(TEXT_KEEP_LOSS * len(keep)))
    threshold = float(keep[len(keep) - allowed - 1]) + 1e-6 if allowed < len(keep) else 0.5
    return l2, min(max(threshold, 0.05), 0.999)


def text_classifier(
    x: np.ndarray, y: np.ndarray, groups: np.ndarray, admitted: np.ndarray, commit: str
) -> TextJunkClassifier:
    k = (x.astype(np.float64) @ x.T.astype(np.float64)) + 1.0
    l2, threshold = text_choose(k, y, groups, admitted)
    a = kernel_fit(k, y, l2, np.where(admitted, ADMITTED_WEIGHT, 1.0))
    w = x.T.astype(np.float64) @ a
    return TextJunkClassifier(
        hash_size=HASH_SIZE,
        weights=tuple(round(float(v), 5) for v in w),
        bias=round(float(a.sum()), 6),
        threshold=round(threshold, 6),
        l2=l2,
        commit=commit,
        trained_on=f"bench/data/capture: {len(y)} texts of user_prompt lines ({int(y.sum())} junk; "
        f"{int(admitted.sum())} admitted by the rules, {int((admitted & (y == 1)).sum())} of them junk, "
        f"weight {ADMITTED_WEIGHT:g}), "
        f"{len(set(groups.tolist()))} projects",
    )


async def text_lopo(args: argparse.Namespace, x: np.ndarray, y: np.ndarray, groups: np.ndarray) -> None:
    """Leave-one-project-out for the model-free screen: no model, rules only against rules + the fold's screen."""
    files = {f.stem: f for f in sorted(Path(args.data).glob("*.jsonl"))}
    runs: dict[str, list[dict[str, object]]] = {"rules only": [], "rules + text screen": []}
    dropped = np.zeros(len(y), dtype=bool)
    with tempfile.TemporaryDirectory(prefix="memstone-capjunk-") as tmp:
        for name, path in files.items():
            project = json.loads(path.read_text("utf-8").splitlines()[0])["project"]
            test = groups == project
            t0 = time.perf_counter()
            clf = text_classifier(x[~test], y[~test], groups[~test], args.admitted[~test], "lopo")
            texts = [t for t, m in zip(args.texts, test, strict=True) if m]
            dropped[test] = np.asarray([clf.probability(t) for t in texts]) >= clf.threshold
            for label, screen in (("rules only", None), ("rules + text screen", clf)):
                work = Path(tmp) / label.replace(" ", "_").replace("+", "p") / name
                work.mkdir(parents=True)
                pipeline = CapturePipeline(vector_cache=VectorCache(), junk_screen=screen is not None,
                                           text_classifier=screen)  # fmt: skip
                runs[label].append(await run_project(path, work, None, pipeline=pipeline))
            print(f"  {name}: l2 {clf.l2:g}, threshold {clf.threshold:.3f}, {time.perf_counter() - t0:.0f} s",
                  file=sys.stderr)  # fmt: skip
    report(args, "none (model-free screen)", dropped, y, runs)


def head_commit() -> str:
    out = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True, check=False)
    return out.stdout.strip()


async def lopo(args: argparse.Namespace, x: np.ndarray, y: np.ndarray, groups: np.ndarray) -> None:
    files = {f.stem: f for f in sorted(Path(args.data).glob("*.jsonl"))}
    runs: dict[str, list[dict[str, object]]] = {"rules only": [], "rules + screen": []}
    dropped = np.zeros(len(y), dtype=bool)  # the screen alone, line level: p(junk) >= the fold's threshold
    with tempfile.TemporaryDirectory(prefix="memstone-capml-") as tmp:
        for name, path in files.items():
            project = json.loads(path.read_text("utf-8").splitlines()[0])["project"]
            test = groups == project
            clf = classifier(args.model, x[~test], y[~test], groups[~test], "lopo")
            dropped[test] = (
                np.asarray(
                    [
                        clf.probability(tuple(v[: clf.dimension]), t)
                        for v, t in zip(x[test], np.asarray(args.texts)[test], strict=True)
                    ]
                )
                >= clf.threshold
            )
            t0 = time.perf_counter()
            for label, screen in (("rules only", None), ("rules + screen", clf)):
                work = Path(tmp) / label.replace(" ", "_").replace("+", "p") / name
                work.mkdir(parents=True)
                pipeline = CapturePipeline(vector_cache=VectorCache(), junk_screen=screen is not None,
                                           junk_classifier=screen)  # fmt: skip
                runs[label].append(await run_project(path, work, args.model, pipeline=pipeline))
            print(f"  {name}: l2 {clf.l2:g}, threshold {clf.threshold:.3f}, {time.perf_counter() - t0:.0f} s",
                  file=sys.stderr)  # fmt: skip
    report(args, args.model, dropped, y, runs)


def report(
    args: argparse.Namespace, model: str, dropped: np.ndarray, y: np.ndarray, runs: dict[str, list[dict[str, object]]]
) -> None:
    """The LOPO figures: the screen alone per line and language, then the capture benchmark's per run."""
    keep = np.asarray([c in ("explicit", "correction") for c in args.classes])
    print(
        f"\n=== LOPO on dev, {model}, the screen alone per text (each admitted statement of a line, else the line) ==="
    )
    for lang in ["all", *sorted(set(args.langs))]:
        m = np.ones(len(y), dtype=bool) if lang == "all" else np.asarray(args.langs) == lang
        print(
            f"  {lang:>4}: junk lines dropped {int((dropped & m & (y == 1)).sum())}/{int((m & (y == 1)).sum())}, "
            f"explicit + correction lines dropped {int((dropped & m & keep).sum())}/{int((m & keep).sum())}"
        )
    for label, projects in runs.items():
        result = evaluate(projects)
        langs = sorted({lang_of(lr.row) for p in projects for lr in p["lines"]})  # type: ignore[attr-defined]
        print(f"\n=== LOPO on dev, {model}, {label} ===")
        print(
            f"  junk {result['junk_rate']:.1%} ({result['junk_entries']}/{result['entries_created']}), "
            f"explicit + correction recall {result['explicit_correction_recall']:.1%} of "
            f"{result['explicit_correction_lines']}, recall {result['recall']:.1%}, "
            f"duplicates {result['duplicates_created']}/{result['restatements']}, "
            f"corrections revised {result['corrections_revised_target']}/{result['corrections_of_entries']}"
        )
        print("  " + "".join(f"{t:>14}" for t in ("lang", *(k for k, _ in LANG_KEYS[:4]))))
        for lang in langs:
            r = evaluate(projects, lang)
            print(
                "  "
                + "".join(
                    f"{c:>14}"
                    for c in (
                        lang,
                        r["lines"],
                        f"{r['explicit_correction_recall']:.1%}/{r['explicit_correction_lines']}",
                        f"{r['recall']:.1%}",
                        f"{r['junk_rate']:.1%} ({r['junk_entries']}/{r['entries_created']})",
                    )
                )
            )
        if args.verbose:
            for key in ("junk", "misses"):
                for item in result[key]:  # type: ignore[attr-defined]
                    print(f"    {key}: {item}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(HERE / "data" / "capture"), help="the dev part (never the held-out)")
    parser.add_argument("--model", default="use-multilingual-v3", help="embedding profile (use-multilingual-v3)")
    parser.add_argument("--lopo", action="store_true", help="leave-one-project-out estimate through capture()")
    parser.add_argument("--write", action="store_true", help="fit on all dev, write the package's weights file")
    parser.add_argument("--text", action="store_true", help="the model-free screen (junk_text.py), not --model's")
    parser.add_argument("-v", "--verbose", action="store_true", help="list the LOPO junk and misses")
    args = parser.parse_args()
    rows = dev_rows(Path(args.data))
    y = np.asarray([0.0 if r["label"]["should_store"] else 1.0 for r in rows])  # type: ignore[index]
    groups = np.asarray([str(r["project"]) for r in rows])
    args.langs = [lang_of(r) for r in rows]
    args.classes = [str(r["label"]["class"]) for r in rows]  # type: ignore[index]
    commit = head_commit()
    if args.text:
        # One sample per text the screen would judge (each admitted statement of a line), or the line itself when
        # the rules admit none of it (those teach what junk reads like; weight 1).
        samples = [(i, t, True) for i, r in enumerate(rows) for t in screened_texts(str(r["text"]))]
        admitted_rows = {i for i, _, _ in samples}
        samples += [(i, str(r["text"]), False) for i, r in enumerate(rows) if i not in admitted_rows]
        samples.sort(key=lambda s: s[0])
        index = np.asarray([i for i, _, _ in samples])
        y, groups = y[index], groups[index]
        args.texts = [t for _, t, _ in samples]
        args.admitted = np.asarray([a for _, _, a in samples])
        args.langs = [args.langs[i] for i in index]
        args.classes = [args.classes[i] for i in index]
        x = text_matrix(args.texts)
        print(
            f"{len(rows)} dev user_prompt lines, {len(samples)} texts ({int(args.admitted.sum())} admitted by the "
            f"rules, {int((args.admitted & (y == 1)).sum())} of them junk), {int(y.sum())} junk, "
            f"{len(set(groups.tolist()))} projects, {HASH_SIZE} hashed + {len(CUE_NAMES)} cue features (no model)"
        )
        if args.lopo:
            asyncio.run(text_lopo(args, x, y, groups))
        if args.write:
            text_clf = text_classifier(x, y, groups, args.admitted, commit)
            out = ROOT / "src" / "memstone" / "capture" / "data" / "junk-text.json"
            out.write_text(json.dumps(text_clf.to_dict(), separators=(",", ":")) + "\n", "utf-8")
            print(f"wrote {out.relative_to(ROOT)}: l2 {text_clf.l2:g}, threshold {text_clf.threshold:.4f}, "
                  f"commit {commit[:12]}, {out.stat().st_size} bytes")  # fmt: skip
        return
    texts = [semantic_key(str(r["text"])) for r in rows]  # the text capture screens (cleaned, spaces collapsed)
    x = features(asyncio.run(embed(args.model, texts)), texts)
    args.texts = texts
    print(f"{len(rows)} dev user_prompt lines, {int(y.sum())} junk, {len(set(groups.tolist()))} projects, "
          f"{x.shape[1]} features ({args.model})")  # fmt: skip
    if args.lopo:
        asyncio.run(lopo(args, x, y, groups))
    if args.write:
        clf = classifier(args.model, x, y, groups, commit)
        out = ROOT / "src" / "memstone" / "capture" / "data" / f"junk-{args.model}.json"
        out.parent.mkdir(exist_ok=True)
        out.write_text(json.dumps(clf.to_dict(), separators=(",", ":")) + "\n", "utf-8")
        print(f"wrote {out.relative_to(ROOT)}: l2 {clf.l2:g}, threshold {clf.threshold:.4f}, commit {commit[:12]}")


if __name__ == "__main__":
    main()
