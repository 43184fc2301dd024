"""``memstone maintain`` and ``memstone maintenance …`` through click's CliRunner, and two real processes racing
for one scope (one runs, one queues)."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from maintenance_support import DIM, fake_model_server

import memstone
from memstone.cli.main import cli
from memstone.embedding import OpenAICompatibleEmbedder
from memstone.maintenance import JudgeSettings, MaintenanceSettings, maintain

WEB = "memstone://orgs/acme/projects/web"


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("MEMSTONE_URL", "MEMSTONE_SCOPE", "MEMSTONE_AUTHOR", "MEMSTONE_PROJECT_SCOPE", "MEMSTONE_USER_SCOPE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("MEMSTONE_EMBEDDING", "none")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir(exist_ok=True)
    monkeypatch.chdir(tmp_path / "home")


def run(url: str, *args: str, code: int = 0) -> Any:
    result = CliRunner().invoke(cli, ["--url", url, "--scope", WEB, *args], catch_exceptions=False)
    assert result.exit_code == code, result.output
    return json.loads(result.stdout) if "--json" in args else result


def seed(url: str) -> None:
    run(url, "remember", "--kind", "convention", "--text", "Always run make test before pushing.", "--important")
    run(url, "remember", "--kind", "convention", "--text", "Run make test before you push, always.", "--mandatory")


def test_maintain_dry_run_then_accept_then_a_repeat_run_is_a_no_op(db_url: str) -> None:
    seed(db_url)
    out = run(db_url, "maintain", "--json")
    assert out["run"]["mode"] == "DRY_RUN" and out["run"]["status"] == "COMPLETED" and out["run"]["listed"] == 2
    (p,) = out["proposals"]
    assert p["status"] == "PROPOSED" and p["kind"] == "duplicate"
    shown = run(db_url, "maintenance", "show", p["proposal_id"], "--json")["proposal"]
    assert shown["hashes"] == p["hashes"]
    listed = run(db_url, "maintenance", "proposals", "--status", "PROPOSED", "--json")["proposals"]
    assert [x["proposal_id"] for x in listed] == [p["proposal_id"]]
    (done,) = run(db_url, "maintenance", "accept", p["proposal_id"], "--json")["proposals"]
    assert done["status"] == "APPLIED"
    again = run(db_url, "maintenance", "accept", p["proposal_id"], "--json", code=2)
    assert again["error"]["code"] == "invalid_input"
    repeat = run(db_url, "maintain", "--mode", "apply", "--json")
    assert repeat["run"]["listed"] == 0 and repeat["proposals"] == [] and repeat["run"]["model_calls"] == 0
    runs = run(db_url, "maintenance", "runs", "--json")["runs"]
    assert [r["mode"] for r in runs] == ["APPLY", "DRY_RUN"]
    assert runs[1]["totals"]["status:APPLIED"] == 1


def test_progress_goes_to_stderr_and_reject_writes_nothing(db_url: str) -> None:
    seed(db_url)
    result = run(db_url, "maintain")
    assert "maintain: listed 2 changed of 2 active entries" in result.stderr
    assert "COMPLETED DRY_RUN" in result.stdout
    pid = run(db_url, "maintenance", "proposals", "--json")["proposals"][0]["proposal_id"]
    assert "REJECTED" in run(db_url, "maintenance", "reject", pid).stdout
    (memory,) = run(db_url, "memories", "--json")["memories"]
    assert memory["revision"] == 2


def test_no_wait_is_refused_with_exit_3_while_another_run_holds_the_scope(db_url: str) -> None:
    seed(db_url)

    async def hold() -> None:
        async with memstone.open_service(db_url, embedding=None) as svc:
            assert await svc.backend.lease_maintenance(WEB, "mrun_other", "elsewhere:1", 60.0) is None  # type: ignore[attr-defined]

    asyncio.run(hold())
    out = run(db_url, "maintain", "--no-wait", "--json", code=3)
    assert out["error"]["code"] == "maintenance_busy" and "mrun_other" in out["error"]["message"]


def test_a_bad_mode_is_a_usage_error(db_url: str) -> None:
    result = CliRunner().invoke(cli, ["--url", db_url, "maintain", "--mode", "yolo"])
    assert result.exit_code == 2


@pytest.mark.oceanbase
async def test_two_runs_started_at_once_from_two_processes_one_runs_one_queues(db_url: str) -> None:
    await asyncio.to_thread(seed, db_url)
    async with memstone.open_service(db_url, embedding=None) as svc:
        with fake_model_server(hold=True) as fake:
            model = OpenAICompatibleEmbedder(fake.url, "fake", DIM)
            settings = MaintenanceSettings(judges=JudgeSettings(near_cosine=0.99))
            first = asyncio.create_task(maintain(svc, scope=WEB, model=model, settings=settings))
            while fake.requests == 0:  # this process holds the scope's lease now, inside its judge step
                await asyncio.sleep(0.02)
            env = {**os.environ, "MEMSTONE_EMBEDDING": "none"}
            proc = await asyncio.create_subprocess_exec(
                sys.executable,
                "-c",
                "from memstone.cli.main import main; main()",
                "--url",
                db_url,
                "--scope",
                WEB,
                "maintain",
                "--json",
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env=env,
            )
            assert proc.stderr is not None and proc.stdout is not None
            said = b""
            while b"queued behind" not in said:  # the other process waits while this one holds the scope
                line = await proc.stderr.readline()
                assert line, "the second process ended without queueing"
                said += line
            fake.release.set()
            out, rest = await proc.communicate()
            err = said + rest
            done = await first
    assert proc.returncode == 0, err.decode()
    second = json.loads(out)["run"]
    assert f"queued behind run {done.run.run_id}" in err.decode()
    assert second["queued_behind"] == done.run.run_id and second["status"] == "COMPLETED"
    assert done.run.finished_at is not None and second["started_at"] >= done.run.finished_at


def rules(n: int) -> list[tuple[str, str]]:
    """``n`` distinct rules and a restatement of each (invented words, so no two rules look alike)."""
    syllables = ["ka", "lo", "mi", "nu", "pe", "ra", "si", "tu", "vo", "xe", "za", "bo"]
    words = iter(a + b + c for a in syllables for b in syllables for c in syllables)
    out = []
    for _ in range(n):
        a, b, c = next(words), next(words), next(words)
        out.append((f"Module {a} must call {b} before {c}.", f"Before {c}, the {a} module has to call {b}."))
    return out


async def test_kill_9_during_apply_leaves_no_proposal_half_applied(db_url: str) -> None:
    import signal

    from memstone import EntryInput
    from memstone.maintenance import proposals, runs

    async with memstone.open_service(db_url, embedding=None) as svc:
        pairs = rules(40)
        await svc.remember(scope=WEB, entries=[EntryInput(kind="convention", text=t) for p in pairs for t in p])
    env = {**os.environ, "MEMSTONE_EMBEDDING": "none"}
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-c", "from memstone.cli.main import main; main()", "--url", db_url, "--scope", WEB,
        "maintain", "--mode", "apply", stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE, env=env,
    )  # fmt: skip
    assert proc.stderr is not None
    applied = 0
    while applied < 2:
        line = await proc.stderr.readline()
        assert line, "the run ended before it applied two proposals"
        applied += line.endswith(b": APPLIED\n")
    proc.send_signal(signal.SIGKILL)
    await proc.wait()
    async with memstone.open_service(db_url, embedding=None) as svc:
        report = await svc.verify()
        assert report.ok, report
        (run,) = await runs(svc, scope=WEB)
        assert run.status == "RUNNING"  # killed: no terminal status was written
        found = await proposals(svc, run_id=run.run_id)
        assert len(found) == 40 and sum(p.status == "APPLIED" for p in found) >= 2
        head = await svc.resolve(WEB)
        assert head is not None
        manifest = await svc.manifest(head)
        for p in found:
            survivor, absorbed = p.entries
            merged = any(r.target == absorbed for r in (await svc.get(survivor, memory=head)).content.relations)
            assert merged == (manifest[absorbed].state == "inactive"), p  # whole, or not at all
            if p.status == "APPLIED":
                assert merged


def test_the_model_judge_from_the_cli_counts_its_calls_and_needs_both_options(db_url: str) -> None:
    from maintenance_support import COMPLETION_TOKENS, PROMPT_TOKENS, fake_chat_server

    seed(db_url)  # a restated pair the rules merge (not sent to the model), and one more entry that is
    run(db_url, "remember", "--kind", "convention", "--text", "Releases go out on Fridays.")
    with fake_chat_server() as fake:
        out = run(db_url, "maintain", "--judge-url", fake.url, "--judge-model", "m", "--json")
        assert fake.requests == 1 and out["run"]["model_calls"] == 1
        assert (out["run"]["input_tokens"], out["run"]["output_tokens"]) == (PROMPT_TOKENS, COMPLETION_TOKENS)
        refused = run(db_url, "maintain", "--judge-url", fake.url, "--json", code=2)
        assert "--judge-model" in refused["error"]["message"] and fake.requests == 1
