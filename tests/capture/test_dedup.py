"""Near-duplicates end to end on a real SQLite store: paraphrases land on the live entry, different rules do not."""

from __future__ import annotations

import pytest
from capture_helpers import PROJECT

from memstone import MemoryService
from memstone.capture import UserPrompt, capture


async def live_texts(svc: MemoryService) -> list[str]:
    head = await svc.resolve(PROJECT)
    return sorted(v.text for v in await svc.entries(head)) if head else []


async def test_a_paraphrase_in_other_words_lands_on_the_live_entry(service: MemoryService) -> None:
    first = await capture(
        service,
        UserPrompt(text="Always test on both iOS and Android before saying a UI change is done."),
        scope=PROJECT,
    )
    (entry_id,) = first.entries()
    again = await capture(
        service, UserPrompt(text="Always check both platforms before you say a UI change is done."), scope=PROJECT
    )
    assert again.status == "unchanged"
    assert [(o.action, o.entry_id) for o in again.outcomes] == [("unchanged", entry_id)]
    assert await live_texts(service) == ["Always test on both iOS and Android before saying a UI change is done."]


async def test_a_paraphrase_with_more_detail_revises_the_live_entry(service: MemoryService) -> None:
    first = await capture(service, UserPrompt(text="Never edit generated API clients by hand."), scope=PROJECT)
    (entry_id,) = first.entries()
    detail = "Generated API clients must never be modified by hand; change the OpenAPI spec and regenerate them."
    again = await capture(service, UserPrompt(text=detail), scope=PROJECT)
    assert [(o.action, o.entry_id) for o in again.outcomes] == [("revised", entry_id)]
    history = await service.history(entry_id)
    assert [h.version.text for h in history] == ["Never edit generated API clients by hand.", detail]
    assert await live_texts(service) == [detail]


async def test_a_new_number_revises_the_entry_it_updates(service: MemoryService) -> None:
    first = await capture(service, UserPrompt(text="We use a maximum line length of 100 characters."), scope=PROJECT)
    (entry_id,) = first.entries()
    again = await capture(service, UserPrompt(text="We use a maximum line length of 120 characters."), scope=PROJECT)
    assert [(o.action, o.entry_id) for o in again.outcomes] == [("revised", entry_id)]
    assert await live_texts(service) == ["We use a maximum line length of 120 characters."]
    assert len(await service.history(entry_id)) == 2


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("Always run ruff check before committing.", "Always run ruff format before committing."),
        ("Always run `cargo test` before pushing.", "Always run `cargo fmt --check` before pushing."),
        ("Always run the unit tests before pushing.", "Always run the integration tests before pushing."),
        (
            "We use pytest fixtures with function scope for anything that touches the filesystem.",
            "We use pytest fixtures with session scope for anything that needs the database.",
        ),
    ],
    ids=["ruff-check-vs-format", "cargo-test-vs-fmt-check", "unit-vs-integration", "pytest-fixture-scopes"],
)
async def test_two_conventions_about_the_same_tool_stay_two_entries(
    service: MemoryService, first: str, second: str
) -> None:
    a = await capture(service, UserPrompt(text=first), scope=PROJECT)
    b = await capture(service, UserPrompt(text=second), scope=PROJECT)
    assert [o.action for o in a.outcomes] == ["added"] and [o.action for o in b.outcomes] == ["added"]
    assert a.entries() != b.entries()
    assert await live_texts(service) == sorted([first, second])
    for entry_id in (*a.entries(), *b.entries()):
        assert len(await service.history(entry_id)) == 1  # neither was revised by the other
