"""capdup5 (issue 16): a rule said again in another language is one entry by its anchors (the names, identifiers
and numbers no translation changes), when no other entry holds them; one shared name alone is not enough without a
multilingual model's vote.

Made-up sentences of a photo-archive project, in no data file.
"""

from __future__ import annotations

import pytest
from capture_helpers import entry_then

from memstone import MemoryService
from memstone.capture._text import clean, subject_tokens
from memstone.capture.anchors import anchor_tokens, restated_anchor, restated_meaning
from memstone.capture.nearness import Semantic, semantic_key
from memstone.capture.targets import Target
from memstone.domain.ids import EntryId

MEMORY = [
    "Uploads are virus-scanned before anyone can download them.",
    "The archive keeps every original file for ten years.",
    "Album pages are server-rendered; no client-side routing.",
]


@pytest.mark.parametrize(
    ("first", "then"),
    [
        pytest.param("Thumbnails are cut to 320 px with libvips before they are cached.",
                     "缩略图在缓存之前用 libvips 裁成 320 像素。", id="zh-of-en"),
        pytest.param("Never call the printer's HTTP API from a LiveView process; go through the Printing context.",
                     "Nada de llamar a la impresora desde un LiveView: siempre a través del contexto Printing.",
                     id="es-of-en"),
        pytest.param("RAW ファイルのパースは rawpy を使う。", "RAW files are parsed with rawpy.", id="en-of-ja"),
    ],
)  # fmt: skip
async def test_a_restatement_in_another_language_adds_no_second_entry(
    service: MemoryService, first: str, then: str
) -> None:
    entry, outcomes = await entry_then(service, MEMORY, first, then)
    assert len(outcomes) == 1
    action, entry_id = outcomes[0]
    assert entry_id == entry and action in ("unchanged", "revised")


async def test_another_rule_sharing_one_name_is_added(service: MemoryService) -> None:
    entry, outcomes = await entry_then(
        service,
        MEMORY,
        "Admin passwords live in 1Password, never in the repository.",
        "Los certificados de firma de la app de iOS se guardan siempre en 1Password, con acceso solo para móviles.",
    )
    assert len(outcomes) == 1 and outcomes[0][0] == "added" and outcomes[0][1] != entry


def test_the_hex_of_a_cjk_bigram_is_no_number() -> None:
    found = anchor_tokens("封面上传前用 Pillow 缩到 600 像素宽。")
    assert {"600", "pillow"} <= found and not any(t.startswith("b_") for t in found)


def _target(text: str, seq: int) -> Target:
    return Target(entry_id=None, entry_version_id=None, kind="fact", text=text, slug=None, plan_index=None,
                  written=f"{seq:04d}")  # fmt: skip


@pytest.mark.parametrize(("cosine", "taken"), [(0.9, True), (0.2, False)])
def test_a_multilingual_model_votes_on_one_shared_anchor(cosine: float, taken: bool) -> None:
    entry = "Les identifiants de colis sont des ULID, jamais des entiers auto-incrémentés."
    text = clean("Locker ids are the numbers printed on the door, not ULIDs.")
    other = (1.0 - cosine * cosine) ** 0.5
    semantic = Semantic(
        vectors={semantic_key(entry): (1.0, 0.0), semantic_key(text): (cosine, other)}, threshold=0.62, anchor=0.5
    )
    targets = [_target("Uploads are virus-scanned before anyone can download them.", 1), _target(entry, 2)]
    exact = subject_tokens(text, synonyms=False)
    found = restated_anchor(text, exact, targets, semantic)
    assert (found is targets[1]) is taken
    assert restated_anchor(text, exact, targets) is None  # one shared name, no model: not taken


def _unit(cosine: float, axis: int = 0) -> tuple[float, float, float]:
    """A unit vector at ``cosine`` to (1, 0, 0), off towards axis ``axis`` (1 or 2)."""
    rest = (1.0 - cosine * cosine) ** 0.5
    return (cosine, rest, 0.0) if axis == 1 else (cosine, 0.0, rest)


READINGS = "Sensor readings are never deleted; old ones are moved to the archive schema."
ALARMS = "Over-temperature alarms always go out by text message and by email."
RESTATED = clean("传感器数据从来不删除，只会挪到归档库里。")


def _meaning(reading: float, alarm: float, crosslang: float | None = 0.60) -> Semantic:
    """A candidate at (1, 0, 0); the readings entry at ``reading`` and the alarms entry at ``alarm`` to it."""
    vectors = {semantic_key(RESTATED): (1.0, 0.0, 0.0), semantic_key(READINGS): _unit(reading, 1)}
    vectors[semantic_key(ALARMS)] = _unit(alarm, 2)
    return Semantic(vectors=vectors, threshold=0.62, anchor=0.5, crosslang=crosslang)


def _entry(text: str, seq: int) -> Target:
    return Target(entry_id=EntryId(f"ent_{seq:04d}"), entry_version_id=None, kind="constraint", text=text, slug=None,
                  plan_index=None, written=f"{seq:04d}")  # fmt: skip


def test_a_restatement_in_another_language_sharing_no_word_is_taken_by_meaning() -> None:
    # capdup6: no shared token, no anchor; a multilingual model says it is clearly the readings rule.
    targets = [_entry(ALARMS, 1), _entry(READINGS, 2)]
    exact = subject_tokens(RESTATED, synonyms=False)
    assert not exact & targets[1].exact  # nothing lexical to go on
    assert restated_anchor(RESTATED, exact, targets, _meaning(0.80, 0.30)) is targets[1]
    assert restated_anchor(RESTATED, exact, targets) is None  # without a model: left to the lexical rules


@pytest.mark.parametrize(
    ("reading", "alarm", "crosslang"),
    [
        pytest.param(0.55, 0.10, 0.60, id="not-similar-enough"),
        pytest.param(0.80, 0.75, 0.60, id="no-clear-lead"),
        pytest.param(0.80, 0.30, None, id="profile-without-the-rule"),
    ],
)
def test_meaning_alone_needs_a_close_and_clearly_nearest_entry(
    reading: float, alarm: float, crosslang: float | None
) -> None:
    targets = [_entry(ALARMS, 1), _entry(READINGS, 2)]
    assert restated_meaning(RESTATED, targets, _meaning(reading, alarm, crosslang)) is None


def test_meaning_never_takes_an_entry_in_the_same_language_or_one_lacking_a_named_tool() -> None:
    chinese = "传感器的读数一律不删，旧数据移到 archive schema。"
    semantic = _meaning(0.80, 0.30)
    vectors = dict(semantic.vectors) | {semantic_key(chinese): _unit(0.80, 1)}
    same = Semantic(vectors=vectors, threshold=0.62, anchor=0.5, crosslang=0.60)
    assert restated_meaning(RESTATED, [_entry(ALARMS, 1), _entry(chinese, 2)], same) is None  # lexical rules' job
    named = clean("传感器数据从来不删除，只会用 `pg_partman` 挪到归档库里。")
    vectors = dict(semantic.vectors) | {semantic_key(named): (1.0, 0.0, 0.0)}
    tool = Semantic(vectors=vectors, threshold=0.62, anchor=0.5, crosslang=0.60)
    assert restated_meaning(named, [_entry(ALARMS, 1), _entry(READINGS, 2)], tool) is None
