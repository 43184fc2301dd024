"""A SQLite store written before the store bundle keeps working: its old principal tables are migrated in place.

The old principal store created ``auth_*`` tables on its own connection, with a column named ``user``; migration 4
renames it (PostgreSQL reserves the word) and keeps every row, so tokens issued before still authenticate.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import apsw

from memstone import open_service
from memstone.api.http.app import open_principals
from memstone.auth.model import token_hash
from memstone.backends.sqlite import maintenance_schema, migrations
from memstone.capture import CaptureSettings, QueueItem, ReviewQueue, load_capture_settings, save_capture_settings
from memstone.domain.maintenance import MaintenanceEvent
from memstone.ports import MaintenanceStore

FIXTURE = Path(__file__).parent.parent / "fixtures" / "previous-release.db"
SCOPE = "memstone://orgs/acme/projects/web"
SECRET = "mst_" + "a1" * 20

# The DDL of the principal store before the bundle (auth/sqlite.py), as it created the tables.
OLD_AUTH = """
CREATE TABLE auth_principals (principal_id TEXT PRIMARY KEY, user TEXT NOT NULL UNIQUE, org TEXT NOT NULL,
    name TEXT, created_at TEXT NOT NULL) STRICT;
CREATE TABLE auth_tokens (token_id TEXT PRIMARY KEY, principal_id TEXT NOT NULL REFERENCES auth_principals
    (principal_id), token_hash TEXT NOT NULL UNIQUE, prefix TEXT NOT NULL, label TEXT, created_at TEXT NOT NULL,
    revoked_at TEXT) STRICT;
CREATE TABLE auth_grants (principal_id TEXT NOT NULL REFERENCES auth_principals (principal_id), scope TEXT NOT NULL,
    permission TEXT NOT NULL CHECK (permission IN ('read', 'write', 'admin')), created_at TEXT NOT NULL,
    PRIMARY KEY (principal_id, scope)) STRICT;
"""


def old_layout_store(tmp_path: Path) -> Path:
    """The previous release's store with the old principal tables and one principal, token and grant in them."""
    db = tmp_path / "old.db"
    shutil.copyfile(FIXTURE, db)
    conn = apsw.Connection(str(db))
    try:
        conn.execute(OLD_AUTH)
        conn.execute(
            "INSERT INTO auth_principals VALUES ('prn_01OLD', 'bob', 'acme', 'Bob', '2026-01-01T00:00:00.000Z')"
        )
        conn.execute(
            "INSERT INTO auth_tokens VALUES ('tok_01OLD', 'prn_01OLD', ?, ?, 'ci', '2026-01-01T00:00:00.000Z', NULL)",
            (token_hash(SECRET), SECRET[:10]),
        )
        conn.execute(
            "INSERT INTO auth_grants VALUES ('prn_01OLD', 'memstone://orgs/acme/*', 'write', '2026-01-01T00:00:00Z')"
        )
    finally:
        conn.close()
    return db


async def test_old_principal_tables_are_migrated_in_and_keep_working(tmp_path: Path) -> None:
    db = old_layout_store(tmp_path)
    url = f"sqlite:///{db}"
    async with open_service(url, embedding=None) as svc:
        assert 4 in svc.backend.state.applied_migrations
        assert (await svc.verify()).ok
    store = await open_principals(url)
    try:
        access = await store.authenticate(SECRET)
        assert access is not None and access.principal.user == "bob" and access.principal.name == "Bob"
        assert [(g.scope, g.permission) for g in access.grants] == [("memstone://orgs/acme/*", "write")]
        carol = await store.ensure_principal(user="carol", org="acme")  # the migrated tables take new rows
        assert [p.user for p in await store.principals()] == ["bob", "carol"]
        assert carol.principal_id.startswith("prn_")
    finally:
        await store.aclose()
    async with open_service(url, embedding=None) as again:  # opening again migrates nothing
        assert again.backend.state.applied_migrations == ()
        assert again.backend.state.schema_version == migrations.LATEST


def event(event_id: str) -> str:
    return json.dumps(
        {"event_id": event_id, "scope": SCOPE, "kind": "writes_threshold_reached", "at": "2026-01-01T00:00:00Z",
         "writes": 5, "threshold": 5, "head_revision": 5}
    )  # fmt: skip


