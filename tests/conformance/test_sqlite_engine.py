"""SQLite-only behaviour: the extension probe, damage found by verify, rebuilds, and lock handling."""

from __future__ import annotations

import asyncio
from pathlib import Path

import apsw
import pytest

from memstone import (
    BackendUnavailable,
    CapabilityNotSupportedError,
    EntryInput,
    IntegrityError,
    RevisionConflictError,
    open_service,
)
from memstone.backends.sqlite import SQLiteMemoryBackend


def raw(path: Path) -> apsw.Connection:
    return apsw.Connection(str(path))


async def seeded(path: Path) -> str:
    async with open_service(f"sqlite:///{path}") as svc:
        rev = await svc.remember(
            None, entries=[EntryInput(kind="fact", text=f"note number {i} about deploys") for i in range(5)]
        )
        assert rev is not None
        return rev.memory_id


async def test_sqlite_vec_loads_and_is_probed_on_every_open(tmp_path: Path) -> None:
    for _ in range(2):
        async with open_service(f"sqlite:///{tmp_path / 'm.db'}") as svc:
            backend = svc.backend
            assert isinstance(backend, SQLiteMemoryBackend)
            assert backend.vec_version and backend.vec_version.startswith("v0.1")


async def test_wal_mode_and_foreign_keys(tmp_path: Path) -> None:
    await seeded(tmp_path / "m.db")
    conn = raw(tmp_path / "m.db")
    assert conn.execute("PRAGMA journal_mode").fetchall()[0][0] == "wal"


