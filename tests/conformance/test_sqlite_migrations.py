"""Versioned schema migrations: a store written by the previous release opens, migrates and verifies.

``tests/fixtures/previous-release.db`` was built by ``tests/fixtures/make_previous_release_store.py`` with the
code of commit 08487f5 (schema version 1).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import apsw
import pytest

from memstone import BackendUnavailable, EntryInput, open_service
from memstone.backends.sqlite import migrations

FIXTURE = Path(__file__).parent.parent / "fixtures" / "previous-release.db"


def schema_version(path: Path) -> int:
    conn = apsw.Connection(str(path))
    try:
        return migrations.stored_version(conn)
    finally:
        conn.close()


@pytest.fixture
def old_store(tmp_path: Path) -> Path:
    path = tmp_path / "previous-release.db"
    shutil.copyfile(FIXTURE, path)
    return path


async def test_a_store_of_the_previous_release_opens_migrates_and_verifies(old_store: Path) -> None:
    assert schema_version(old_store) == 1
    async with open_service(f"sqlite:///{old_store}", embedding=None) as svc:
        assert svc.backend.state.applied_migrations == (2, 3, 4)
        assert svc.backend.state.schema_version == migrations.LATEST
        report = await svc.verify()
        assert report.ok, report
        org = await svc.resolve("memstone://orgs/acme")
        assert org is not None and org.revision == 4
        texts = {v.text for v in await svc.entries(org)}
        assert texts == {"We deploy with uv.", "Squash merges only, rebase first.", "Flaky tests hide real races."}
        # The record surface reads what the old release wrote: the renamed slug still redirects.
        assert (await svc.lookup("memstone://orgs/acme", kind="convention", slug="merging")).slug == "merge-policy"
        hits = await svc.search("squash", scopes=["memstone://orgs/acme"], mode="fts", include_superseded=True)
        assert [h.text for h in hits] == ["Squash merges only, rebase first."]
        later = await svc.remember(org, entries=[EntryInput(kind="fact", text="written after the migration")])
        assert later is not None and later.revision == 5
    assert schema_version(old_store) == migrations.LATEST
    async with open_service(f"sqlite:///{old_store}", embedding=None) as again:
        assert again.backend.state.applied_migrations == ()  # current: opening takes no write lock
        assert (await again.verify()).ok


async def test_a_store_newer_than_this_release_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    async with open_service(f"sqlite:///{path}", embedding=None) as svc:
        assert svc.backend.state.applied_migrations == tuple(m.version for m in migrations.MIGRATIONS)
    conn = apsw.Connection(str(path))
    conn.execute("UPDATE store_meta SET value = ? WHERE key = 'schema_version'", (str(migrations.LATEST + 1),))
    conn.close()
    with pytest.raises(BackendUnavailable, match="newer than this memstone"):
        async with open_service(f"sqlite:///{path}", embedding=None):
            pass
