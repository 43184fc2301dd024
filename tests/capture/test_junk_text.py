"""The model-free learned junk screen (capture/junk_text.py, issue 16): junk the hand-written rules keep is dropped
without any embedding model, at the one admission point, with its probability in the decision; the shipped weights
are validated (hash size, feature recipe, cues)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from capture_helpers import PROJECT

import memstone
from memstone.capture import UserPrompt, capture
from memstone.capture.admission import admit
from memstone.capture.candidates import Candidate
from memstone.capture.junk_model import screen
from memstone.capture.junk_text import (
    CUE_NAMES,
    FEATURES,
    HASH_SIZE,
    TextJunkClassifier,
    features,
    shipped_text_classifier,
)
from memstone.capture.pipeline import CapturePipeline
from memstone.domain.errors import InvalidInput

# Junk of kinds real sessions have that the rules store: a status report, thanks in Japanese. Written for this test,
# not benchmark lines. (Of six such lines written for it before the weights were fitted, the screen drops these two;
# a CI remark, a one-off debugging request, a pasted build log and a one-off scope in German it keeps: its LOPO
# estimate in docs/capture.md says how much of this junk it catches.)
JUNK_THE_RULES_KEEP = (
    # (was "Status: the payment refactor …": a status label is a rule since capobv, _glance.py)
    "The payment refactor is about half done, the refund screen still uses the old client.",
    "ビルド通りました、ありがとうございます。",
)
RULES = (
    "Never push to main; every change goes through a pull request.",
    "Wir verwenden pnpm, nie npm.",
    "数据库迁移必须用 Alembic 生成，不要手写 SQL。",
    "Les montants sont stockés en centimes entiers, jamais en flottants.",
)


async def test_junk_the_rules_keep_is_dropped_without_a_model(tmp_path: Path) -> None:
    rules_only = CapturePipeline(text_screen=False)
    async with memstone.open_service(f"sqlite:///{tmp_path / 'rules.db'}", embedding=None) as svc:
        for text in JUNK_THE_RULES_KEEP:  # the rules alone store every one of these
            result = await capture(svc, UserPrompt(text=text), scope=PROJECT, pipeline=rules_only)
            assert result.status == "stored", text
    clf = shipped_text_classifier()
    assert clf is not None
    async with memstone.open_service(f"sqlite:///{tmp_path / 'screen.db'}", embedding=None) as svc:
        for text in JUNK_THE_RULES_KEEP:  # the default pipeline, no model: the hook's path
            result = await capture(svc, UserPrompt(text=text), scope=PROJECT)
            assert result.status == "nothing" and not result.entries(), text
            (outcome,) = result.outcomes
            assert outcome.action == "rejected" and outcome.reason == "learned_junk"
            found = re.search(r"learned junk screen \(text\): p\(junk\) (0\.\d+) ≥ (0\.\d+)", outcome.detail)
            assert found is not None, outcome.detail
            assert float(found.group(1)) >= clf.threshold and float(found.group(2)) == round(clf.threshold, 3)
        for text in RULES:
            assert (await capture(svc, UserPrompt(text=text), scope=PROJECT)).status == "stored", text
        entries = [v for _, mid in await svc.scopes() for v in await svc.entries(mid)]
        assert sorted(v.text for v in entries) == sorted(RULES)


async def test_an_admitted_statement_carries_the_text_screens_probability() -> None:
    text = RULES[0]
    admission = admit(Candidate(kind="constraint", text=text, origin="statement"), evidence={"event": text})
    (decision,) = await screen((admission,), None)
    assert decision.admitted and re.fullmatch(r"learned junk screen \(text\): p\(junk\) 0\.\d{3} < 0\.\d{3}",
                                              decision.detail)  # fmt: skip
    assert await screen((admission,), None, text_screen=False) == (admission,)  # off: the rules alone
    note = Candidate(kind="working_note", text="Cool, thanks, nice job on the Redis cache.", origin="submitted")
    (kept,) = await screen((admit(note, evidence={"event": note.text}),), None)
    assert kept.admitted and kept.detail == ""  # not a user statement: never screened


def test_features_are_language_neutral_and_bounded() -> None:
    for text in (RULES[2], "ビルド通りました", "Never push to main"):
        grams, cues = features(text)
        assert grams and all(0 <= b < HASH_SIZE for b in grams)
        assert abs(sum(v * v for v in grams.values()) - 1.0) < 1e-9
        assert len(cues) == len(CUE_NAMES) and all(0.0 <= c <= 1.0 for c in cues)
    assert features("Port 8080 or 9090") == features("port 1234 or 5678")  # digits folded, case folded


def test_the_shipped_weights_are_validated_and_name_their_commit_and_data() -> None:
    clf = shipped_text_classifier()
    assert clf is not None and clf.hash_size == HASH_SIZE and len(clf.weights) == HASH_SIZE + len(CUE_NAMES)
    assert re.fullmatch(r"[0-9a-f]{40}", clf.commit) and "bench/data/capture" in clf.trained_on
    assert 0.0 < clf.threshold < 1.0
    size = (Path(memstone.__file__).parent / "capture" / "data" / "junk-text.json").stat().st_size
    assert size < 400_000
    good = clf.to_dict()
    assert good["features"] == FEATURES
    for change, words in (
        ({"format": "memstone-capture-junk/1"}, "format"),
        ({"hash_size": HASH_SIZE // 2}, "weights for hash size"),  # weights of another hashing size
        ({"hash_size": 1000, "weights": [0.0] * (1000 + len(CUE_NAMES))}, "power of two"),
        ({"features": "char1-3/1"}, "feature recipe"),
        ({"cues": list(CUE_NAMES[:-1])}, "cues"),
        ({"weights": "0.1"}, "list of numbers"),
        ({"threshold": 1.5}, "threshold"),
        ({"bias": None}, "must be numbers"),
    ):
        with pytest.raises(InvalidInput, match=words) as info:
            TextJunkClassifier.from_dict({**good, **change})
        assert "fit_capture_classifier.py --text" in (info.value.hint or "")


def test_a_weights_file_that_cannot_be_read_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "junk-text.json"
    path.write_text("{not json", "utf-8")
    with pytest.raises(InvalidInput, match="cannot read the text junk classifier"):
        TextJunkClassifier.load(path)
    clf = shipped_text_classifier()
    assert clf is not None
    path.write_text(json.dumps(clf.to_dict()), "utf-8")
    assert TextJunkClassifier.load(path) == clf
