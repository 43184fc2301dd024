"""The model-free learned junk screen: logistic regression over hashed n-grams and structural cues of a statement.

The hand-written rules were fitted by reading the dev lines of the capture benchmark and let junk of other
phrasings through on projects nobody had read (issue 16: junk 8.8 % on the held-out part without a model). This
module is the learned decision that needs no embedding model, so it runs in every hook and every ``capture()``:

- **features** (:func:`features`): character 1–4-grams of the lowercased text with digits folded to ``0`` (language
  neutral: a Chinese or Japanese line has them as much as an English one), word 1–2-grams, both hashed into
  ``hash_size`` buckets by CRC-32, counted, log-scaled and L2-normalised; then :data:`CUE_NAMES`, the structural
  cues (code span, path, command, URL, question mark, lines, length, digits, log lines) and the rule pipeline's own
  cue hits (the cue tables of :mod:`memstone.capture._patterns` and :func:`~memstone.capture._language.read_sentence`:
  question, speculation, one-off, chatter, task request, modality, correction lead, change, lesson). The rules'
  final verdict is not a feature: at the screen it is always "admitted", so a weight learnt on it would mean
  nothing there.
- **model**: ``p(junk) = σ(w · x + b)``, fitted with L2 on the dev labels only by
  ``bench/fit_capture_classifier.py --text`` (the L2 strength and the threshold chosen inside the training folds),
  shipped as ``capture/data/junk-text.json`` with its hash size, feature version, training commit and data.

Trigger: a user statement (origin ``statement`` or ``correction``) the rules admitted.
Why: a status report, a pasted log, a plan for today or a thank-you in a language the cue tables do not know
reads like a fact to the rules; its n-grams and cues read like the junk of the dev projects.
Outcome: rejected with reason ``learned_junk`` when p(junk) ≥ the fitted threshold; admitted or not, the
probability is in the admission's ``detail`` (see :func:`memstone.capture.junk_model.screen`, the one place).

>>> cues("Run `make test` before pushing?")[:4]
(1.0, 0.0, 1.0, 0.0)
"""

from __future__ import annotations

import json
import math
import re
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path

from ..domain.errors import InvalidInput
from ._language import read_sentence
from ._patterns import CONSTRAINT, CONVENTION, FACT, ONE_OFF, QUESTION_START, SPECULATION, SYSTEM, is_chatter
from ._text import clean

__all__ = [
    "CUE_NAMES",
    "FEATURES",
    "FORMAT",
    "TextJunkClassifier",
    "cues",
    "features",
    "read_weights",
    "shipped_text_classifier",
]

FORMAT = "memstone-capture-junk-text/1"
FEATURES = "char1-4+word1-2+cues/1"  # the feature recipe: weights of another recipe mean nothing here
HASH_SIZE = 1 << 14
CUE_NAMES = (
    "code_span", "path", "question_mark", "url", "command", "multiline", "log_lines", "length", "digits",
    "cue_system", "cue_question_start", "cue_speculation", "cue_one_off", "cue_rule", "cue_chatter",
    "read_question", "read_speculation", "read_one_off", "read_chatter", "read_task_request", "read_generic",
    "read_constraint", "read_convention", "read_preference", "read_decision", "read_correction_lead",
    "read_change", "read_lesson", "read_evidence",
)  # fmt: skip

_CODE_SPAN = re.compile(r"`[^`\n]+`")
_PATH = re.compile(r"(?:^|[\s(\"'])(?:\.{0,2}/)?[\w.-]+/[\w./-]*|\b[\w-]+\.(?:[a-z]{1,5})\b(?![\s\w]*\()", re.I)
_URL = re.compile(r"\b(?:https?|s3|gs|wss?)://\S+", re.I)
_QUESTION = re.compile(r"[?？]")
_COMMAND = re.compile(
    r"`(?:\.{0,2}/[\w./-]+|[\w.-]+\s+-{1,2}\w|(?:make|npm|npx|pnpm|yarn|bun|deno|go|cargo|pip|uv|poetry|git|docker"
    r"|kubectl|helm|terraform|python3?|pytest|ruff|gradle|mvn|dotnet|flutter|swift|mix|bundle|rails|php|composer"
    r"|brew|apt|curl)\b)|^\s*\$ ",
    re.M,
)
_LOG = re.compile(
    r"^\s*(?:\[?(?:INFO|WARN|WARNING|ERROR|DEBUG|TRACE|FAIL|PASS|OK)\b|\d{4}-\d\d-\d\d|\d\d:\d\d:\d\d|[✔✓✗✘×├└│>$]"
    r"|at \S+\(|Traceback|warning:|error:|On branch|Changes |modified:|\d+ (?:passed|failed|errors?|warnings?))",
    re.I,
)
_WORD = re.compile(r"\w+")
_DIGIT = re.compile(r"\d")


