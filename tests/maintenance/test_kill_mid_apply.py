"""``kill -9`` of the daemon while it applies proposals (issue #14, item 7): the store verifies, each proposal is
applied as a whole Revision or not at all, and the next run finishes what the killed one left undecided.

The daemon is a real ``memstone daemon`` process, killed with SIGKILL once some of its run's proposals are
applied and others are not; a second case builds the narrowest window by hand: a proposal whose Revision
committed but whose decision was never recorded.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import replace

import memstone
from memstone import EntryInput, MemoryService
from memstone.domain.maintenance import MaintenanceRun, Proposal
from memstone.maintenance import maintain, proposals, runs
from memstone.maintenance.apply import apply_proposal
from memstone.maintenance.queue import enqueue

WEB = "memstone://orgs/acme/projects/web"
WORDS = ("alpha", "bravo", "cobalt", "delta", "ember", "falcon", "garnet", "harbor", "indigo", "juniper", "kestrel")
PAIRS = 40


def restatements(n: int) -> list[EntryInput]:
    """``n`` distinct rules, each written twice in other words (the duplicate judge pairs them, and only them)."""
    out = []
    for i in range(n):
        tool, service = f"{WORDS[i % len(WORDS)]}{WORDS[(i * 7 + 3) % len(WORDS)]}{i}", WORDS[(i * 5) % len(WORDS)]
        out.append(EntryInput(kind="convention", text=f"Always run {tool} before pushing the {service} service."))
        out.append(EntryInput(kind="convention", text=f"Run {tool} before you push the {service} service, always."))
    return out


async def whole_or_nothing(svc: MemoryService, made: list[Proposal]) -> tuple[int, int]:
    """Check every merge proposal is wholly applied or not at all; returns (applied, untouched)."""
    head = await svc.resolve(WEB)
    assert head is not None
    manifest = await svc.manifest(head)
    applied = untouched = 0
    for p in made:
        survivor, absorbed = p.entries
        states = (manifest[survivor].state, manifest[absorbed].state)
        if states == ("active", "active"):
            assert {e: manifest[e].entry_content_hash for e in p.entries} == dict(p.hashes), p  # not half-written
            untouched += 1
        else:
            assert states == ("active", "inactive"), (p, states)
            applied += 1
    return applied, untouched


def cli(url: str) -> list[str]:
    return [sys.executable, "-c", "from memstone.cli.main import main; main()", "--url", url]


async def test_kill_9_of_the_daemon_mid_apply_leaves_whole_proposals_and_a_rerun_finishes_them(
    db_url: str, tmp_path: object
) -> None:
    env = {**os.environ, "MEMSTONE_EMBEDDING": "none", "HOME": str(tmp_path)}
    async with memstone.open_service(db_url, embedding=None) as svc:
        await svc.remember(scope=WEB, entries=restatements(PAIRS))
        request = await enqueue(svc, scope=WEB, mode="apply")
        proc = subprocess.Popen([*cli(db_url), "daemon", "--once", "--quiet"], env=env)  # carries out the request
        try:
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline and proc.poll() is None:
                done = await proposals(svc, run_id=request.run_id, status="APPLIED")
                if done:
                    break
                await asyncio.sleep(0.02)
            assert proc.poll() is None, "the daemon finished before it could be killed mid-apply"
            proc.send_signal(signal.SIGKILL)
            assert proc.wait(timeout=30) == -signal.SIGKILL
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        made = await proposals(svc, run_id=request.run_id)
        assert len(made) == PAIRS and all(p.kind == "duplicate" for p in made)
        recorded = sum(p.status == "APPLIED" for p in made)
        assert 0 < recorded < PAIRS  # killed between the first and the last proposal
        (killed,) = await runs(svc, scope=WEB)
        assert killed.status == "RUNNING"  # as the killed process left it

    verify = subprocess.run([*cli(db_url), "verify", "--json"], env=env, capture_output=True, text=True)
    assert verify.returncode == 0, verify.stdout + verify.stderr
    assert json.loads(verify.stdout)["ok"] is True

    async with memstone.open_service(db_url, embedding=None) as svc:
        applied, untouched = await whole_or_nothing(svc, made)
        # At most one proposal sits between its Revision's commit and its recorded decision.
        assert recorded <= applied <= recorded + 1 and applied + untouched == PAIRS
        rerun = await maintain(svc, scope=WEB, mode="apply")  # takes over the dead process's lease at once
        assert rerun.run.status == "COMPLETED" and rerun.run.queued_behind is None
        after = await proposals(svc, run_id=request.run_id)
        assert [p.status for p in after] == ["APPLIED"] * PAIRS  # the rerun finished the killed run's proposals
        assert await whole_or_nothing(svc, made) == (PAIRS, 0)
        head = await svc.resolve(WEB)
        assert head is not None and head.active_count == PAIRS  # each rule once, nothing merged twice
        (old,) = [r for r in await runs(svc, scope=WEB) if r.run_id == request.run_id]
        assert old.status == "FAILED" and old.totals["status:APPLIED"] == PAIRS
    again = subprocess.run([*cli(db_url), "verify", "--json"], env=env, capture_output=True, text=True)
    assert again.returncode == 0 and json.loads(again.stdout)["ok"] is True


async def test_a_proposal_committed_before_its_decision_was_recorded_is_found_applied_not_written_twice(
    svc: MemoryService,
) -> None:
    await svc.remember(scope=WEB, entries=restatements(2))
    judged = (await maintain(svc, scope=WEB)).proposals  # a dry run: two merge proposals, as the dead run made
    store = svc.backend
    dead = MaintenanceRun(run_id="mrun_dead", scope=WEB, mode="APPLY", status="RUNNING", created_at="", holder="x:1")
    first, second = mine = [replace(p, run_id=dead.run_id, proposal_id=f"mprop_dead{i}") for i, p in enumerate(judged)]
    assert await store.lease_maintenance(WEB, dead.run_id, dead.holder, 0.05) is None  # type: ignore[attr-defined]
    await store.save_maintenance(dead, mine)  # type: ignore[attr-defined]
    decided, _ = await apply_proposal(svc, mine[0], at="")  # its Revision commits; the process dies before recording
    assert decided.status == "APPLIED"
    before = await svc.resolve(WEB)
    await asyncio.sleep(0.1)  # the dead run's lease runs out
    report = await maintain(svc, scope=WEB, mode="apply")
    assert report.run.status == "COMPLETED"
    resumed = {p.proposal_id: p for p in await proposals(svc, run_id=dead.run_id)}
    assert resumed[first.proposal_id].status == "APPLIED"
    assert "found applied" in (resumed[first.proposal_id].result or "")
    assert resumed[second.proposal_id].status == "APPLIED"
    after = await svc.resolve(WEB)
    assert before is not None and after is not None
    assert after.revision == before.revision + 1  # only the second merge was written; the first not again
    assert after.active_count == 2
