"""A write's duplicate check (``ContentQuery``: one statement that reads the Memory's head and its versions with the
given hashes, ``AuthorityRows.head_versions_by_hash``) on every SQL engine: SQLite, PostgreSQL and OceanBase."""

from __future__ import annotations

from pathlib import Path

import pytest

from memstone import EntryInput, open_service


@pytest.fixture(params=["sqlite", "postgresql", "oceanbase"])
def any_engine_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'm.db'}"
    url: str = request.getfixturevalue("postgres_url" if request.param == "postgresql" else "oceanbase_url")
    return url  # skipped (or failed, in CI) without the server


async def test_the_duplicate_check_names_live_entries_of_this_memory_only(any_engine_url: str) -> None:
    """A write's duplicate check (one statement): a text a live entry of this Memory holds writes nothing and names
    that entry, whichever process wrote it; a forgotten entry's text, or another Memory's, is added anew."""
    async with open_service(any_engine_url, embedding=None) as svc:
        one = await svc.remember(None, entries=[EntryInput(kind="fact", text="Alpha is the first letter.")])
        other = await svc.remember(None, entries=[EntryInput(kind="fact", text="Gamma is the third letter.")])
        assert one is not None and other is not None
        one = await svc.remember(one, entries=[EntryInput(kind="fact", text="Beta is the second letter.")])
        assert one is not None
        (alpha, beta) = sorted(await svc.entries(one), key=lambda e: e.content.text)
    async with open_service(any_engine_url, embedding=None) as svc:  # a process that has read no Revision yet
        same = await svc.remember_outcome(one, entries=[EntryInput(kind="fact", text="Beta is the second letter.")])
        assert same.status == "unchanged" and same.revision == one and same.existing == (beta.entry_id,)
        mixed = await svc.remember_outcome(
            one,
            entries=[
                EntryInput(kind="fact", text="Alpha is the first letter."),
                EntryInput(kind="fact", text="Gamma is the third letter."),  # only the other Memory holds it
            ],
        )
        assert mixed.existing == (alpha.entry_id,) and len(mixed.added) == 1 and mixed.revision is not None
        forgotten = await svc.forget(mixed.revision, entries=[alpha.entry_id])
        again = await svc.remember_outcome(
            forgotten, entries=[EntryInput(kind="fact", text="Alpha is the first letter.")]
        )
        assert again.status != "unchanged" and again.existing == () and len(again.added) == 1
        assert again.revision is not None
        texts = sorted(e.content.text for e in await svc.entries(again.revision))
        assert texts == ["Alpha is the first letter.", "Beta is the second letter.", "Gamma is the third letter."]
