"""Issue 16: near-duplicates by rare shared terms (weighted overlap), with a model by overlap + meaning."""

from __future__ import annotations

import pytest
from capture_helpers import PROJECT, entry_then

from memstone import MemoryService
from memstone.capture import UserPrompt, admit, capture, plan_candidates
from memstone.capture._text import probes, searchable, subject_tokens
from memstone.capture.admission import Semantic, semantic_key
from memstone.capture.candidates import Candidate
from memstone.capture.nearness import (
    SUBJECT_MIN,
    TermWeights,
    akin,
    align,
    compound_akin,
    weighted_match,
    weighted_min,
    weighted_overlap,
)
from memstone.capture.subjects import same_tools

# A photo app's memory: "preview", "thumbnail" and "render" are everywhere in it; "imgproxy" and "sidecar" are not.
MEMORY = [
    "Preview images are cached for seven days in the CDN.",
    "Thumbnails keep the EXIF orientation of the original photo.",
    "The render queue runs on Redis with three workers.",
    "Every preview gets a blurhash placeholder for slow networks.",
]
SIDECAR = "Thumbnails come from the imgproxy sidecar, never from the API process."
RESTATED = "Only the imgproxy sidecar renders previews and thumbnails."  # 3 of 8 subject terms shared: Jaccard 0.38
ANOTHER = "Video previews are always rendered with ffmpeg, never with ImageMagick."  # common terms only


def test_rare_terms_weigh_more_than_the_common_ones() -> None:
    weights = TermWeights([t.lower() for t in [*MEMORY, SIDECAR]])
    assert weights.weight("imgproxy") > weights.weight("thumbnail") > 0
    assert weights.weight("nowhere") > weights.weight("imgproxy")
    same = frozenset({"imgproxy", "sidecar", "thumbnail"})
    assert weighted_overlap(same, same, weights) == 1.0
    assert weighted_overlap(same, frozenset({"blurhash"}), weights) == 0.0


async def test_a_restatement_sharing_the_rare_terms_revises_its_entry(service: MemoryService) -> None:
    for text in MEMORY:
        await capture(service, UserPrompt(text=text), scope=PROJECT)
    (entry,) = (await capture(service, UserPrompt(text=SIDECAR), scope=PROJECT)).entries()
    again = await capture(service, UserPrompt(text=RESTATED), scope=PROJECT)
    assert [(o.action, o.entry_id) for o in again.outcomes] == [("revised", entry)]
    other = await capture(service, UserPrompt(text=ANOTHER), scope=PROJECT)
    assert [o.action for o in other.outcomes] == ["added"]  # shares only the Memory's common words
    head = await service.resolve(PROJECT)
    assert head is not None and len(await service.entries(head)) == len(MEMORY) + 2


def _unit(*xs: float) -> tuple[float, ...]:
    norm = sum(x * x for x in xs) ** 0.5
    return tuple(x / norm for x in xs)


SHORT = "Thumbnails come from the imgproxy sidecar."
SHORT_AGAIN = "The imgproxy sidecar renders every preview."  # 2 of 6 subject terms shared: too few without a model


def _second(semantic: Semantic | None) -> str:
    cands = [Candidate(kind="fact", text=SHORT, origin="statement"),
             Candidate(kind="fact", text=SHORT_AGAIN, origin="statement")]  # fmt: skip
    return plan_candidates(cands, [], semantic)[1].action


def test_with_a_model_overlap_and_cosine_together_decide() -> None:
    def semantic(cos: float) -> Semantic:
        a, b = _unit(1, 0), (cos, (1 - cos * cos) ** 0.5)
        vectors = {semantic_key(SHORT): a, semantic_key(SHORT_AGAIN): b}
        return Semantic(vectors=vectors, threshold=0.62, combined=0.82, combined_correction=0.82)

    assert _second(None) == "add"
    # Cosine 0.55 is below the cosine-only rule (0.62), but with Jaccard 0.33 the sum passes 0.82.
    assert _second(semantic(0.55)) in ("revise", "unchanged")
    assert _second(semantic(0.30)) == "add"
    # An uncalibrated combination (None) never matches by this rule.
    assert _second(Semantic(vectors=semantic(0.55).vectors, threshold=0.62)) == "add"


def test_the_threshold_is_lexical_without_a_model_and_combined_with_one() -> None:
    with_model = Semantic(vectors={}, threshold=0.62, combined=0.9, combined_correction=0.8)
    assert weighted_min(with_model, correction=False) == 0.9
    assert weighted_min(with_model, correction=True) == 0.8
    assert weighted_min(Semantic(vectors={}, threshold=0.62), correction=False) == float("inf")
    assert 0 < weighted_min(None, correction=False) < 1


@pytest.mark.parametrize(
    "text",
    ["The retry policy is defined in internal/retry/policy.go.",
     "The OpenAPI spec is located under api/openapi/spec.yaml.",
     "Das Buchungsmodell ist in kassenbuch/buchungen/models.py."],
)  # fmt: skip
def test_a_location_with_a_placement_verb_is_obvious(text: str) -> None:
    decision = admit(Candidate(kind="fact", text=text, origin="statement"), evidence={"event": text})
    assert decision.reason == "location_only"


def test_a_rule_about_a_location_is_kept() -> None:
    text = "Generated clients must always be kept in gen/ and never edited by hand."
    assert admit(Candidate(kind="constraint", text=text, origin="statement"), evidence={"event": text}).admitted