def _bucket(key: str, size: int) -> int:
    return zlib.crc32(key.encode("utf-8")) % size


def cues(text: str) -> tuple[float, ...]:
    """The dense features of :data:`CUE_NAMES`, each in [0, 1]."""
    plain = _CODE_SPAN.sub(" ", text)
    lines = [line for line in text.splitlines() if line.strip()]
    first = " ".join(text.split())
    rd = read_sentence(first)
    mod = rd.modality
    return (
        1.0 if _CODE_SPAN.search(text) else 0.0,
        1.0 if _PATH.search(plain) else 0.0,
        1.0 if _QUESTION.search(text) else 0.0,
        1.0 if _URL.search(text) else 0.0,
        1.0 if _COMMAND.search(text) else 0.0,
        1.0 if len(lines) > 1 else 0.0,
        sum(1 for line in lines if _LOG.match(line)) / max(1, len(lines)),
        min(1.0, math.log1p(len(text)) / 7.0),
        min(1.0, 5.0 * len(_DIGIT.findall(text)) / max(1, len(text))),
        1.0 if SYSTEM.search(first) else 0.0,
        1.0 if QUESTION_START.search(first) else 0.0,
        1.0 if SPECULATION.search(first) else 0.0,
        1.0 if ONE_OFF.search(first) else 0.0,
        1.0 if CONSTRAINT.search(first) or CONVENTION.search(first) or FACT.search(first) else 0.0,
        1.0 if is_chatter(first) else 0.0,
        1.0 if rd.question else 0.0,
        1.0 if rd.speculation else 0.0,
        1.0 if rd.one_off else 0.0,
        1.0 if rd.chatter else 0.0,
        1.0 if rd.task_request else 0.0,
        1.0 if rd.generic else 0.0,
        1.0 if mod == "constraint" else 0.0,
        1.0 if mod == "convention" else 0.0,
        1.0 if mod == "preference" else 0.0,
        1.0 if mod == "decision" else 0.0,
        1.0 if rd.correction_lead else 0.0,
        1.0 if rd.change else 0.0,
        1.0 if rd.lesson else 0.0,
        min(1.0, rd.evidence / 4.0),
    )


def features(text: str, hash_size: int = HASH_SIZE) -> tuple[dict[int, float], tuple[float, ...]]:
    """The hashed n-gram part (bucket -> value, L2 norm 1) and the cue part of one text (as screened: cleaned)."""
    text = clean(text)
    low = _DIGIT.sub("0", " ".join(text.lower().split()))
    counts: dict[int, float] = {}
    padded = f" {low} "
    for n in (1, 2, 3, 4):
        for i in range(len(padded) - n + 1):
            b = _bucket("c" + padded[i : i + n], hash_size)
            counts[b] = counts.get(b, 0.0) + 1.0
    words = _WORD.findall(low)
    for i, w in enumerate(words):
        for key in (f"w {w}", f"b {words[i - 1]} {w}" if i else f"b ^ {w}"):
            b = _bucket(key, hash_size)
            counts[b] = counts.get(b, 0.0) + 1.0
    for b, v in counts.items():
        counts[b] = math.log1p(v)
    norm = math.sqrt(sum(v * v for v in counts.values())) or 1.0
    return {b: v / norm for b, v in counts.items()}, cues(text)


