"""``memstone copy`` carries the whole store bundle (issue 13): principals with their ids and token hashes (a token
issued on the source still authenticates on the target, a revoked one still does not), grants, the capture review
queue, the settings and the maintenance records, SQLite -> PostgreSQL -> SQLite. Before this, copy carried the
history only: the target had no principal, no queue, no maintenance record and no vector."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from memstone import EntryInput, open_service
from memstone.auth.model import PrincipalRecords
from memstone.backends import open_store
from memstone.backends.sql.core import StoreCore
from memstone.domain.ids import EntryId, MemoryId
from memstone.domain.maintenance import MaintenanceEvent, MaintenanceRun, Proposal
from memstone.embedding.hashing import HashingEmbedder
from memstone.ports import ManifestQuery, MemoriesQuery
from memstone.service.copy import CopyReport, copy_urls

WEB = "memstone://orgs/acme/projects/web"
QUEUED = {
    "item_id": "cap_01B", "item_type": "candidate", "scope": WEB, "memory_id": None, "created_at": "t1",
    "candidate": {"kind": "constraint", "text": "Never log card numbers.", "origin": "statement"},
    "action": "add", "target_entry": None, "evidence": [], "flag": None, "status": "pending",
    "decided_at": None, "decided_by": None, "note": None, "result_entry": None,
}  # fmt: skip


async def _bundle_store(url: str) -> tuple[str, str]:
    """A store with history and every other part of the bundle; returns (alice's live token, bob's revoked one)."""
    async with open_service(url, embedding=HashingEmbedder(dimension=32), author="alice") as svc:
        rev = await svc.remember(scope=WEB, entries=[EntryInput(kind="fact", text="We deploy with uv.")])
        assert rev is not None
        backend = svc.backend
        assert isinstance(backend, StoreCore)
        principals = backend.principal_store()
        alice = await principals.ensure_principal(user="alice", org="acme", name="Alice")
        bob = await principals.ensure_principal(user="bob", org="acme")
        await principals.set_grant(alice.principal_id, WEB, "write")
        await principals.set_grant(bob.principal_id, "memstone://orgs/acme/*", "read")
        _, live = await principals.issue_token(alice.principal_id, label="laptop")
        revoked, gone = await principals.issue_token(bob.principal_id)
        await principals.revoke_token(revoked.token_id)
        queue = backend.capture_store()
        await queue.queue_add([QUEUED])
        await queue.put_setting("capture", {"mode": "review", "min_confidence": 0.7}, "2026-01-01T00:00:00Z")
        run = MaintenanceRun(
            run_id="mrun_1", scope=WEB, mode="DRY_RUN", status="COMPLETED", created_at="2026-01-01T00:00:00Z",
            holder="test", memory_id=MemoryId(rev.memory_id), listed=1,
        )  # fmt: skip
        proposal = Proposal(
            proposal_id="mprp_1", run_id="mrun_1", scope=WEB, memory_id=MemoryId(rev.memory_id), kind="slug",
            partition="p", action="rename", entries=(rev.changes[0].entry_id,),
            hashes=((rev.changes[0].entry_id, "sha256:aa"),), evidence="no slug", slug="deploy",
        )  # fmt: skip
        await backend.save_maintenance(run, [proposal], seen={EntryId(rev.changes[0].entry_id): "sha256:aa"})
        await backend.record_maintenance_event(
            MaintenanceEvent.from_dict(
                {
                    "event_id": "mevt_1",
                    "scope": WEB,
                    "kind": "writes_threshold_reached",
                    "at": "2026-01-01T00:00:00Z",
                    "writes": 5,
                    "threshold": 5,
                    "head_revision": 1,
                }
            )
        )
    return live, gone


async def _copy(src_url: str, dst_url: str) -> CopyReport:
    """What ``memstone copy`` runs; the source must verify too."""
    report, source_ok = await copy_urls(src_url, dst_url)
    assert source_ok
    return report


async def _everything(url: str) -> dict[str, object]:
    """What the bundle holds besides the history, read through the store's own APIs."""
    store = (await open_store(url, create=False)).memory
    try:
        assert isinstance(store, StoreCore)
        principals = store.principal_store(read_only=True)
        records = await principals.records()
        queue = store.capture_store()
        ids = [
            m.entry_version_id
            for head in await store.read(MemoriesQuery())
            for m in (await store.read(ManifestQuery(ref=head.ref))).values()
        ]
        return {
            "vectors": await store.stored_vectors(ids),
            "principals": records,
            "queue": [json.dumps(i, sort_keys=True) for i in await queue.queue_items()],
            "setting": await queue.setting("capture"),
            "runs": [r.to_dict() for r in await store.maintenance_runs()],
            "proposals": [p.to_dict() for p in await store.maintenance_proposals()],
            "events": [e.to_dict() for e in await store.maintenance_events(WEB)],
            "ledger": await store.maintenance_ledger(WEB),
            "rows": await store.bundle_rows(),
        }
    finally:
        await store.aclose()


