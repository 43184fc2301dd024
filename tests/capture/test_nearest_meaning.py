"""Issue 16, capmatch8: a restatement or an unmarked correction that shares no word with its entry is found by the
entry nearest in meaning (any language) when the two share a typed subject (meaning.py); every guard of the rule."""

from __future__ import annotations

import pytest

from memstone.capture.admission import plan_candidates
from memstone.capture.candidates import Candidate
from memstone.capture.meaning import nearest_meaning, subject_match
from memstone.capture.nearness import NEAREST_COSINE, NEAREST_LEAD, Semantic, semantic_key, semantic_texts
from memstone.capture.targets import Target
from memstone.domain.ids import EntryId, EntryVersionId, MemoryId
from memstone.domain.model import EntryContent, EntryVersion

# A same-language paraphrase with too few words in common for the lexical rules (dev harbor#16 / #8 in shape).
IDEMPOTENT = "Reconcile loops must be idempotent: running one twice on the same object never creates duplicates."
SAFE_AGAIN = "Every reconciler has to be safe to run again on the same object without making duplicates."
FINALIZERS = "Finalizers are removed only after the cloud resources they guard are gone."
# A new tool of one role, in another language, with no word in common and no marker.
PUSH_OLD = "Kitchen alerts reach the tablets through OneSignal."
PUSH_NEW = "Las notificaciones de cocina ahora usan FCM."
SEARCH = "Product search is served by Meilisearch."


def _versions(*texts: str) -> list[EntryVersion]:
    out = []
    for i, text in enumerate(texts):
        content = EntryContent(kind="convention", text=text)
        out.append(
            EntryVersion(
                memory_id=MemoryId("mem_1"),
                entry_id=EntryId(f"ent_{i}"),
                entry_version_id=EntryVersionId(f"ver_{i}"),
                version=1,
                previous_version_id=None,
                content=content,
                entry_content_hash=content.content_hash,
                created_in_revision=1,
            )
        )
    return out


def _unit(cosine: float, axis: int) -> tuple[float, float, float]:
    """A unit vector at ``cosine`` to (1, 0, 0), off towards axis 1 or 2."""
    rest = (1.0 - cosine * cosine) ** 0.5
    return (cosine, rest, 0.0) if axis == 1 else (cosine, 0.0, rest)


def _semantic(text: str, near: str, near_cos: float, other: str, other_cos: float, *, on: bool = True) -> Semantic:
    vectors = {semantic_key(text): (1.0, 0.0, 0.0), semantic_key(near): _unit(near_cos, 1)}
    vectors[semantic_key(other)] = _unit(other_cos, 2)
    return Semantic(vectors=vectors, threshold=0.99, nearest=NEAREST_COSINE["use-multilingual-v3"] if on else None)


def _cand(text: str) -> Candidate:
    return Candidate(kind="convention", text=text, origin="statement")


def test_a_paraphrase_sharing_too_few_words_is_no_second_entry() -> None:
    # The lexical rules see two common words; the model says it is clearly the idempotency rule.
    entries = _versions(FINALIZERS, IDEMPOTENT)
    assert plan_candidates([_cand(SAFE_AGAIN)], entries)[0].action == "add"  # without a model: lexical limit
    (plan,) = plan_candidates([_cand(SAFE_AGAIN)], entries, _semantic(SAFE_AGAIN, IDEMPOTENT, 0.72, FINALIZERS, 0.35))
    assert plan.action in ("revise", "unchanged") and plan.entry_id == "ent_1"


def test_a_new_tool_of_the_role_in_another_language_corrects_the_entry() -> None:
    entries = _versions(SEARCH, PUSH_OLD)
    (plan,) = plan_candidates([_cand(PUSH_NEW)], entries, _semantic(PUSH_NEW, PUSH_OLD, 0.66, SEARCH, 0.20))
    assert (plan.action, plan.entry_id) == ("revise", "ent_1")
    assert plan.why.startswith("correction") or plan.why.startswith("corrects")