@dataclass(frozen=True, slots=True, kw_only=True)
class TextJunkClassifier:
    """Weights over :func:`features`: ``hash_size`` n-gram weights, then one per cue of :data:`CUE_NAMES`."""

    hash_size: int
    weights: tuple[float, ...]
    bias: float
    threshold: float
    l2: float = 0.0
    commit: str = ""
    trained_on: str = ""

    def __post_init__(self) -> None:
        hint = "re-fit it with bench/fit_capture_classifier.py --text --write"
        if self.hash_size <= 0 or self.hash_size & (self.hash_size - 1):
            raise InvalidInput(f"text junk classifier: hash size {self.hash_size} is not a power of two", hint=hint)
        if len(self.weights) != self.hash_size + len(CUE_NAMES):
            raise InvalidInput(
                f"text junk classifier: {len(self.weights)} weights for hash size {self.hash_size} and "
                f"{len(CUE_NAMES)} cues (want {self.hash_size + len(CUE_NAMES)})",
                hint=hint,
            )
        if not all(math.isfinite(v) for v in (*self.weights, self.bias, self.threshold)):
            raise InvalidInput("text junk classifier holds a non-finite number", hint=hint)
        if not 0.0 < self.threshold < 1.0:
            raise InvalidInput(f"text junk classifier threshold {self.threshold} is not in (0, 1)", hint=hint)

    def probability(self, text: str) -> float:
        """p(junk) of one statement."""
        grams, dense = features(text, self.hash_size)
        z = self.bias + sum(self.weights[b] * v for b, v in grams.items())
        z += sum(w * v for w, v in zip(self.weights[self.hash_size :], dense, strict=True))
        return 1.0 / (1.0 + math.exp(-z)) if z > -700 else 0.0

    def to_dict(self) -> dict[str, object]:
        return {
            "format": FORMAT,
            "features": FEATURES,
            "hash_size": self.hash_size,
            "cues": list(CUE_NAMES),
            "threshold": self.threshold,
            "bias": self.bias,
            "l2": self.l2,
            "commit": self.commit,
            "trained_on": self.trained_on,
            "weights": [round(v, 5) for v in self.weights],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, object], *, where: str = "text junk classifier") -> TextJunkClassifier:
        """Read (and validate) weights written by :meth:`to_dict`; a clear :class:`InvalidInput` otherwise."""
        hint = "re-fit it with bench/fit_capture_classifier.py --text --write"
        if data.get("format") != FORMAT:
            raise InvalidInput(f"{where}: format {data.get('format')!r}, not {FORMAT!r}", hint=hint)
        if data.get("features") != FEATURES:
            raise InvalidInput(f"{where}: feature recipe {data.get('features')!r}, not {FEATURES!r}", hint=hint)
        if list(data.get("cues") or []) != list(CUE_NAMES):  # type: ignore[call-overload]
            raise InvalidInput(f"{where}: cues {data.get('cues')!r}, not {CUE_NAMES}", hint=hint)
        size, weights = data.get("hash_size"), data.get("weights")
        if not isinstance(size, int) or isinstance(size, bool):
            raise InvalidInput(f"{where}: hash_size must be an integer", hint=hint)
        if not isinstance(weights, list) or not all(isinstance(v, (int, float)) for v in weights):
            raise InvalidInput(f"{where}: weights must be a list of numbers", hint=hint)
        numbers = {k: data.get(k) for k in ("bias", "threshold", "l2")}
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in numbers.values()):
            raise InvalidInput(f"{where}: bias, threshold and l2 must be numbers", hint=hint)
        return cls(
            hash_size=size,
            weights=tuple(float(v) for v in weights),
            bias=float(numbers["bias"]),  # type: ignore[arg-type]
            threshold=float(numbers["threshold"]),  # type: ignore[arg-type]
            l2=float(numbers["l2"]),  # type: ignore[arg-type]
            commit=str(data.get("commit") or ""),
            trained_on=str(data.get("trained_on") or ""),
        )

    @classmethod
    def load(cls, path: str | Path) -> TextJunkClassifier:
        """Weights from a JSON file (as ``bench/fit_capture_classifier.py --text --write`` writes them)."""
        return cls.from_dict(read_weights(path, "text junk classifier"), where=str(path))


def read_weights(path: str | Path, what: str) -> dict[str, object]:
    """The JSON object of a weights file; a clear :class:`InvalidInput` when it cannot be read or is not one."""
    try:
        data = json.loads(Path(path).read_text("utf-8"))
    except (OSError, ValueError) as exc:
        raise InvalidInput(f"cannot read the {what} {path}: {exc}") from exc
    if not isinstance(data, dict):
        raise InvalidInput(f"the {what} {path} is not a JSON object")
    return data


@cache
def shipped_text_classifier() -> TextJunkClassifier | None:
    """The weights shipped in the package (``capture/data/junk-text.json``), or None when there are none."""
    ref = resources.files("memstone.capture").joinpath("data", "junk-text.json")
    if not ref.is_file():
        return None
    return TextJunkClassifier.from_dict(
        json.loads(ref.read_text("utf-8")), where="memstone/capture/data/junk-text.json"
    )
