"""Issue 16, third pass: an unmarked change of a subject (a version, a command, a path) revises its entry."""

from __future__ import annotations

from capture_helpers import PROJECT, entry_then

from memstone import MemoryService
from memstone.capture import UserPrompt, capture
from memstone.capture._language import read_sentence
from memstone.capture._text import subject_tokens
from memstone.capture.subjects import changed, replaced_name, values

# A wiki's memory (made-up sentences, in no data file).
MEMORY = [
    "Page history is kept for ninety days and then squashed.",
    "Attachments larger than 20 MB are refused by the upload handler.",
    "Search results are ranked by title match first, then by last edit.",
]


def test_values_are_typed() -> None:
    assert sorted(values("We render diagrams with Kroki 0.24 via `make diagrams`.")) == [
        "cmd:make diagrams",
        "name:kroki",
        "ver:kroki=0.24",
    ]
    assert "ver:events=3" in values("Webhooks go to the events.v3 queue.")
    assert "name:crd" in values("Keep the CRDs backward compatible.")  # an acronym's plural is the acronym
    assert not any(v.startswith("name:") for v in values("Staging is rebuilt every night."))  # a first word


def test_a_new_version_of_the_same_name_is_a_change_and_the_same_version_is_not() -> None:
    old = values("The wiki runs on Kroki 0.24 behind nginx.")
    assert changed(values("We are on Kroki 0.26 since the font fix."), old, overlap=0.0, shared=1) is not None
    assert changed(values("Kroki 0.24 renders the diagrams."), old, overlap=0.0, shared=1) is None


def test_a_change_of_value_needs_a_command_or_a_path_and_a_shared_subject() -> None:
    old = values("Diagrams are rendered with `make diagrams` into docs/img.")
    new = values("Diagrams are rendered by `just render` now.")
    assert changed(new, old, overlap=0.5, shared=2) is not None
    assert changed(new, old, overlap=0.05, shared=2) is None  # the rest of the two texts shares too little
    # Two tool names alone are two rules of one area, not a replacement.
    tools = changed(values("Prefer Kroki over Mermaid for diagrams."), values("Diagrams use the PlantUML theme."),
                    overlap=0.5, shared=2)  # fmt: skip
    assert tools is None


async def _live(service: MemoryService) -> int:
    head = await service.resolve(PROJECT)
    return len(await service.entries(head)) if head is not None else 0


async def test_an_unmarked_command_change_revises_the_entry(service: MemoryService) -> None:
    for text in MEMORY:
        await capture(service, UserPrompt(text=text), scope=PROJECT)
    before = await _live(service)
    (entry,) = (
        await capture(
            service,
            UserPrompt(text="The wiki preview server starts with `make preview` and listens on port 4000."),
            scope=PROJECT,
        )
    ).entries()
    later = await capture(
        service, UserPrompt(text="The preview server for the wiki is `pnpm dev` with Vite, port 5173."), scope=PROJECT
    )
    assert [(o.action, o.entry_id) for o in later.outcomes] == [("revised", entry)]
    assert await _live(service) == before + 1


async def test_an_unmarked_version_change_revises_the_entry(service: MemoryService) -> None:
    for text in MEMORY:
        await capture(service, UserPrompt(text=text), scope=PROJECT)
    (entry,) = (
        await capture(service, UserPrompt(text="The wiki is built against Kroki 0.24 and Pandoc 3.1."), scope=PROJECT)
    ).entries()
    later = await capture(service, UserPrompt(text="We're on Kroki 0.26 since the font fix landed."), scope=PROJECT)
    assert [(o.action, o.entry_id) for o in later.outcomes] == [("revised", entry)]
    other = await capture(service, UserPrompt(text="Mermaid 10.9 is used for the sequence charts."), scope=PROJECT)
    assert [o.action for o in other.outcomes] == ["added"]  # another name: a new fact


def test_a_number_written_out_is_the_number() -> None:
    assert {"30", "ms"} <= subject_tokens("Rebuilt in under thirty milliseconds.")
    assert {"14", "12"} <= subject_tokens("catorce pedidos, twelve retries")


async def test_a_restatement_with_the_number_written_out_is_no_second_entry(service: MemoryService) -> None:
    for text in MEMORY:
        await capture(service, UserPrompt(text=text), scope=PROJECT)
    before = await _live(service)
    await capture(
        service, UserPrompt(text="The editor autosaves a draft every 30 s and keeps 20 drafts."), scope=PROJECT
    )
    again = await capture(
        service, UserPrompt(text="Drafts: autosaved each thirty seconds, twenty of them are kept."), scope=PROJECT
    )
    assert [o.action for o in again.outcomes] != ["added"]
    assert await _live(service) == before + 1


# Sixth pass: a correction of a subject named in prose only (no version, command or path on either side).
def test_a_replaced_term_names_its_entry_only_when_the_entry_names_it() -> None:
    assert replaced_name("Typesense", values("Search is served by Typesense behind the API gateway."))
    assert not replaced_name("nightly", values("The index is rebuilt nightly from the page store."))
    assert read_sentence("We replaced Typesense with Meilisearch in March.").replaced == ("Typesense",)
    assert read_sentence("Die Suche läuft nicht mehr über Solr, sondern über OpenSearch.").replaced == ("Solr",)
    assert (
        "Jenkins"
        in read_sentence("Jenkins haben wir im Mai abgeschafft, die Pipelines laufen jetzt in GitLab.").replaced
    )


async def test_a_correction_that_replaces_a_named_tool_revises_the_entry_that_names_it(
    service: MemoryService,
) -> None:
    entry, outcomes = await entry_then(
        service,
        MEMORY,
        "Full-text search is served by Typesense, one node per region.",
        "We replaced Typesense with Meilisearch after the outage in March.",
    )
    assert outcomes == [("revised", entry)]
    # Naming the same tool without saying it was replaced is not a change of that entry.
    other = await capture(service, UserPrompt(text="Typesense API keys rotate every ninety days."), scope=PROJECT)
    assert [o.action for o in other.outcomes] == ["added"]


def test_a_stated_change_of_a_name_in_prose_is_a_change_and_an_unstated_one_is_not() -> None:
    old = values("Cache keys carry the wiki_ prefix and expire after an hour.")
    new = values("Cache keys carry the pages_ prefix now.")
    assert {"name:wiki_", "name:pages_"} <= old | new
    assert changed(new, old, overlap=0.3, shared=3, stated=True) is not None
    assert changed(new, old, overlap=0.3, shared=3, stated=False) is None  # not said to have changed
    assert changed(new, old, overlap=0.3, shared=1, stated=True) is None  # one shared word is too little