@pytest.mark.parametrize(
    ("near_cos", "other_cos", "on"),
    [
        pytest.param(0.55, 0.10, True, id="not-near-enough"),
        pytest.param(0.72, 0.72 - NEAREST_LEAD + 0.01, True, id="no-clear-lead"),
        pytest.param(0.90, 0.10, False, id="profile-without-the-rule"),
    ],
)
def test_meaning_needs_a_close_and_clearly_nearest_entry(near_cos: float, other_cos: float, on: bool) -> None:
    entries = _versions(FINALIZERS, IDEMPOTENT)
    semantic = _semantic(SAFE_AGAIN, IDEMPOTENT, near_cos, FINALIZERS, other_cos, on=on)
    assert plan_candidates([_cand(SAFE_AGAIN)], entries, semantic)[0].action == "add"


def test_meaning_without_a_shared_typed_subject_is_not_enough() -> None:
    # Near in meaning, but nothing in common a language keeps (no role, kind of value, name or subject word).
    text = "Invoices are kept for ten years."
    entries = _versions(FINALIZERS, PUSH_OLD)
    targets = [Target.of(v) for v in entries]
    assert nearest_meaning(text, targets, _semantic(text, PUSH_OLD, 0.80, FINALIZERS, 0.10)) is None
    assert plan_candidates([_cand(text)], entries, _semantic(text, PUSH_OLD, 0.80, FINALIZERS, 0.10))[0].action == "add"


@pytest.mark.parametrize(
    ("text", "entry", "same", "changed"),
    [
        pytest.param(PUSH_NEW, PUSH_OLD, True, True, id="role-new-tool"),
        pytest.param("Die Produktsuche läuft über Typesense.", SEARCH, True, True, id="role-de-en"),
        pytest.param(
            "気象データは 10 分ごとに取得します。", "Die Wetterdaten holen wir alle 15 Minuten.", True, True, id="unit"
        ),
        pytest.param("Product search runs on Meilisearch.", SEARCH, True, False, id="same-tool"),
        pytest.param("Invoices are kept for ten years.", PUSH_OLD, False, False, id="nothing-shared"),
    ],
)
def test_subject_match_is_language_neutral(text: str, entry: str, same: bool, changed: bool) -> None:
    assert subject_match(text, entry) == (same, changed)


def test_every_live_entry_is_embedded_for_the_rule() -> None:
    # The two share no subject token and both are English: only `every` embeds the entry.
    text = "Each controller tolerates being retried."
    entries = _versions(FINALIZERS)
    assert semantic_key(FINALIZERS) not in semantic_texts([_cand(text)], entries, other_languages=True)
    assert semantic_key(FINALIZERS) in semantic_texts([_cand(text)], entries, every=True)


def test_a_new_value_of_the_subject_is_taken_from_a_lower_cosine_with_a_clear_lead() -> None:
    # A correction changes the value, so it is less similar to its entry than a restatement (dev moonjar#27 shape).
    text = "ビルドパイプラインは Buildkite で回しています。"
    old = "Die Build-Pipeline läuft auf GitHub Actions."
    entries = _versions(FINALIZERS, old)
    low = Semantic(
        vectors={
            semantic_key(text): (1.0, 0.0, 0.0),
            semantic_key(old): _unit(0.50, 1),
            semantic_key(FINALIZERS): _unit(0.20, 2),
        },
        threshold=0.99,
        nearest=0.58,
        nearest_change=0.40,
    )
    (plan,) = plan_candidates([_cand(text)], entries, low)
    assert (plan.action, plan.entry_id) == ("revise", "ent_1")
    no_lead = Semantic(
        vectors={**low.vectors, semantic_key(FINALIZERS): _unit(0.45, 2)},
        threshold=0.99,
        nearest=0.58,
        nearest_change=0.40,
    )
    assert plan_candidates([_cand(text)], entries, no_lead)[0].action == "add"
    restated = "Invoices are kept for ten years."  # no other value of anything: the lower cosine is not enough
    vectors = {
        semantic_key(restated): (1.0, 0.0, 0.0),
        semantic_key(old): _unit(0.50, 1),
        semantic_key(FINALIZERS): _unit(0.20, 2),
    }
    assert (
        nearest_meaning(
            restated,
            [Target.of(v) for v in entries],
            Semantic(vectors=vectors, threshold=0.99, nearest=0.58, nearest_change=0.40),
        )
        is None
    )
