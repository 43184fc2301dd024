"""A learned junk screen over sentence embeddings, used by admission when an embedding model is loaded.

The hand-written rules (:mod:`memstone.capture.admission`, :mod:`memstone.capture.statements`) were fitted by
reading the dev lines of the capture benchmark, and they let junk of other phrasings and languages through on
projects nobody had read (issue 16). This module adds one learned decision on top of them: a logistic regression
over the statement's embedding plus four structural features (:func:`structure`), trained on the dev labels only
by ``bench/fit_capture_classifier.py`` and shipped as ``capture/data/junk-<profile>.json``.

Trigger: a user statement the rules admitted, and an embedding model whose profile has shipped weights.
Why: a question, a plan for today or a thank-you in a language the cue tables do not know reads like a fact to
the rules; in the embedding space it sits with the other questions, plans and thanks.
Outcome: the candidate is rejected with reason ``learned_junk`` when p(junk) ≥ the fitted threshold; admitted or
not, the probability is written into the admission's ``detail``. No model, or no weights for its profile: the
rules and the model-free screen (:mod:`memstone.capture.junk_text`, which :func:`screen` runs first, always)
decide. A model that fails to embed costs nothing but this screen.

>>> structure("Run `make test` before pushing?")
(1.0, 0.0, 1.0, 3.4657)
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cache
from importlib import resources
from pathlib import Path

from ..domain.errors import InvalidInput, MemstoneError
from ..ports import EmbeddingModel
from .admission import Admission
from .junk_text import TextJunkClassifier, read_weights, shipped_text_classifier
from .nearness import semantic_key

__all__ = [
    "FORMAT",
    "SCREENED_ORIGINS",
    "JunkClassifier",
    "load_classifier",
    "screen",
    "shipped_classifier",
    "structure",
]

FORMAT = "memstone-capture-junk/1"
#: Only what a user said is screened: working notes, build files and submitted entries are not statements.
SCREENED_ORIGINS = frozenset({"statement", "correction"})
STRUCTURE_NAMES = ("code_span", "path", "question_mark", "log_chars")

_CODE_SPAN = re.compile(r"`[^`\n]+`")
_PATH = re.compile(r"(?:^|[\s(\"'])(?:\.{0,2}/)?[\w.-]+/[\w./-]*|\b[\w-]+\.(?:[a-z]{1,5})\b(?![\s\w]*\()", re.I)
_QUESTION = re.compile(r"[?？]")


def structure(text: str) -> tuple[float, float, float, float]:
    """The four cheap structural features: has a code span, has a path or file name, has a question mark, and
    ln(1 + characters)."""
    return (
        1.0 if _CODE_SPAN.search(text) else 0.0,
        1.0 if _PATH.search(_CODE_SPAN.sub(" ", text)) else 0.0,
        1.0 if _QUESTION.search(text) else 0.0,
        round(math.log1p(len(text)), 4),
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class JunkClassifier:
    """Logistic regression weights for one embedding profile: ``p = σ(w · (x − mean) / scale + bias)`` where ``x``
    is the unit vector of the text followed by :func:`structure` of it."""

    profile_id: str
    dimension: int
    weights: tuple[float, ...]
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    bias: float
    threshold: float
    commit: str = ""
    trained_on: str = ""
    l2: float = 0.0

    def __post_init__(self) -> None:
        width = self.dimension + len(STRUCTURE_NAMES)
        if self.dimension <= 0 or not (len(self.weights) == len(self.mean) == len(self.scale) == width):
            raise InvalidInput(
                f"junk classifier for {self.profile_id!r}: {len(self.weights)} weights, {len(self.mean)} means and "
                f"{len(self.scale)} scales for a {self.dimension}-d profile (want {width} each)",
                hint="re-fit it with bench/fit_capture_classifier.py --write",
            )
        numbers = (*self.weights, *self.mean, *self.scale, self.bias, self.threshold)
        if not all(math.isfinite(v) for v in numbers) or any(s <= 0 for s in self.scale):
            raise InvalidInput(
                f"junk classifier for {self.profile_id!r} holds a non-finite number or a scale <= 0",
                hint="re-fit it with bench/fit_capture_classifier.py --write",
            )
        if not 0.0 < self.threshold < 1.0:
            raise InvalidInput(f"junk classifier threshold {self.threshold} is not in (0, 1)")

    def check_model(self, model: EmbeddingModel) -> None:
        """Refuse a model of another profile: the weights mean nothing in another embedding space."""
        profile = model.profile
        if profile.profile_id != self.profile_id or profile.dimension != self.dimension:
            raise InvalidInput(
                f"the junk classifier was fitted on {self.profile_id!r} ({self.dimension}-d), the model loaded is "
                f"{profile.profile_id!r} ({profile.dimension}-d)",
                hint="load the model the weights were fitted on, or fit weights for this profile with "
                "bench/fit_capture_classifier.py --model PROFILE --write",
            )

    def probability(self, vector: Sequence[float], text: str) -> float:
        """p(junk) of one statement, from its unit vector and its text."""
        if len(vector) != self.dimension:
            raise InvalidInput(f"a {len(vector)}-d vector for a {self.dimension}-d junk classifier")
        z = self.bias
        for w, x, m, s in zip(self.weights, (*vector, *structure(text)), self.mean, self.scale, strict=True):
            z += w * (x - m) / s
        return 1.0 / (1.0 + math.exp(-z)) if z > -700 else 0.0

    def to_dict(self) -> dict[str, object]:
        return {
            "format": FORMAT,
            "profile_id": self.profile_id,
            "dimension": self.dimension,
            "structure": list(STRUCTURE_NAMES),
            "threshold": self.threshold,
            "bias": self.bias,
            "l2": self.l2,
            "commit": self.commit,
            "trained_on": self.trained_on,
            "weights": list(self.weights),
            "mean": list(self.mean),
            "scale": list(self.scale),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, object], *, where: str = "junk classifier") -> JunkClassifier:
        """Read (and validate) weights written by :meth:`to_dict`; a clear :class:`InvalidInput` otherwise."""
        hint = "re-fit it with bench/fit_capture_classifier.py --write"
        if data.get("format") != FORMAT:
            raise InvalidInput(f"{where}: format {data.get('format')!r}, not {FORMAT!r}", hint=hint)
        if list(data.get("structure") or []) != list(STRUCTURE_NAMES):  # type: ignore[call-overload]
            raise InvalidInput(f"{where}: structural features {data.get('structure')!r}, not {STRUCTURE_NAMES}")

        def floats(key: str) -> tuple[float, ...]:
            value = data.get(key)
            if not isinstance(value, list) or not all(isinstance(v, (int, float)) for v in value):
                raise InvalidInput(f"{where}: {key} must be a list of numbers", hint=hint)
            return tuple(float(v) for v in value)

        def number(key: str) -> float:
            value = data.get(key)
            if not isinstance(value, (int, float)) or isinstance(value, bool):
                raise InvalidInput(f"{where}: {key} must be a number", hint=hint)
            return float(value)

        profile, dimension = data.get("profile_id"), data.get("dimension")
        if not isinstance(profile, str) or not profile or not isinstance(dimension, int):
            raise InvalidInput(f"{where}: profile_id and dimension are required", hint=hint)
        return cls(
            profile_id=profile,
            dimension=dimension,
            weights=floats("weights"),
            mean=floats("mean"),
            scale=floats("scale"),
            bias=number("bias"),
            threshold=number("threshold"),
            l2=number("l2") if "l2" in data else 0.0,
            commit=str(data.get("commit") or ""),
            trained_on=str(data.get("trained_on") or ""),
        )


def load_classifier(path: str | Path) -> JunkClassifier:
    """Weights from a JSON file (as ``bench/fit_capture_classifier.py`` writes them)."""
    return JunkClassifier.from_dict(read_weights(path, "junk classifier"), where=str(path))


@cache
def shipped_classifier(profile_id: str) -> JunkClassifier | None:
    """The weights shipped for ``profile_id`` (``capture/data/junk-<profile>.json``), or None when none are."""
    name = f"junk-{profile_id}.json"
    ref = resources.files("memstone.capture").joinpath("data", name)
    if not ref.is_file():
        return None
    classifier = JunkClassifier.from_dict(json.loads(ref.read_text("utf-8")), where=f"memstone/capture/data/{name}")
    if classifier.profile_id != profile_id:
        raise InvalidInput(f"memstone/capture/data/{name} holds weights of {classifier.profile_id!r}")
    return classifier


async def screen(
    admissions: Sequence[Admission],
    model: EmbeddingModel | None,
    classifier: JunkClassifier | None = None,
    *,
    text_classifier: TextJunkClassifier | None = None,
    text_screen: bool = True,
    vectors: dict[str, tuple[float, ...]] | None = None,
) -> tuple[Admission, ...]:
    """The admissions with the learned screens applied to the admitted user statements: the one place where a
    learned junk decision is made.

    First the model-free screen (:mod:`memstone.capture.junk_text`; ``text_classifier`` None: the weights shipped
    in the package; ``text_screen=False``: off), then, with a ``model``, the screen over its embeddings (see the
    module docstring; ``classifier`` None: the weights shipped for the model's profile, if any; given weights of
    another profile raise :class:`InvalidInput`). Each screen's probability goes into the admission's ``detail``.
    ``vectors`` (when given) receives each embedded text's vector under its
    :func:`~memstone.capture.nearness.semantic_key`, so that dedup by meaning does not embed it a second time.
    """
    out = list(admissions)
    todo = [i for i, a in enumerate(out) if a.admitted and a.candidate.origin in SCREENED_ORIGINS]
    text_clf = (text_classifier or shipped_text_classifier()) if text_screen else None
    if text_clf is not None:
        for i in todo:
            out[i] = _verdict(out[i], text_clf.probability(out[i].candidate.text), text_clf.threshold, "text")
        todo = [i for i in todo if out[i].admitted]
    if model is None or not todo:
        return tuple(out)
    if classifier is None:
        classifier = shipped_classifier(model.profile.profile_id)
        if classifier is None:
            return tuple(out)
    classifier.check_model(model)
    texts = tuple(semantic_key(out[i].candidate.text) for i in todo)
    try:
        result = await model.embed(texts)
    except (MemstoneError, ValueError, OSError, RuntimeError, ImportError):
        return tuple(out)
    if len(result.vectors) != len(texts):
        return tuple(out)
    if vectors is not None:
        vectors.update(zip(texts, result.vectors, strict=True))
    for i, text, vector in zip(todo, texts, result.vectors, strict=True):
        out[i] = _verdict(out[i], classifier.probability(vector, text), classifier.threshold, classifier.profile_id)
    return tuple(out)


def _verdict(admission: Admission, p: float, threshold: float, screen_name: str) -> Admission:
    """The admission rejected as ``learned_junk`` when ``p`` reaches the threshold; the probability in its detail."""
    verdict = f"p(junk) {p:.3f} {'≥' if p >= threshold else '<'} {threshold:.3f}"
    detail = f"learned junk screen ({screen_name}): {verdict}"
    if admission.detail and admission.admitted:
        detail = f"{admission.detail}; {detail}"
    if p >= threshold:
        return replace(admission, admitted=False, reason="learned_junk", detail=detail)
    return replace(admission, detail=detail)
