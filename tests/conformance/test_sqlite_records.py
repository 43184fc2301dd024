"""SQLite-only behaviour of the record surface: the archive projection under verify and rebuild, stores made
before the record tables existed, and where the kind policy lives."""

from __future__ import annotations

import json
from pathlib import Path

import apsw

from memstone import EntryInput, open_service
from memstone.backends.sqlite import schema

SCOPE = "memstone://orgs/acme/projects/web"


async def revised_store(path: Path) -> None:
    async with open_service(f"sqlite:///{path}", embedding=None) as svc:
        rev = await svc.remember(None, scope=SCOPE, entries=[EntryInput(kind="fact", text="we deploy with fabric")])
        assert rev is not None
        eid = rev.changes[0].entry_id
        rev = await svc.remember(rev, entries=[EntryInput(kind="fact", text="we deploy with uv", entry=eid)])
        assert rev is not None
        await svc.remember(rev, entries=[EntryInput(kind="fact", text="we deploy with uv, always", entry=eid)])


async def superseded_texts(path: Path, query: str) -> list[str]:
    async with open_service(f"sqlite:///{path}", embedding=None) as svc:
        hits = await svc.search(query, scopes=[SCOPE], mode="fts", include_superseded=True)
        return [h.text for h in hits if h.superseded]


async def test_verify_reports_archive_damage_and_rebuild_repairs_it(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    await revised_store(path)
    conn = apsw.Connection(str(path))
    assert conn.execute("SELECT count(*) FROM memory_entry_archive").fetchall() == [(2,)]
    conn.execute("UPDATE memory_entry_archive SET searchable_text = 'garbage' WHERE archive_id = 1")
    conn.execute("DELETE FROM memory_entry_archive WHERE archive_id = 2")
    conn.close()
    async with open_service(f"sqlite:///{path}", embedding=None) as svc:
        report = await svc.verify()
        assert not report.ok and not report.authority_damage
        assert any("archive projection row" in d for d in report.projection_damage), report
        assert any("missing superseded version" in d for d in report.projection_damage), report
        fixed = await svc.rebuild_projections()
        assert fixed.ok, fixed
    assert await superseded_texts(path, "fabric") == ["we deploy with fabric"]


async def test_a_store_made_before_the_record_tables_gains_them_on_open(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    await revised_store(path)
    conn = apsw.Connection(str(path))
    for name in ("trg_archive_fts_insert", "trg_archive_fts_delete"):
        conn.execute(f"DROP TRIGGER {name}")
    conn.execute("DROP TABLE memory_entry_archive_fts")
    conn.execute("DROP TABLE memory_entry_archive")
    for name in ("idx_memory_entry_heads_slug", "idx_memory_entry_versions_slug", "idx_memory_entry_versions_linked"):
        conn.execute(f"DROP INDEX {name}")
    conn.execute("UPDATE store_meta SET value = '1' WHERE key = 'schema_version'")  # as such a store recorded
    conn.close()
    assert await superseded_texts(path, "fabric") == ["we deploy with fabric"]  # the archive was filled on open
    conn = apsw.Connection(str(path))
    marks = ",".join("?" * len(schema.RECORDS_OBJECTS))
    present = conn.execute(f"SELECT count(*) FROM sqlite_master WHERE name IN ({marks})", schema.RECORDS_OBJECTS)
    assert present.fetchall() == [(len(schema.RECORDS_OBJECTS),)]
    conn.close()
    async with open_service(f"sqlite:///{path}", embedding=None) as svc:
        assert (await svc.verify()).ok


async def test_the_kind_policy_is_recorded_once_in_store_meta(tmp_path: Path) -> None:
    path = tmp_path / "kinds.db"
    async with open_service(f"sqlite:///{path}", embedding=None, closed_kinds=["LESSON", "PATTERN"]) as svc:
        await svc.remember(None, scope=SCOPE, entries=[EntryInput(kind="LESSON", text="learned")])
    conn = apsw.Connection(str(path))
    (value,) = conn.execute("SELECT value FROM store_meta WHERE key = 'kinds'").fetchall()[0]
    assert json.loads(value) == ["lesson", "pattern"]
    conn.close()
    open_path = tmp_path / "open.db"
    async with open_service(f"sqlite:///{open_path}", embedding=None) as svc:
        await svc.remember(None, scope=SCOPE, entries=[EntryInput(kind="anything", text="open")])
    conn = apsw.Connection(str(open_path))
    assert conn.execute("SELECT value FROM store_meta WHERE key = 'kinds'").fetchall() == [("null",)]
    conn.close()
