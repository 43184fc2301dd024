"""Time ``find_secrets`` against a git ref's detector, alternating, best of N (issue 13, secspeed).

``python bench/secret_scan_speed.py [--ref main] [--rounds 5] [--notes 2000]``

Texts: every text of bench/data/capture/*.jsonl (dev only) and ``--notes`` ordinary notes of
``Corpus(seed=10_000).note()``. Each round scans every group with the ref's detector, then with the one on
PYTHONPATH (the order swaps every round); the figure is the best round's CPU time per text, in µs.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from corpus import Corpus
from secret_scan_identity import capture_texts, ref_detector

from memstone.domain.secrets import find_secrets


def _scan(detect: Callable[[str], object], texts: list[str]) -> float:
    t0 = time.process_time()
    for text in texts:
        detect(text)
    return time.process_time() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ref", default="main")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--notes", type=int, default=2000)
    args = parser.parse_args()
    corpus = Corpus(seed=10_000)
    groups = {"capture dev texts": list(capture_texts()), "ordinary notes": [corpus.note() for _ in range(args.notes)]}
    with tempfile.TemporaryDirectory() as tmp:
        detectors = {"ref": ref_detector(args.ref, Path(tmp)), "new": find_secrets}
        for texts in groups.values():  # warm both (regex compilation, caches)
            for detect in detectors.values():
                _scan(detect, texts[:50])
        for label, texts in groups.items():
            best = {name: float("inf") for name in detectors}
            for r in range(args.rounds):
                for name in ("ref", "new") if r % 2 == 0 else ("new", "ref"):
                    best[name] = min(best[name], _scan(detectors[name], texts))
            per = {name: best[name] / len(texts) * 1e6 for name in detectors}
            print(
                f"{label}: {len(texts)} texts, ref {per['ref']:.1f} µs/text, new {per['new']:.1f} µs/text, "
                f"new/ref {per['new'] / per['ref']:.3f}"
            )


if __name__ == "__main__":
    main()
