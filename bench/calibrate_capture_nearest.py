"""Calibrate the nearest-by-meaning rule (``memstone.capture.meaning``) on the DEV part of the capture data only.

``python bench/calibrate_capture_nearest.py [--model use-multilingual-v3] [--half A|B] [--change]``

For every explicit or correction user line of a dev project (lifecycle lines too as entries; secret lines left
out), the earlier such lines of its project stand for the live entries. The line's nearest one by cosine, the lead
over the next, and whether the two share a typed subject (:func:`memstone.capture.meaning.subject_match`) are
computed. A line whose nearest is its labelled entry (``duplicate_of`` / ``revises``, followed to the first line of
the entry) is *right*; any other line the rule would take is *wrong*. It prints right and wrong per cosine and lead;
``NEAREST_COSINE`` / ``NEAREST_LEAD`` in ``memstone.capture.nearness`` are the lowest cosine with the fewest wrong
on half A. ``--change``: only the lines that give the nearest one's subject another value (another tool of a
shared role, another value of a shared kind), for ``NEAREST_CHANGE_COSINE`` / ``NEAREST_CHANGE_LEAD``.
``--half A`` / ``--half B``: the sorted files taken alternately (as the other calibrations).
It never reads ``bench/data/capture-heldout``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path

from memstone.capture.meaning import subject_match
from memstone.embedding import load_model

DEV = Path(__file__).resolve().parent / "data" / "capture"
COSINES = (0.30, 0.35, 0.40, 0.45, 0.50, 0.55, 0.58, 0.60, 0.62, 0.65, 0.70)
LEADS = (0.0, 0.05, 0.10, 0.15)


def _root(links: dict[int, int], seq: int) -> int:
    seen: set[int] = set()
    while seq in links and seq not in seen:
        seen.add(seq)
        seq = links[seq]
    return seq


async def main_async(model_name: str, half: str | None, change: bool = False) -> None:
    model = load_model(model_name)
    files = sorted(DEV.glob("*.jsonl"))
    # (cosine, lead, shares a typed subject, right)
    rows_out: list[tuple[float, float, bool, bool]] = []
    for path in files if half is None else files["AB".index(half) :: 2]:
        rows = [json.loads(line) for line in path.read_text("utf-8").splitlines()]
        links = {
            int(r["seq"]): int(r["label"].get("duplicate_of") or r["label"]["revises"])
            for r in rows
            if r["label"].get("duplicate_of") or r["label"].get("revises")
        }
        kept = [
            r
            for r in rows
            if r["role"] == "user"
            and r["label"]["should_store"]
            and not r.get("secrets")
            and r["label"].get("class") in ("explicit", "correction", "lifecycle")
        ]
        if len(kept) < 2:
            continue
        vectors = (await model.embed(tuple(str(r["text"]) for r in kept))).vectors
        for i in range(1, len(kept)):
            scored = sorted(
                ((sum(x * y for x, y in zip(vectors[i], vectors[j], strict=True)), j) for j in range(i)), reverse=True
            )
            cos, j = scored[0]
            lead = cos - scored[1][0] if len(scored) > 1 else 1.0
            same, changed = subject_match(str(kept[i]["text"]), str(kept[j]["text"]))
            seq = int(kept[i]["seq"])
            right = seq in links and _root(links, links[seq]) == _root(links, int(kept[j]["seq"]))
            rows_out.append((cos, lead, changed if change else same, right))
    print(f"{model_name}: {len(rows_out)} lines, half {half or 'all'}\n")
    what = "another value of a shared subject" if change else "a typed subject shared"
    print(f"  cosine  lead   right  wrong   (nearest earlier line, {what})")
    for t in COSINES:
        for lead_min in LEADS:
            taken = [r for r in rows_out if r[0] >= t and r[1] >= lead_min and r[2]]
            right = sum(1 for r in taken if r[3])
            print(f"  {t:6.2f}  {lead_min:4.2f}  {right:6}  {len(taken) - right:5}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="use-multilingual-v3", help="embedding profile")
    parser.add_argument("--half", choices=("A", "B"), help="one half of the dev projects only")
    parser.add_argument("--change", action="store_true", help="only lines giving the subject another value")
    args = parser.parse_args()
    asyncio.run(main_async(args.model, args.half, args.change))


if __name__ == "__main__":
    main()
