"""The stale judge (issue #14, item 3): a code-anchored memory whose cited file changed in git, and a summary
whose summarized entry changed after it, are proposed stale, tagged stale on accept, and shown as stale.

A real git repository in a temporary directory and a real store; no model.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
from pathlib import Path

import pytest

import memstone
from memstone import EntryInput, MemoryService
from memstone.domain.errors import InvalidInput
from memstone.domain.model import EntryPatch, Relation
from memstone.maintenance import JudgeSettings, MaintenanceSettings, decide, maintain, proposals, runs
from memstone.maintenance.daemon import Daemon, DaemonSettings
from memstone.maintenance.queue import enqueue

WEB = "memstone://orgs/acme/projects/web"
APP = "import os\n\ndef port() -> int:\n    return int(os.environ.get('PORT', '8080'))\n\nDEBUG = False\n"


def git(repo: Path, *args: str, date: str = "2020-01-01T00:00:00Z") -> None:
    env = {**os.environ, "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
    cmd = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.org", *args]
    subprocess.run(cmd, check=True, capture_output=True, env=env)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    (root / "app.py").write_text(APP)
    (root / "README.md").write_text("# app\n")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "init")
    return root


async def cite(svc: MemoryService, text: str, uri: str, excerpt: str) -> str:
    src = await svc.record_source("file", excerpt, uri=uri)
    rev = await svc.remember(scope=WEB, entries=[EntryInput(kind="fact", text=text)], sources=[src])
    assert rev is not None
    return next(v.entry_id for v in await svc.entries(rev) if v.text == text)


def settings(repo: Path) -> MaintenanceSettings:
    return MaintenanceSettings(judges=JudgeSettings(repo=str(repo)))


async def test_a_cited_file_changed_in_git_is_proposed_stale_and_tagged_on_apply(
    svc: MemoryService, repo: Path
) -> None:
    excerpt = "def port() -> int:\n    return int(os.environ.get('PORT', '8080'))"
    eid = await cite(svc, "The app listens on PORT, 8080 by default.", "file://app.py#L3-L4", excerpt)
    other = await cite(svc, "The app has a README.", "file:README.md", "# app\n")
    first = await maintain(svc, scope=WEB, mode="apply", settings=settings(repo))
    assert [p for p in first.proposals if p.kind == "stale"] == []  # the cited lines still say it
    (repo / "README.md").write_text("# app\n\nMore.\n")
    git(repo, "commit", "-qam", "docs")  # committed in 2020, before the memory: not newer than it
    (repo / "app.py").write_text(APP.replace("8080", "9000"))
    dry = await maintain(svc, scope=WEB, settings=settings(repo))
    (flag,) = dry.proposals
    assert flag.kind == "stale" and flag.action == "flag_stale" and flag.entries == (eid,)
    assert "app.py#L3-L4" in flag.evidence and "uncommitted" in flag.evidence
    git(repo, "commit", "-qam", "port 9000", date="2099-01-01T00:00:00Z")
    applied = await maintain(svc, scope=WEB, mode="apply", settings=settings(repo))
    (done,) = applied.proposals
    assert done.status == "APPLIED" and "after the entry was written" in done.evidence
    assert "stale" in (await svc.get(eid)).content.tags
    assert "stale" not in (await svc.get(other)).content.tags
    again = await maintain(svc, scope=WEB, mode="apply", settings=settings(repo))
    assert again.run.listed == 0 and again.proposals == ()  # already flagged: not proposed again


async def test_a_deleted_cited_file_is_stale_and_no_repository_means_no_evidence_check(
    svc: MemoryService, repo: Path
) -> None:
    eid = await cite(svc, "Debug is off in production.", "file://app.py#L6", "DEBUG = False")
    await maintain(svc, scope=WEB, mode="apply", settings=settings(repo))
    git(repo, "rm", "-q", "app.py")
    assert (await maintain(svc, scope=WEB)).proposals == ()  # no repository named: not judged
    (flag,) = (await maintain(svc, scope=WEB, settings=settings(repo))).proposals
    assert flag.entries == (eid,) and "deleted" in flag.evidence


async def test_a_rejected_stale_proposal_is_not_made_again_on_the_same_content(svc: MemoryService, repo: Path) -> None:
    eid = await cite(svc, "Debug is off in production.", "file://app.py#L6", "DEBUG = False")
    await maintain(svc, scope=WEB, mode="apply", settings=settings(repo))
    (repo / "app.py").write_text(APP.replace("DEBUG = False", "DEBUG = True"))
    (flag,) = (await maintain(svc, scope=WEB, settings=settings(repo))).proposals
    await decide(svc, flag.proposal_id, accept=False)
    assert (await maintain(svc, scope=WEB, mode="apply", settings=settings(repo))).proposals == ()
    await svc.update(eid, EntryPatch(text="Debug is on, for now."))
    (again,) = [p for p in (await maintain(svc, scope=WEB, settings=settings(repo))).proposals if p.kind == "stale"]
    assert again.entries == (eid,)  # a new version is judged afresh


async def test_a_summary_whose_summarized_entry_changed_is_stale(svc: MemoryService) -> None:
    rev = await svc.remember(scope=WEB, entries=[EntryInput(kind="decision", text="We deploy with uv on Fridays.")])
    assert rev is not None
    (target,) = [v.entry_id for v in await svc.entries(rev)]
    summary = EntryInput(
        kind="fact",
        text="Summary: deployment uses uv, once a week.",
        relations=(Relation(kind="summarizes", target=target),),
    )
    rev = await svc.remember(rev, entries=[summary])
    assert rev is not None
    sid = next(v.entry_id for v in await svc.entries(rev) if v.entry_id != target)
    assert (await maintain(svc, scope=WEB, mode="apply")).proposals == ()
    await svc.update(target, EntryPatch(text="We deploy with uv on Tuesdays and Thursdays."))
    report = await maintain(svc, scope=WEB, mode="apply")
    (flag,) = [p for p in report.proposals if p.kind == "stale"]
    assert flag.entries == (sid,) and flag.status == "APPLIED" and target in flag.evidence
    assert "stale" in (await svc.get(sid)).content.tags


async def test_a_directory_outside_git_is_refused_by_name(svc: MemoryService, tmp_path: Path) -> None:
    await cite(svc, "Debug is off in production.", "file://app.py#L6", "DEBUG = False")
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(InvalidInput, match="not inside a git work tree"):
        await maintain(svc, scope=WEB, settings=settings(plain))


async def test_a_stale_entry_is_shown_stale_in_search_hits_recall_and_records(svc: MemoryService, repo: Path) -> None:
    eid = await cite(svc, "Debug is off in production.", "file://app.py#L6", "DEBUG = False")
    await cite(svc, "Debug logging goes to stderr.", "file:README.md", "# app\n")
    (repo / "app.py").write_text(APP.replace("DEBUG = False", "DEBUG = True"))
    await maintain(svc, scope=WEB, mode="apply", settings=settings(repo))
    hits = {h.entry_id: h for h in (await svc.search("debug", scopes=[WEB], mode="fts")).hits}
    assert hits[eid].stale and hits[eid].to_dict()["stale"] is True
    assert [h.stale for i, h in hits.items() if i != eid] == [False]
    bundle = await svc.recall("debug", scopes=[WEB])
    assert {h.entry_id: h.stale for h in bundle.contextual}[eid] is True
    (record,) = [r for r in await svc.list(scopes=[WEB]) if r.entry_id == eid]
    assert record.stale and record.to_dict()["stale"] is True


async def test_a_queued_request_keeps_its_callers_repository_for_the_daemon_that_carries_it_out(
    db_url: str, repo: Path
) -> None:
    async with memstone.open_service(db_url, embedding=None) as caller:
        eid = await cite(caller, "Debug is off in production.", "file://app.py#L6", "DEBUG = False")
        await maintain(caller, scope=WEB, mode="apply", settings=settings(repo))  # seen, not stale
        (repo / "app.py").write_text(APP.replace("DEBUG = False", "DEBUG = True"))
        (repo / "docs").mkdir()
        request = await enqueue(caller, scope=WEB, repo=str(repo / "docs"))  # any directory of the work tree
        assert request.repo == str(repo.resolve())
        with pytest.raises(InvalidInput, match="not inside a git work tree"):
            await enqueue(caller, scope=WEB, repo=str(repo.parent))  # refused when asked, nothing queued
    async with memstone.open_service(db_url, embedding=None) as worker:  # another service, knowing no repository
        daemon = Daemon(worker, DaemonSettings(once=True))
        assert await daemon.run(asyncio.Event()) == 0
        (run,) = [r for r in await runs(worker, scope=WEB) if r.run_id == request.run_id]
        assert run.status == "COMPLETED" and run.repo == str(repo.resolve())
        (flag,) = await proposals(worker, run_id=run.run_id)
        assert flag.kind == "stale" and flag.entries == (eid,) and "app.py#L6" in flag.evidence


async def test_a_queued_request_whose_repository_is_gone_is_recorded_failed_with_the_reason(
    db_url: str, repo: Path
) -> None:
    async with memstone.open_service(db_url, embedding=None) as svc:
        await cite(svc, "Debug is off in production.", "file://app.py#L6", "DEBUG = False")
        request = await enqueue(svc, scope=WEB, repo=str(repo))
        shutil.rmtree(repo)  # removed before the daemon got to it (or the request came from another machine)
        daemon = Daemon(svc, DaemonSettings(once=True))
        assert await daemon.run(asyncio.Event()) == 0  # the loop is not failing: the request is
        (run,) = [r for r in await runs(svc, scope=WEB) if r.run_id == request.run_id]
        assert run.status == "FAILED" and "not inside a git work tree" in (run.error or "")
        assert (await maintain(svc, scope=WEB)).run.status == "COMPLETED"  # its lease was released
