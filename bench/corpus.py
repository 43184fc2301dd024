"""Deterministic synthetic memory notes and queries for the speed benchmarks (no data leaves this file)."""

from __future__ import annotations

import random

_TOPICS = [
    "deploy",
    "postgres",
    "backup",
    "migration",
    "docker",
    "kubernetes",
    "ingress",
    "certificate",
    "python",
    "pytest",
    "fixture",
    "typing",
    "frontend",
    "vite",
    "react",
    "api",
    "pagination",
    "cache",
    "redis",
    "queue",
    "worker",
    "retry",
    "timeout",
    "logging",
    "metrics",
    "tracing",
    "alert",
    "oncall",
    "release",
    "branch",
    "review",
    "lint",
    "format",
    "schema",
    "index",
    "vacuum",
    "replica",
    "latency",
    "budget",
    "secret",
]


def vocabulary(size: int = 4000, seed: int = 11) -> list[str]:
    rng = random.Random(seed)
    letters = "abcdefghijklmnopqrstuvwxyz"
    words = set(_TOPICS)
    while len(words) < size:
        words.add("".join(rng.choice(letters) for _ in range(rng.randint(3, 9))))
    return sorted(words)


class Corpus:
    """Zipf-distributed short notes (10–30 words) over a fixed vocabulary."""

    def __init__(self, seed: int = 7) -> None:
        self.words = vocabulary()
        self.rng = random.Random(seed)
        weights = [1.0 / (rank + 1) ** 1.07 for rank in range(len(self.words))]
        order = list(range(len(self.words)))
        random.Random(seed + 1).shuffle(order)
        self.ranked = [self.words[i] for i in order]
        self.weights = weights

    def note(self) -> str:
        n = self.rng.randint(10, 30)
        picked = self.rng.choices(self.ranked, weights=self.weights, k=n)
        return " ".join(picked).capitalize() + "."

    def query(self) -> str:
        # Two mid-frequency terms, like a short agent query.
        lo, hi = 50, 1500
        return " ".join(self.rng.choice(self.ranked[lo:hi]) for _ in range(2))