async def _authenticates(url: str, token: str) -> str | None:
    store = (await open_store(url, create=False)).memory
    try:
        assert isinstance(store, StoreCore)
        access = await store.principal_store(read_only=True).authenticate(token)
        return None if access is None else f"{access.principal.user}:{[g.scope for g in access.grants]}"
    finally:
        await store.aclose()


async def test_copy_carries_principals_tokens_queue_settings_and_maintenance_there_and_back(
    postgres_url: str, tmp_path: Path
) -> None:
    source, final = f"sqlite:///{tmp_path / 'source.db'}", f"sqlite:///{tmp_path / 'final.db'}"
    live, revoked = await _bundle_store(source)
    before = await _everything(source)
    assert before["queue"] and before["runs"] and before["proposals"] and before["events"] and before["ledger"]
    assert before["vectors"]

    there = await _copy(source, postgres_url)
    back = await _copy(postgres_url, final)

    for report in (there, back):
        assert report.verify_ok, report.damage
        assert report.principal_rows == 2 + 2 + 2  # principals, tokens, grants
        assert report.record_rows == 1 + 1 + 1 + 1 + 1 + 1  # setting, queue item, run, proposal, event, ledger
        assert report.vectors == 1 and report.notes == ()  # carried, nothing left to embed
    for url in (postgres_url, final):
        assert await _everything(url) == before
        assert await _authenticates(url, live) == f"alice:{[WEB]}"
        assert await _authenticates(url, revoked) is None
    again = await _copy(source, final)  # a re-run writes nothing twice
    assert (again.principal_rows, again.record_rows, again.revisions_written) == (0, 0, 0)


async def test_a_revocation_and_a_decision_at_the_source_reach_an_earlier_copy(tmp_path: Path) -> None:
    source, target = f"sqlite:///{tmp_path / 'source.db'}", f"sqlite:///{tmp_path / 'target.db'}"
    live, _ = await _bundle_store(source)
    await _copy(source, target)
    assert await _authenticates(target, live) is not None
    store = (await open_store(source, create=False)).memory
    try:
        assert isinstance(store, StoreCore)
        principals = store.principal_store()
        (token,) = await principals.tokens(user="alice")
        await principals.revoke_token(token.token_id)
        await store.capture_store().queue_decide("cap_01B", {**QUEUED, "status": "rejected", "decided_by": "bob"})
    finally:
        await store.aclose()
    report = await _copy(source, target)
    assert (report.principal_rows, report.record_rows) == (1, 1)
    assert await _authenticates(target, live) is None
    assert await _everything(target) == await _everything(source)


async def test_a_rerun_deletes_what_the_source_deleted_since_and_keeps_the_targets_own_rows(
    engine_url: str, tmp_path: Path
) -> None:
    source = f"sqlite:///{tmp_path / 'source.db'}"
    await _bundle_store(source)
    await _copy(source, engine_url)
    target = (await open_store(engine_url, create=False)).memory
    try:  # the target's own principal and grant: no copy may take them away
        assert isinstance(target, StoreCore)
        carol = await target.principal_store().ensure_principal(user="carol", org="acme")
        await target.principal_store().set_grant(carol.principal_id, WEB, "read")
    finally:
        await target.aclose()
    store = (await open_store(source, create=False)).memory
    try:  # at the source: a grant removed, a ledger entry unseen
        assert isinstance(store, StoreCore)
        principals = store.principal_store()
        bob = await principals.ensure_principal(user="bob", org="acme")
        await principals.set_grant(bob.principal_id, "memstone://orgs/acme/*", None)
        (run,) = await store.maintenance_runs()
        await store.save_maintenance(run, unseen=list(await store.maintenance_ledger(WEB)))
    finally:
        await store.aclose()
    with sqlite3.connect(tmp_path / "source.db") as db:  # and a setting and a queue row gone (no API deletes them)
        db.execute("DELETE FROM store_settings WHERE name = 'capture'")
        db.execute("DELETE FROM capture_queue WHERE item_id = 'cap_01B'")

    report = await _copy(source, engine_url)
    assert (report.principal_rows, report.record_rows) == (1, 3)  # bob's grant; the setting, the queue row, ledger
    after, want = await _everything(engine_url), await _everything(source)
    for part in ("queue", "setting", "runs", "proposals", "events", "ledger", "rows"):
        assert after[part] == want[part], part
    assert after["setting"] is None and after["queue"] == [] and after["ledger"] == {}
    records = after["principals"]
    assert isinstance(records, PrincipalRecords)
    grants = {(g[0], g[1]) for g in records.grants}
    assert (bob.principal_id, "memstone://orgs/acme/*") not in grants
    assert (carol.principal_id, WEB) in grants  # the target's own grant stays
    again = await _copy(source, engine_url)  # converged: nothing more to do
    assert (again.principal_rows, again.record_rows, again.revisions_written) == (0, 0, 0)