def test_forms_of_one_word_are_akin_but_numbers_and_short_words_are_not() -> None:
    assert akin("reconcil", "reconciler") and akin("stornobuch", "storno")
    assert akin("betrag", "geldbetrag")  # the head of a German compound
    assert not akin("log", "logg") and not akin("test", "contest")  # too short to be anything but chance
    assert not akin("v1", "v12") and not akin("b_65f6_95f4", "b_65f6_95f4_5176")
    assert align(frozenset({"reconcil", "idempotent"}), frozenset({"reconciler", "idempotent"})) == frozenset(
        {"reconciler", "idempotent"}
    )


# Issue 16: restatements whose shared words are in other forms ("reconciles" / "reconciler", "Beträge" /
# "Geldbeträge"); the exact tokens they share are two, too few for the lexical rules.
OPERATOR = [
    "The scheduler must run every five minutes on the worker pool.",
    "Invoices must be numbered per tenant without gaps.",
    "Exports must be written as Parquet files to the archive bucket.",
    "Every reconciler must be idempotent, so a rerun never creates a second resource.",
]
KASSE = [
    "Die Oberfläche wird mit Jetpack Compose gebaut, keine XML-Layouts mehr.",
    "Alle Datumsangaben im Backend sind UTC.",
    "Rechnungen werden nach zehn Jahren archiviert.",
    "Geldbeträge speichern wir als ganze Cent in einem Long, niemals als Double.",
]


@pytest.mark.parametrize(
    ("memory", "restated"),
    [
        pytest.param(OPERATOR, "Reconciles must be idempotent and never duplicate resources.", id="en-derived-form"),
        pytest.param(KASSE, "Beträge sind Cent-Werte, auf keinen Fall Double.", id="de-compound"),
    ],
)
async def test_a_restatement_in_other_forms_of_the_words_revises_its_entry(
    service: MemoryService, memory: list[str], restated: str
) -> None:
    for text in memory:
        assert [o.action for o in (await capture(service, UserPrompt(text=text), scope=PROJECT)).outcomes] == ["added"]
    head = await service.resolve(PROJECT)
    assert head is not None
    target = next(v.entry_id for v in await service.entries(head) if v.text == memory[-1])
    again = await capture(service, UserPrompt(text=restated), scope=PROJECT)
    assert [(o.action, o.entry_id) for o in again.outcomes] == [("revised", target)]


def test_german_doubled_stems_and_umlauts_meet_their_probes() -> None:
    logged = subject_tokens("Kontonummern nie im Klartext loggen.")
    assert "log" in logged & subject_tokens("Auch Namen gehören nicht ins Log, nicht nur Kontonummern.")
    (alternatives,) = probes(subject_tokens("Beträge"))
    assert any(k in searchable("Geldbeträge in Cent") for k in alternatives)


def test_a_german_participle_is_akin_to_its_verb() -> None:
    assert akin("gespeichert", "speicher") and akin("geändert", "änder")
    assert not akin("gebucht", "buch")  # under 8 letters the ge- stays: "gemacht", "gelten" are too short to tell


def test_a_shared_tool_name_lowers_the_threshold_only_when_the_candidate_adds_no_other_name() -> None:
    entry = "Map tiles are kept by Varnish for 60 minutes."
    assert same_tools("Tiles are always cached in Varnish for an hour.", entry)
    # A second tool the entry does not name: another rule about the same area.
    assert not same_tools("Tiles live in Varnish and fonts in MinIO.", entry)
    assert not same_tools("Tiles are cached for an hour.", entry)  # no name at all
    assert not same_tools("Every UI string is translated.", "The UI is tested on iOS.")  # a generic acronym
    weights = TermWeights(["tiles cached varnish hour", "fonts served minio", "tiles rendered mapnik night"])
    mine = frozenset({"tile", "varnish", "hour", "edge", "purg", "region"})
    theirs = frozenset({"tile", "varnish", "hour", "map", "zoom", "layer"})
    assert SUBJECT_MIN <= weighted_overlap(mine, theirs, weights) < weighted_min(None, correction=False)  # 0.18
    args = {"shared": 3, "cosine": None, "semantic": None, "correction": False}
    assert weighted_match(mine, theirs, weights, **args) is None  # type: ignore[arg-type]
    assert weighted_match(mine, theirs, weights, named=True, **args) is not None  # type: ignore[arg-type]


async def test_a_restatement_naming_the_same_tools_revises_its_entry(service: MemoryService) -> None:
    for text in [*MEMORY, "Geodaten werden immer in WGS84 in PostGIS gespeichert, die Datenbank ist PostgreSQL."]:
        await capture(service, UserPrompt(text=text), scope=PROJECT)
    again = await capture(
        service,
        UserPrompt(
            text="Alle Koordinaten liegen in PostGIS, und zwar in WGS84; andere Bezugssysteme speichern wir nicht."
        ),
        scope=PROJECT,
    )
    assert [o.action for o in again.outcomes] != ["added"]


def test_a_compound_part_at_the_seam_is_shared_but_a_short_one_is_not() -> None:
    assert compound_akin("lagerimport", "importiert")  # "import" ends one and starts the other
    assert compound_akin("reconcil", "reconciler")  # what is akin stays akin
    assert not compound_akin("fahrzeugflot", "flottenbuch")  # "flot": too short to be a part
    assert not compound_akin("deployment", "mentor")


async def test_a_german_correction_of_a_replaced_word_revises_the_entry_sharing_a_compound_part(
    service: MemoryService,
) -> None:
    entry, outcomes = await entry_then(
        service,
        MEMORY,
        "Die Lagerbestände werden wöchentlich aus dem SAP importiert.",
        "Der Bestandsimport läuft nicht mehr wöchentlich, sondern jede Nacht über einen Webhook.",
    )
    assert outcomes == [("revised", entry)]
