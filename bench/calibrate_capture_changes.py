"""Fit the unmarked-change threshold of :mod:`memstone.capture.subjects` on the DEV part of the capture data only.

``python bench/calibrate_capture_changes.py [--model minilm-l6-int8] [--half A|B] [--grid 0.2,0.3] [--rule name]``

Runs the whole dev part (``bench/data/capture``) through the real capture pipeline once per candidate value of
``subjects.CHANGE_MIN`` (the weighted overlap of what two statements share once the values they differ in are
taken out) and prints duplicates created, corrections that revised their entry, false merges and explicit +
correction recall (``--rule name``: ``subjects.CHANGE_NAME_MIN`` instead, the stated change of a name in prose,
sixth pass). The chosen value is the lowest one from which every higher value has no more false merges
and no less recall than the rule switched off (∞). It never reads ``bench/data/capture-heldout``.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from calibrate_capture_nearness import PROJECTS, dev_half, sweep_constant

from memstone.capture import subjects

DEV = Path(__file__).resolve().parent / "data" / "capture"
INF = float("inf")


async def main_async(model: str | None, grid: list[float], name: str = "CHANGE_MIN") -> None:
    print(f"dev part only ({DEV}{', projects ' + ', '.join(PROJECTS) if PROJECTS else ''}), model {model or 'none'}")
    await sweep_constant(subjects, name, model, grid)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=None, help="embedding profile (default: none)")
    parser.add_argument("--grid", help="values to try, comma-separated (default 0.10..0.60)")
    parser.add_argument("--half", choices=("A", "B"), help="fit on one half of the dev projects only")
    parser.add_argument("--rule", choices=("value", "name"), default="value", help="which change threshold to fit")
    args = parser.parse_args()
    if args.half:
        PROJECTS.extend(dev_half(args.half))
    grid = [float(x) for x in args.grid.split(",")] if args.grid else [x / 100 for x in range(10, 62, 4)]
    asyncio.run(main_async(args.model, grid, "CHANGE_NAME_MIN" if args.rule == "name" else "CHANGE_MIN"))


if __name__ == "__main__":
    main()