async def test_verify_reports_damaged_projection_and_rebuild_repairs_it(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    memory_id = await seeded(path)
    conn = raw(path)
    conn.execute("UPDATE memory_entry_heads SET searchable_text = 'garbage' WHERE projection_id = 1")
    conn.execute("DELETE FROM memory_entry_heads WHERE projection_id = 2")
    conn.close()
    async with open_service(f"sqlite:///{path}") as svc:
        report = await svc.verify()
        assert not report.ok and not report.authority_damage
        assert any("text" in d for d in report.projection_damage)
        assert any("missing" in d for d in report.projection_damage)
        head = await svc.head(memory_id)
        assert len(await svc.search("deploys", memories=[head], mode="fts")) == 3
        fixed = await svc.rebuild_projections()
        assert fixed.ok, fixed
        assert len(await svc.search("deploys", memories=[head], mode="fts")) == 5


async def test_damaged_fts_index_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    await seeded(path)
    conn = raw(path)
    conn.execute(
        "INSERT INTO memory_entry_search_fts (memory_entry_search_fts, rowid, searchable_text) "
        "VALUES ('delete', 3, (SELECT searchable_text FROM memory_entry_heads WHERE projection_id = 3))"
    )
    conn.close()
    async with open_service(f"sqlite:///{path}") as svc:
        report = await svc.verify()
        assert any("full-text" in d for d in report.projection_damage), report
        assert (await svc.rebuild_projections()).ok


async def test_search_rechecks_authority_so_a_stale_projection_never_leaks(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    memory_id = await seeded(path)
    conn = raw(path)
    conn.execute("UPDATE memory_entry_heads SET entry_content_hash = 'bogus' WHERE projection_id = 1")
    conn.execute(
        "UPDATE memory_entry_heads SET entry_version_id = (SELECT entry_version_id FROM "
        "memory_entry_heads WHERE projection_id = 3) WHERE projection_id = 2"
    )
    conn.close()
    async with open_service(f"sqlite:///{path}") as svc:
        head = await svc.head(memory_id)
        hits = await svc.search("deploys", memories=[head], mode="fts", limit=10)
        manifest = await svc.manifest(head)
        for h in hits:
            assert manifest[h.entry_id].entry_version_id == h.entry_version_id
        assert len({h.entry_version_id for h in hits}) == len(hits)


async def test_damaged_authority_is_reported_and_never_repaired(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    await seeded(path)
    conn = raw(path)
    with pytest.raises(apsw.ConstraintError, match="append-only"):
        conn.execute("UPDATE memory_entry_versions SET text = 'tampered'")
    # Someone determined drops the guard and edits the row by hand.
    conn.execute("DROP TRIGGER trg_memory_entry_versions_no_update")
    conn.execute("UPDATE memory_entry_versions SET text = 'tampered' WHERE rowid = 1")
    conn.close()
    async with open_service(f"sqlite:///{path}") as svc:
        report = await svc.verify()
        assert any("content hash" in d for d in report.authority_damage), report
        with pytest.raises(IntegrityError):
            await svc.rebuild_projections()
    conn = raw(path)
    assert conn.execute("SELECT count(*) FROM memory_entry_versions WHERE text = 'tampered'").fetchall() == [(1,)]


async def test_tampered_revision_content_is_damage(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    await seeded(path)
    conn = raw(path)
    conn.execute("DROP TRIGGER trg_artifact_revisions_no_update")
    conn.execute("UPDATE artifact_revisions SET content = replace(content, '\"add\"', '\"revise\"')")
    conn.close()
    async with open_service(f"sqlite:///{path}") as svc:
        report = await svc.verify()
        assert any("content hash" in d or "stored fields" in d for d in report.authority_damage), report


async def test_a_held_lock_surfaces_as_backend_unavailable_not_a_leaked_driver_error(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    memory_id = await seeded(path)
    blocker = raw(path)
    blocker.execute("BEGIN IMMEDIATE")
    try:
        backend = SQLiteMemoryBackend(str(path), busy_timeout_ms=200)
        await backend.open()
        from memstone import MemoryService

        svc = MemoryService(backend)
        head = await svc.head(memory_id)
        with pytest.raises(BackendUnavailable) as info:
            await svc.remember(head, entries=[EntryInput(kind="fact", text="blocked")])
        assert info.value.code == "backend_unavailable"
        await backend.aclose()
    finally:
        blocker.execute("ROLLBACK")
    async with open_service(f"sqlite:///{path}") as svc:
        head = await svc.head(memory_id)
        assert head.revision == 1 and (await svc.verify()).ok


async def test_concurrent_searches_and_writes_share_the_connection_safely(tmp_path: Path) -> None:
    # FTS searches run on the caller's thread when the store is idle and queue behind the worker otherwise;
    # interleaved with writes, every search must see one consistent head and none may trip a threading error.
    async with open_service(f"sqlite:///{tmp_path / 'm.db'}", embedding=None) as svc:
        head = await svc.remember(None, entries=[EntryInput(kind="fact", text="deploy note zero")])
        assert head is not None

        async def write(i: int) -> None:
            for _ in range(20):
                try:
                    current = await svc.head(head.memory_id)
                    await svc.remember(current, entries=[EntryInput(kind="fact", text=f"deploy note {i}")])
                    return
                except RevisionConflictError:
                    await asyncio.sleep(0)

        async def search() -> int:
            current = await svc.head(head.memory_id)
            try:
                found = await svc.search("deploy", memories=[current], mode="fts", limit=50)
            except CapabilityNotSupportedError as exc:  # a write moved the head between reading and searching it
                assert "not the current head" in str(exc)
                return -1
            return len(found.hits)

        results = await asyncio.gather(*(write(i) for i in range(1, 21)), *(search() for _ in range(40)))
        counts = [r for r in results if isinstance(r, int) and r >= 0]
        assert counts and all(1 <= c <= 21 for c in counts)
        final = await svc.head(head.memory_id)
        assert len((await svc.search("deploy", memories=[final], mode="fts", limit=50)).hits) == 21


async def test_search_never_serves_a_version_row_whose_bytes_were_changed(tmp_path: Path) -> None:
    # RFC "Search and reads", condition 3: each hit's canonical bytes are re-checked against the manifest hash;
    # a row changed behind memstone's back is skipped by search and reported by verify, even when this process
    # already served (and verified) that row before it changed.
    path = tmp_path / "m.db"
    memory_id = await seeded(path)
    async with open_service(f"sqlite:///{path}", embedding=None) as svc:
        before = await svc.search("deploys", memories=[memory_id], mode="fts", limit=10)
        assert len(before.hits) == 5
        conn = raw(path)
        conn.execute("DROP TRIGGER trg_memory_entry_versions_no_update")
        conn.execute(
            "UPDATE memory_entry_versions SET text = 'note number 3 about deploys, rewritten' "
            "WHERE text = 'note number 3 about deploys'"
        )
        conn.close()
        found = await svc.search("deploys", memories=[memory_id], mode="fts", limit=10)
        texts = [h.text for h in found.hits]
        assert len(texts) == 4 and all("rewritten" not in t for t in texts)
    async with open_service(f"sqlite:///{path}", embedding=None) as fresh:
        texts = [h.text for h in (await fresh.search("deploys", memories=[memory_id], mode="fts", limit=10)).hits]
        assert len(texts) == 4 and all("rewritten" not in t for t in texts)
        report = await fresh.verify()
        assert any("does not match its content hash" in d for d in report.authority_damage)


async def test_search_skips_a_version_row_whose_tags_or_flags_were_changed(tmp_path: Path) -> None:
    # Every hashed field is re-checked, not only the text: a forged tag or flag on the best hit's version row makes
    # the search serve the next verified entry in its place (limit 1), and never the forged row.
    path = tmp_path / "m.db"
    memory_id = await seeded(path)
    async with open_service(f"sqlite:///{path}", embedding=None) as svc:
        top = (await svc.search("deploys", memories=[memory_id], mode="fts", limit=1)).hits[0]
        second = (await svc.search("deploys", memories=[memory_id], mode="fts", limit=2)).hits[1]
        conn = raw(path)
        conn.execute("DROP TRIGGER trg_memory_entry_versions_no_update")
        conn.execute(
            "UPDATE memory_entry_versions SET tags = '[\"forged\"]' WHERE entry_version_id = ?", (top.entry_version_id,)
        )
        conn.execute(
            "UPDATE memory_entry_versions SET important = 1 WHERE entry_version_id = ?", (second.entry_version_id,)
        )
        conn.close()
        (best,) = (await svc.search("deploys", memories=[memory_id], mode="fts", limit=1)).hits
        assert best.entry_version_id not in (top.entry_version_id, second.entry_version_id)
        found = (await svc.search("deploys", memories=[memory_id], mode="fts", limit=10)).hits
        assert len(found) == 3
        assert not any(h.tags or h.important for h in found)


async def test_search_rechecks_rows_this_process_wrote(tmp_path: Path) -> None:
    # The write's committed columns are kept as verified (a search of them decodes nothing), but a search still
    # compares them with the row as read: a row changed after this process wrote it is never served.
    path = tmp_path / "m.db"
    async with open_service(f"sqlite:///{path}", embedding=None) as svc:
        rev = await svc.remember(
            None, entries=[EntryInput(kind="fact", text=f"note number {i} about deploys") for i in range(5)]
        )
        assert rev is not None
        backend = svc.backend
        assert isinstance(backend, SQLiteMemoryBackend)
        written = set(backend.parts.verified)
        assert len(written) == 5
        conn = raw(path)
        conn.execute("DROP TRIGGER trg_memory_entry_versions_no_update")
        conn.execute("UPDATE memory_entry_versions SET text = text || ' (rewritten)' WHERE text LIKE '%number 3%'")
        conn.execute("UPDATE memory_entry_versions SET tags = '[\"forged\"]' WHERE text LIKE '%number 4%'")
        conn.close()
        found = (await svc.search("deploys", memories=[rev.memory_id], mode="fts", limit=10)).hits
        assert sorted(h.text for h in found) == [f"note number {i} about deploys" for i in range(3)]
        assert {h.entry_version_id for h in found} <= written
