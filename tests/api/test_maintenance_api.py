"""Governed maintenance over HTTP: start a run, list and inspect proposals, accept and reject; the scope comes
from the caller's token, never from a body naming another tenant's scope."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from api_support import Server

from memstone import EntryInput

PROJECT = "memstone://orgs/acme/projects/web"
RESTATED = [
    EntryInput(kind="convention", text="Always run make test before pushing.", important=True),
    EntryInput(kind="convention", text="Run make test before you push, always.", mandatory=True),
]


async def test_a_dry_run_then_accept_and_reject_in_local_mode(local: Server) -> None:
    svc = local.state.service
    await svc.remember(scope=PROJECT, entries=RESTATED)
    started = await local.client.post("/api/maintenance/runs", params={"scope": PROJECT})
    assert started.status_code == 201, started.text
    report = started.json()
    assert report["run"]["status"] == "COMPLETED" and report["run"]["mode"] == "DRY_RUN"
    (p,) = report["proposals"]
    one = await local.client.get(f"/api/maintenance/proposals/{p['proposal_id']}")
    assert one.status_code == 200 and one.json()["proposal"]["hashes"] == p["hashes"]
    listed = (await local.client.get("/api/maintenance/proposals", params={"status": "PROPOSED"})).json()
    assert [x["proposal_id"] for x in listed["proposals"]] == [p["proposal_id"]]
    accepted = await local.client.post(f"/api/maintenance/proposals/{p['proposal_id']}/accept")
    assert accepted.status_code == 200 and accepted.json()["proposal"]["status"] == "APPLIED"
    again = await local.client.post(f"/api/maintenance/proposals/{p['proposal_id']}/reject")
    assert again.status_code == 422
    head = await svc.resolve(PROJECT)
    assert head is not None and head.active_count == 1
    repeat = (
        await local.client.post("/api/maintenance/runs", params={"scope": PROJECT}, json={"mode": "apply"})
    ).json()
    assert repeat["run"]["listed"] == 0 and repeat["proposals"] == []
    runs = (await local.client.get("/api/maintenance/runs", params={"scope": PROJECT})).json()["runs"]
    assert [r["mode"] for r in runs] == ["APPLY", "DRY_RUN"]
    assert (await local.client.get("/api/maintenance/proposals/mprop_nope")).status_code == 404


async def test_in_token_mode_the_scope_is_the_callers_own_unless_it_may_write_the_one_it_names(
    remote: Server,
) -> None:
    svc = remote.state.service
    await svc.remember(scope=PROJECT, entries=RESTATED)
    await svc.remember(scope="memstone://users/mallory", entries=[EntryInput(kind="fact", text="Mallory uses vim.")])
    stranger, _ = await remote.token("mallory", "globex")
    writer, _ = await remote.token("will", "acme", {PROJECT: "write"})
    theirs = await remote.client.post("/api/maintenance/runs", params={"scope": PROJECT}, headers=remote.as_(stranger))
    assert theirs.status_code == 403
    own = await remote.client.post("/api/maintenance/runs", headers=remote.as_(stranger))
    assert own.status_code == 201 and own.json()["run"]["scope"] == "memstone://users/mallory"
    made = await remote.client.post("/api/maintenance/runs", params={"scope": PROJECT}, headers=remote.as_(writer))
    (p,) = made.json()["proposals"]
    assert (await remote.client.get("/api/maintenance/proposals", headers=remote.as_(stranger))).json() == {
        "proposals": []
    }
    hidden = await remote.client.post(
        f"/api/maintenance/proposals/{p['proposal_id']}/accept", headers=remote.as_(stranger)
    )
    assert hidden.status_code == 404
    done = await remote.client.post(f"/api/maintenance/proposals/{p['proposal_id']}/reject", headers=remote.as_(writer))
    assert done.status_code == 200 and done.json()["proposal"]["status"] == "REJECTED"


async def test_the_threshold_event_is_visible_over_http(local: Server) -> None:
    for text in ("Deploy with uv.", "Pin every dependency."):
        await local.state.service.remember(scope=PROJECT, entries=[EntryInput(kind="fact", text=text)])
    got = await local.client.get("/api/maintenance/status", params={"scope": PROJECT, "threshold": 2})
    assert got.status_code == 200, got.text
    assert got.json()["threshold_reached"] is True and got.json()["event"]["kind"] == "writes_threshold_reached"
    assert (await local.client.get("/api/maintenance/status")).status_code == 422  # local mode names the scope


async def test_an_async_start_returns_the_queued_run_and_its_status_is_polled(local: Server) -> None:
    import asyncio

    svc = local.state.service
    await svc.remember(scope=PROJECT, entries=RESTATED)
    started = await local.client.post(
        "/api/maintenance/runs", params={"scope": PROJECT}, json={"mode": "apply", "background": True}
    )
    assert started.status_code == 201, started.text
    run = started.json()["run"]
    assert run["status"] == "QUEUED" and run["mode"] == "APPLY" and started.json()["proposals"] == []
    for _ in range(200):
        polled = await local.client.get(f"/api/maintenance/runs/{run['run_id']}")
        assert polled.status_code == 200, polled.text
        if polled.json()["run"]["status"] not in ("QUEUED", "RUNNING"):
            break
        await asyncio.sleep(0.05)
    body = polled.json()
    assert body["run"]["status"] == "COMPLETED" and body["run"]["run_id"] == run["run_id"]
    (p,) = body["proposals"]
    assert p["status"] == "APPLIED"
    head = await svc.resolve(PROJECT)
    assert head is not None and head.active_count == 1  # the run wrote its merge
    assert (await local.client.get("/api/maintenance/runs/mrun_nope")).status_code == 404


async def test_a_queued_request_survives_until_a_worker_carries_it_out(local: Server) -> None:
    from memstone.maintenance.queue import carry_out, enqueue, pending

    svc = local.state.service
    await svc.remember(scope=PROJECT, entries=RESTATED)
    request = await enqueue(svc, scope=PROJECT, mode="apply")
    assert [r.run_id for r in await pending(svc)] == [request.run_id]
    polled = (await local.client.get(f"/api/maintenance/runs/{request.run_id}")).json()["run"]
    assert polled["status"] == "QUEUED"
    report = await carry_out(svc, request)
    assert report is not None and report.run.run_id == request.run_id and report.run.status == "COMPLETED"
    assert await pending(svc) == [] and await carry_out(svc, request) is None  # carried out once


def _repo(root: Path) -> Path:
    env = {**os.environ, "GIT_AUTHOR_DATE": "2020-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2020-01-01T00:00:00Z"}
    root.mkdir()
    (root / "app.py").write_text("PORT = 8080\n")
    for args in (("init", "-q"), ("add", "."), ("commit", "-q", "-m", "init")):
        subprocess.run(["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@example.org", *args],
                       check=True, capture_output=True, env=env)  # fmt: skip
    return root


async def test_a_local_caller_passes_the_repo_and_code_evidence_is_judged_a_token_caller_may_not(
    local: Server, remote: Server, tmp_path: Path
) -> None:
    repo = _repo(tmp_path / "repo")
    svc = local.state.service
    src = await svc.record_source("file", "PORT = 8080", uri="file://app.py#L1")
    await svc.remember(scope=PROJECT, entries=[EntryInput(kind="fact", text="The app listens on 8080.")], sources=[src])
    (repo / "app.py").write_text("PORT = 9000\n")  # the cited line changed (uncommitted)
    plain = await local.client.post("/api/maintenance/runs", params={"scope": PROJECT})
    assert plain.status_code == 201 and plain.json()["proposals"] == []  # no repo: no evidence check
    judged = await local.client.post("/api/maintenance/runs", params={"scope": PROJECT}, json={"repo": str(repo)})
    assert judged.status_code == 201, judged.text
    (flag,) = judged.json()["proposals"]
    assert flag["kind"] == "stale" and "app.py" in flag["evidence"]
    outside = await local.client.post("/api/maintenance/runs", params={"scope": PROJECT},
                                      json={"repo": str(tmp_path)})  # fmt: skip
    assert outside.status_code == 422 and "git work tree" in outside.text
    writer, _ = await remote.token("will", "acme", {PROJECT: "write"})
    refused = await remote.client.post("/api/maintenance/runs", params={"scope": PROJECT}, json={"repo": str(repo)},
                                       headers=remote.as_(writer))  # fmt: skip
    assert refused.status_code == 403 and "local caller" in refused.text
