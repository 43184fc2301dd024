"""Calibrate the semantic near-duplicate threshold on the DEV part of the capture data only.

``python bench/calibrate_capture_semantic.py [--model use-multilingual-v3]``

For every pair of should-store user lines of one project (secrets left out) it computes the cosine of their
vectors and the number of subject tokens they share, and splits the pairs into *related* (one restates or
corrects the other, by the labels) and *unrelated*. It prints, for thresholds from 0.50 to 0.80, how many related
pairs a rule "cosine ≥ t and ≥ 1 shared subject token" catches and how many unrelated pairs it would merge.
The threshold in ``memstone.capture.admission.SEMANTIC_THRESHOLDS`` is the lowest one with no unrelated pair.
``--rule subject`` (seventh pass) asks the same of "cosine ≥ t and the two name the same subject": a tool-like
name in prose (:func:`memstone.capture.subjects.same_tools`, either way) or a command, path or flag
(:func:`memstone.capture._text.typed_subjects`); that threshold is ``nearness.SUBJECT_COSINE``.
``--rule any`` asks it of "cosine ≥ t" alone, for the pairs that share no subject token (a rule restated in
another language); no such rule is set, since no threshold catches a pair cleanly on half A (docs/capture.md,
capdup2). ``--half A`` / ``--half B`` use one half of the dev projects only (the sorted files taken alternately, as
``calibrate_capture_nearness.py --half``).
It never reads ``bench/data/capture-heldout``.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
from pathlib import Path

from memstone.capture._text import subject_tokens, typed_subjects
from memstone.capture.subjects import same_tools
from memstone.embedding import load_model

DEV = Path(__file__).resolve().parent / "data" / "capture"


def related(a: dict[str, object], b: dict[str, object]) -> bool:
    la, lb = a["label"], b["label"]
    assert isinstance(la, dict) and isinstance(lb, dict)
    links = {la.get("duplicate_of"), la.get("revises")} - {None}
    links_b = {lb.get("duplicate_of"), lb.get("revises")} - {None}
    return a["seq"] in links_b or b["seq"] in links or bool(links & links_b)


def same_subject(a: str, b: str) -> bool:
    """Whether two statements name the same thing: a tool-like name (and no other of that kind) or a command,
    path or flag."""
    typed = {t for t in typed_subjects(a) & typed_subjects(b) if not t.startswith("tool:")}
    return same_tools(a, b) or same_tools(b, a) or bool(typed)


async def main_async(model_name: str, rule: str, half: str | None = None) -> None:
    model = load_model(model_name)
    by_project: dict[str, list[dict[str, object]]] = {}
    files = sorted(DEV.glob("*.jsonl"))
    for path in files if half is None else files["AB".index(half) :: 2]:
        for line in path.read_text("utf-8").splitlines():
            row = json.loads(line)
            label = row["label"]
            if label["should_store"] and row["role"] == "user" and not row.get("secrets"):
                by_project.setdefault(row["project"], []).append(row)
    pairs: list[tuple[float, int, bool]] = []
    for rows in by_project.values():
        vectors = (await model.embed(tuple(str(r["text"]) for r in rows))).vectors
        vec = {int(r["seq"]): v for r, v in zip(rows, vectors, strict=True)}  # type: ignore[call-overload]
        for a, b in itertools.combinations(rows, 2):
            cos = sum(x * y for x, y in zip(vec[int(a["seq"])], vec[int(b["seq"])], strict=True))  # type: ignore[call-overload]
            ta, tb = str(a["text"]), str(b["text"])
            shared = int(same_subject(ta, tb)) if rule == "subject" else len(subject_tokens(ta) & subject_tokens(tb))
            if rule == "any":  # only the pairs no token rule can see, all of them taken
                if shared:
                    continue
                shared = 1
            pairs.append((cos, shared, related(a, b)))
    n_rel = sum(1 for p in pairs if p[2])
    print(f"{model_name}: {len(pairs)} pairs of {len(by_project)} dev projects, {n_rel} related\n")
    condition = {"subject": "the same subject", "any": "no shared subject token"}.get(rule, "≥ 1 shared subject token")
    print(f"  threshold  related caught  unrelated merged   (cosine ≥ t and {condition})")
    for t in (0.40, 0.45, 0.50, 0.55, 0.60, 0.62, 0.65, 0.70, 0.75, 0.80, 0.85, 0.90):
        caught = sum(1 for c, s, r in pairs if r and c >= t and s >= 1)
        wrong = sum(1 for c, s, r in pairs if not r and c >= t and s >= 1)
        print(f"  {t:9.2f}  {caught:>6} of {n_rel:<5}  {wrong:>8}")
    top = max((c for c, s, r in pairs if not r and s >= 1), default=0.0)
    print(f"\nhighest unrelated pair with {condition}: {top:.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="use-multilingual-v3", help="embedding profile")
    parser.add_argument(
        "--rule", choices=("token", "subject", "any"), default="token", help="what else a pair must share"
    )
    parser.add_argument("--half", choices=("A", "B"), help="one half of the dev projects only")
    args = parser.parse_args()
    asyncio.run(main_async(args.model, args.rule, args.half))


if __name__ == "__main__":
    main()
