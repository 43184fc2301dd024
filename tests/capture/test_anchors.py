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
from memstone.capture.anchors import anchor_tokens, restated_anchor
from memstone.capture.nearness import Semantic, semantic_key
from memstone.capture.targets import Target

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
