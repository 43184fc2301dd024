"""The sync folder: editable Markdown, one file per entry, kept in step with the store both ways."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from memstone import EntryInput, InvalidInput, MemoryService
from memstone.importers import import_from
from memstone.importers.folder import SyncReport, parse_file, sync_folder, watch_folder

from .conftest import PROJECT, revision_count, write

CLAUDE = """
# Web

- Never push to main directly
- Always run `pnpm test` before pushing
- Prefer squash merges
- Keep PRs under 300 lines
- Use conventional commit messages

## Stack

We deploy on Fly.io from GitHub Actions.
"""


def file_of(folder: Path, start: str) -> Path:
    (found,) = [p for p in folder.rglob("*.md") if parse_file(p, folder).text.startswith(start)]
    return found


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text("utf-8")
    at = text.rindex(old)  # the last occurrence: the body, not a slug that starts with the same words
    path.write_text(text[:at] + new + text[at + len(old) :], "utf-8")


async def test_import_sync_edit_add_delete_sync(svc: MemoryService, tmp_path: Path) -> None:
    write(tmp_path / "repo", "CLAUDE.md", CLAUDE)
    await import_from(svc, "claude-md", tmp_path / "repo", scope=PROJECT)
    folder = tmp_path / "memories"
    first = await sync_folder(svc, folder)
    assert len(first.files_written) == 6 and not first.conflicts
    never = file_of(folder, "Never push")
    assert never.relative_to(folder).parts[:5] == ("orgs", "acme", "projects", "web", "constraint")

    # three edits by hand: the text, a flag, the title
    edit(never, "directly", "directly; open a PR")
    edit(file_of(folder, "Prefer squash"), "mandatory: false", "mandatory: true")
    edit(file_of(folder, "Keep PRs"), 'title: "Web"', 'title: "Pull requests"')
    # a stale edit: the store moves on after the folder was written, then the file is edited
    stale = file_of(folder, "Use conventional")
    stale_id = parse_file(stale, folder).entry_id
    assert stale_id is not None
    current = await svc.get(stale_id)
    await svc.remember(
        await svc.head(current.memory_id),
        entries=[EntryInput(entry=current, kind="convention", text="Use conventional commits (feat:, fix:)")],
    )
    edit(stale, "messages", "messages, with a scope")
    stale_bytes = stale.read_bytes()
    # one new file, one deleted
    write(folder, "orgs/acme/projects/web/decision/fly.md", "---\ntitle: Hosting\n---\nWe host on Fly.io.\n")
    deleted = file_of(folder, "We deploy on Fly")
    deleted_id = parse_file(deleted, folder).entry_id
    deleted.unlink()
    before = await revision_count(svc)

    report = await sync_folder(svc, folder)
    assert len(report.new_versions) == 3 and len(report.new_entries) == 1 and report.forgotten == [deleted_id]
    (conflict,) = report.conflicts
    assert conflict.entry_id == stale_id and conflict.base_version_id == current.entry_version_id
    assert conflict.current_version_id != current.entry_version_id
    assert stale.read_bytes() == stale_bytes  # left for the user
    assert await revision_count(svc) == before + 2  # edits + new entry in one Revision, the forget in another

    for eid in report.new_versions:
        history = await svc.history(eid)
        assert len(history) == 2 and history[-1].version.provenance.surface == "human"
    records = {r.entry_id: r for r in await svc.list(scopes=[PROJECT])}
    assert records[report.new_entries[0]].kind == "decision" and records[report.new_entries[0]].title == "Hosting"
    assert deleted_id not in records
    assert "ent_" in (folder / "orgs/acme/projects/web/decision/fly.md").read_text("utf-8")  # now carries its id

    # a second sync changes nothing and still reports the conflict
    again = await sync_folder(svc, folder)
    assert not again.changed and len(again.conflicts) == 1
    # deleting the conflicted file takes the store's version back
    stale.unlink()
    resolved = await sync_folder(svc, folder)
    assert not resolved.conflicts and not resolved.forgotten and len(resolved.files_written) == 1
    assert "(feat:, fix:)" in (folder / resolved.files_written[0]).read_text("utf-8")


async def test_store_changes_reach_the_folder(svc: MemoryService, tmp_path: Path) -> None:
    rev = await svc.remember(
        None, scope=PROJECT, entries=[EntryInput(kind="fact", text="One"), EntryInput(kind="fact", text="Two")]
    )
    assert rev is not None
    folder = tmp_path / "f"
    await sync_folder(svc, folder)
    one, two = (await svc.entries(rev))[0], (await svc.entries(rev))[1]
    rev = await svc.remember(rev, entries=[EntryInput(entry=one, kind="fact", text="One, revised")])
    await svc.forget(rev, entries=[two.entry_id])
    report = await sync_folder(svc, folder)
    assert len(report.files_written) == 1 and len(report.files_removed) == 1 and not report.new_versions
    assert [parse_file(p, folder).text for p in folder.rglob("*.md")] == ["One, revised"]


async def test_watch_picks_up_an_edit(svc: MemoryService, tmp_path: Path) -> None:
    await svc.remember(None, scope=PROJECT, entries=[EntryInput(kind="fact", text="Watched")])
    folder = tmp_path / "w"
    reports: list[SyncReport] = []
    stop = asyncio.Event()
    task = asyncio.create_task(watch_folder(svc, folder, interval=0.02, on_sync=reports.append, stop=stop))
    try:
        async with asyncio.timeout(10):
            while not reports:
                await asyncio.sleep(0.01)
            (path,) = folder.rglob("*.md")
            edit(path, "Watched", "Watched and edited")
            while not any(r.new_versions for r in reports):
                await asyncio.sleep(0.01)
    finally:
        stop.set()
        await task
    (record,) = await svc.list(scopes=[PROJECT])
    assert record.text == "Watched and edited" and record.version.provenance.surface == "human"


async def test_a_moved_file_keeps_its_entry_and_a_copied_one_is_refused(svc: MemoryService, tmp_path: Path) -> None:
    await svc.remember(None, scope=PROJECT, entries=[EntryInput(kind="fact", text="Movable", slug="movable")])
    folder = tmp_path / "f"
    await sync_folder(svc, folder)
    (path,) = folder.rglob("*.md")
    moved = path.with_name("renamed.md")
    path.rename(moved)
    report = await sync_folder(svc, folder)
    assert not report.forgotten and not report.new_entries and not report.conflicts
    assert len(await svc.list(scopes=[PROJECT])) == 1
    copy = moved.with_name("copy.md")
    copy.write_bytes(moved.read_bytes())
    head = await svc.resolve(PROJECT)
    with pytest.raises(InvalidInput) as err:
        await sync_folder(svc, folder)
    assert "is also the file" in str(err.value)
    assert await svc.resolve(PROJECT) == head  # nothing was written


async def test_a_bad_file_stops_the_sync_before_any_change(svc: MemoryService, tmp_path: Path) -> None:
    await svc.remember(None, scope=PROJECT, entries=[EntryInput(kind="fact", text="Stays")])
    folder = tmp_path / "f"
    await sync_folder(svc, folder)
    write(folder, "orgs/acme/projects/web/fact/bad.md", "---\nimportant: perhaps\n---\ntext\n")
    (good,) = [p for p in folder.rglob("*.md") if p.name != "bad.md"]
    good.unlink()
    with pytest.raises(InvalidInput, match="important must be true or false"):
        await sync_folder(svc, folder)
    assert [r.text for r in await svc.list(scopes=[PROJECT])] == ["Stays"]  # the deletion was not applied