async def test_maintenance_records_of_schema_3_keep_their_rows_and_order(tmp_path: Path) -> None:
    """Migration 5 rebuilds the record tables with ``seq`` (from the old rowid): nothing lost, order kept."""
    db = tmp_path / "v3.db"
    shutil.copyfile(FIXTURE, db)
    async with open_service(f"sqlite:///{db}", embedding=None):
        pass
    conn = apsw.Connection(str(db))
    try:  # back to the layout of schema version 3 (what migration 3 created), with records in it
        conn.execute("DROP TABLE maintenance_runs; DROP TABLE maintenance_proposals; DROP TABLE maintenance_events")
        conn.execute(maintenance_schema.DDL)
        conn.execute("UPDATE store_meta SET value = '3' WHERE key = 'schema_version'")
        for event_id in ("mevt_Z_first", "mevt_A_second"):  # ids sort the other way round from insertion
            conn.execute("INSERT INTO maintenance_events VALUES (?, ?, ?)", (event_id, SCOPE, event(event_id)))
        conn.execute("INSERT INTO maintenance_ledger VALUES (?, 'ent_1', 'sha256:aa')", (SCOPE,))
    finally:
        conn.close()
    async with open_service(f"sqlite:///{db}", embedding=None) as svc:
        assert svc.backend.state.applied_migrations == tuple(range(4, migrations.LATEST + 1))
        store = svc.backend
        assert isinstance(store, MaintenanceStore)
        assert [e.event_id for e in await store.maintenance_events(SCOPE)] == ["mevt_A_second", "mevt_Z_first"]
        assert await store.maintenance_ledger(SCOPE) == {"ent_1": "sha256:aa"}
        await store.record_maintenance_event(MaintenanceEvent.from_dict(json.loads(event("mevt_M_third"))))
        found = [e.event_id for e in await store.maintenance_events(SCOPE)]
        assert found == ["mevt_M_third", "mevt_A_second", "mevt_Z_first"]


OLD_QUEUE_ITEMS = [
    {"item_id": "cap_01B", "item_type": "candidate", "scope": SCOPE, "memory_id": None, "created_at": "t1",
     "candidate": {"kind": "constraint", "text": "Never log card numbers.", "origin": "statement"},
     "action": "add", "target_entry": None, "evidence": [], "flag": None, "status": "pending",
     "decided_at": None, "decided_by": None, "note": None, "result_entry": None},
    {"item_id": "cap_01A", "item_type": "candidate", "scope": SCOPE, "memory_id": None, "created_at": "t0",
     "candidate": {"kind": "preference", "text": "Prefer table-driven tests.", "origin": "statement"},
     "action": "add", "target_entry": None, "evidence": [], "flag": None, "status": "rejected",
     "decided_at": "t2", "decided_by": "bob", "note": "too generic", "result_entry": None},
]  # fmt: skip


async def test_old_capture_files_beside_the_database_are_moved_in_once(tmp_path: Path) -> None:
    db = tmp_path / "old.db"
    shutil.copyfile(FIXTURE, db)
    settings_file, queue_file = tmp_path / "old.db.capture.json", tmp_path / "old.db.capture-queue.json"
    old_settings = CaptureSettings().with_mode(SCOPE, "review").with_mode(None, "off")
    old_settings.save(settings_file)
    queue_file.write_text(json.dumps({"version": 1, "items": OLD_QUEUE_ITEMS}))
    url = f"sqlite:///{db}"
    async with open_service(url, embedding=None) as svc:
        assert await load_capture_settings(svc) == old_settings
        items = await ReviewQueue.of(svc).items()
        assert [i.to_dict() for i in items] == [QueueItem.from_dict(d).to_dict() for d in OLD_QUEUE_ITEMS]
        # the rejection still holds: the same statement is not queued again
        assert await ReviewQueue.of(svc).add([QueueItem.from_dict({**OLD_QUEUE_ITEMS[1], "item_id": "cap_new"})]) == ()
        await save_capture_settings(svc, CaptureSettings())  # changed in the store after the import
    assert not settings_file.exists() and not queue_file.exists()
    assert json.loads((tmp_path / "old.db.capture-queue.json.imported").read_text())["items"] == OLD_QUEUE_ITEMS
    # A file put back (a restored backup, an interrupted rename) is imported again without duplicating or
    # overwriting: queue items by id, the settings only while the store has none.
    shutil.copyfile(tmp_path / "old.db.capture-queue.json.imported", queue_file)
    old_settings.save(settings_file)
    async with open_service(url, embedding=None) as svc:
        assert len(await ReviewQueue.of(svc).items()) == 2
        assert await load_capture_settings(svc) == CaptureSettings()


async def test_a_corrupt_capture_file_is_left_untouched_and_the_store_opens(tmp_path: Path) -> None:
    db = tmp_path / "old.db"
    shutil.copyfile(FIXTURE, db)
    queue_file = tmp_path / "old.db.capture-queue.json"
    queue_file.write_text("garbage")
    async with open_service(f"sqlite:///{db}", embedding=None) as svc:
        assert await ReviewQueue.of(svc).items() == ()
    assert queue_file.read_text() == "garbage"
