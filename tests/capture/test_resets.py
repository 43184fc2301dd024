"""Issue 16 (capcorr7): a statement that sets a stored subject to another value (a versioned name, a kind of value
or a role that one live entry holds) passes admission as a correction even with no durable-signal word, and revises
that entry (capture/resets.py); a question, a one-off request or pasted output naming the same subject does not."""

# ruff: noqa: E501  (tables of statements read better unwrapped)

from __future__ import annotations

import pytest
from capture_helpers import PROJECT

from memstone import MemoryService
from memstone.capture import UserPrompt, capture
from memstone.capture.resets import resets
from memstone.capture.targets import Target

FILLER = "Translations live in the Crowdin project and are synced every night."


@pytest.mark.parametrize(
    ("entry", "change"),
    [
        pytest.param("Der Server läuft mit Ktor 2.3 auf der JVM.", "The backend is on Ktor 3.0.", id="version-de-en-bare"),
        pytest.param("The JVM target is Java 17.", "JVM 타깃은 Java 21입니다.", id="version-hangul-particle"),
        pytest.param("Die Produktsuche läuft über Meilisearch.", "The product search is Typesense.", id="role-de-en-bare"),
        pytest.param("Die Frostwarnung löst bei 0,5 °C aus, gemessen am Bodensensor.", "The frost alarm threshold is 1 °C above the ground sensor.", id="unit-de-en-bare"),
    ],
)  # fmt: skip
async def test_a_bare_setting_revises_the_entry_holding_its_subject(
    service: MemoryService, entry: str, change: str
) -> None:
    (entry_id,) = (await capture(service, UserPrompt(text=entry), scope=PROJECT)).entries()
    await capture(service, UserPrompt(text=FILLER), scope=PROJECT)  # the entry is not the one just written
    result = await capture(service, UserPrompt(text=change), scope=PROJECT)
    assert [(o.action, o.entry_id) for o in result.outcomes if o.action != "rejected"] == [("revised", entry_id)]


@pytest.mark.parametrize(
    "junk",
    [
        pytest.param("Which Ktor version are we on, 3.0?", id="question"),
        pytest.param("For this PR, set the frost alarm to 2 °C so I can test the SMS path.", id="one-off"),
        pytest.param("Maybe we should move the search to Typesense one day.", id="speculation"),
        pytest.param("Build log:\nktor 3.0 resolved\nBUILD SUCCESSFUL in 41s", id="pasted-output"),
    ],
)  # fmt: skip
async def test_a_line_that_names_a_stored_subject_without_setting_it_changes_nothing(
    service: MemoryService, junk: str
) -> None:
    for text in (
        "Der Server läuft mit Ktor 2.3 auf der JVM.",
        "Die Frostwarnung löst bei 0,5 °C aus, gemessen am Bodensensor.",
        "Die Produktsuche läuft über Meilisearch.",
    ):
        await capture(service, UserPrompt(text=text), scope=PROJECT)
    result = await capture(service, UserPrompt(text=junk), scope=PROJECT)
    assert [o.action for o in result.outcomes if o.action in ("added", "revised")] == []


def _target(text: str, written: str) -> Target:
    return Target(
        entry_id=None, entry_version_id=None, kind="fact", text=text, slug=None, plan_index=None, written=written
    )


def test_a_kind_or_role_held_by_two_entries_names_neither() -> None:
    two_tools = [_target("The web shop installs packages with npm.", "1"), _target("Die Admin-App nutzt pnpm.", "2")]
    assert resets("The mobile app keeps its packages with yarn.", two_tools) is None
    two_units = [_target("Sessions expire after 30 minutes.", "1"), _target("Carts are emptied after 90 minutes.", "2")]
    assert resets("Tokens last 15 minutes.", two_units) is None
    one_unit = two_units[:1]
    assert resets("Tokens last 15 minutes.", one_unit) is one_unit[0]
    assert resets("Tokens last 15 minutes.", one_unit, bare=False) is None  # not a bare setting: no kind alone
    assert resets("Tokens last 30 minutes.", one_unit) is None  # the same value: nothing set anew
