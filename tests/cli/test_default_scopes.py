"""Inside a Git project, every surface addresses the same scopes by default (issue 11): the CLI, ``doctor``, the
MCP server, the hooks and the Explorer use the project scope ``doctor`` prints (and the user scope), never
``users/anonymous`` for some and the project for others. And ``memstone config show`` says where each came from."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import httpx2
import pytest
from click.testing import CliRunner

from memstone.agents.hooks import run_hook
from memstone.agents.project import project_scope
from memstone.cli.main import cli

USER = "memstone://users/alice"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "web"
    (root / ".git").mkdir(parents=True)
    (root / ".git" / "config").write_text('[remote "origin"]\n\turl = git@github.com:Acme/Web.git\n', "utf-8")
    (root / "src").mkdir()
    home = tmp_path / "home"
    home.mkdir()
    for name in [n for n in os.environ if n.startswith("MEMSTONE_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("MEMSTONE_EMBEDDING", "none")
    monkeypatch.setenv("MEMSTONE_USER_SCOPE", USER)
    monkeypatch.chdir(root / "src")
    return root


@pytest.fixture
def url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'store' / 'm.db'}"


def cli_json(url: str, *args: str, code: int = 0) -> dict[str, object]:
    result = CliRunner().invoke(cli, ["--url", url, *args, "--json"], catch_exceptions=False)
    assert result.exit_code == code, result.output
    out = json.loads(result.stdout)
    assert isinstance(out, dict)
    return out


def test_the_cli_writes_to_the_project_and_reads_project_and_user(project: Path, url: str) -> None:
    scope = project_scope(project)
    assert scope is not None and scope.startswith("memstone://orgs/local/projects/web-")
    cli_json(url, "remember", "--kind", "fact", "--text", "The web app deploys with uv.")
    cli_json(url, "--scope", USER, "remember", "--kind", "preference", "--text", "Alice deploys on Fridays.")
    memories = cli_json(url, "memories")["memories"]
    assert isinstance(memories, list) and {m["scope"] for m in memories} == {scope, USER}
    hits = cli_json(url, "search", "deploys")["hits"]
    assert isinstance(hits, list) and len(hits) == 2  # project and user, as the MCP server reads
    listed = cli_json(url, "list")
    assert {r["scope"] for r in listed["records"]} == {scope, USER}  # type: ignore[index, union-attr]
    pinned = cli_json(url, "--scope", USER, "search", "deploys")["hits"]
    assert isinstance(pinned, list) and [h["text"] for h in pinned] == ["Alice deploys on Fridays."]
    doctor = CliRunner().invoke(cli, ["--url", url, "doctor", "--json"])
    report = json.loads(doctor.output)
    assert report["project_scope"] == scope and report["user_scope"] == USER


def test_the_mcp_server_and_the_hooks_address_the_same_scopes(project: Path, url: str) -> None:
    scope = project_scope(project)
    cli_json(url, "remember", "--kind", "constraint", "--mandatory", "--text", "Never edit site/ by hand.")
    described = cli_json(url, "mcp")
    settings = described["settings"]
    assert isinstance(settings, dict)
    assert (settings["project_scope"], settings["user_scope"]) == (scope, USER)
    payload = {"session_id": "s1", "hook_event_name": "SessionStart", "source": "startup", "cwd": str(project)}
    result = run_hook("session-start", "claude-code", json.dumps(payload), url=url)
    assert result.error is None and result.context is not None
    assert "Never edit site/ by hand." in result.context  # the hook sees what the CLI wrote by default


def test_the_explorer_defaults_to_the_project_scope(project: Path, url: str) -> None:
    cmd = [sys.executable, "-m", "memstone.cli.main", "--url", url, "serve", "--port", "0", "--json"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=dict(os.environ))
    try:
        assert proc.stdout is not None
        lines = []
        for line in proc.stdout:
            lines.append(line)
            if line.startswith("}"):
                break
        info = json.loads("".join(lines))
        with httpx2.Client(base_url=info["url"], timeout=10) as client:
            assert client.get("/api/session").json()["default_scope"] == project_scope(project)
    finally:
        proc.terminate()
        proc.wait(timeout=15)
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()


def test_config_show_prints_each_value_with_its_source(project: Path, url: str, tmp_path: Path) -> None:
    settings_file = tmp_path / "memstone.toml"
    settings_file.write_text('author = "from-file"\nport = 9000\n', "utf-8")
    env = {"MEMSTONE_CONFIG": str(settings_file), "MEMSTONE_PORT": "9100"}
    result = CliRunner(env=env).invoke(cli, ["--url", url, "config", "show", "--json"])
    assert result.exit_code == 0, result.output
    shown = {r["name"]: r for r in json.loads(result.output)["settings"]}
    assert (shown["url"]["value"], shown["url"]["source"]) == (url, "argument")
    assert (shown["port"]["value"], shown["port"]["source"], shown["port"]["from"]) == (
        "9100",
        "environment",
        "MEMSTONE_PORT",
    )
    assert (shown["author"]["value"], shown["author"]["source"]) == ("from-file", "file")
    assert (shown["project_scope"]["value"], shown["project_scope"]["source"]) == (project_scope(project), "derived")
    assert (shown["user_scope"]["value"], shown["user_scope"]["source"]) == (USER, "environment")
    assert (shown["hook_budget_tokens"]["value"], shown["hook_budget_tokens"]["source"]) == ("1500", "default")
    text = CliRunner(env=env).invoke(cli, ["--url", url, "config", "show"]).output
    assert "environment (MEMSTONE_PORT)" in text and f"file ({settings_file})" in text
    bad = CliRunner(env={"MEMSTONE_HOOK_BUDGET_TOKENS": "lots"}).invoke(cli, ["config", "show", "--json"])
    assert bad.exit_code == 2
    assert "MEMSTONE_HOOK_BUDGET_TOKENS must be an integer" in json.loads(bad.output)["error"]["message"]


class RecordingEnviron(dict[str, str]):
    """os.environ's stand-in that records which module read each MEMSTONE_ variable (the reading frame)."""

    def __init__(self, data: dict[str, str]) -> None:
        super().__init__(data)
        self.readers: set[tuple[str, str]] = set()

    def _note(self, key: object) -> None:
        if isinstance(key, str) and key.startswith("MEMSTONE_"):
            frame = sys._getframe(2)
            self.readers.add((key, Path(frame.f_code.co_filename).as_posix()))

    def __getitem__(self, key: str) -> str:
        self._note(key)
        return super().__getitem__(key)

    def get(self, key: str, default: object = None) -> object:  # type: ignore[override]
        self._note(key)
        return super().get(key, default)

    def __contains__(self, key: object) -> bool:
        self._note(key)
        return super().__contains__(key)


def test_at_run_time_only_the_config_module_reads_memstone_variables(
    project: Path, url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    recorder = RecordingEnviron({**os.environ, "MEMSTONE_AUTHOR": "alice", "MEMSTONE_HOOK_FOREGROUND": "1"})
    monkeypatch.setattr(os, "environ", recorder)
    runner = CliRunner()
    payload = json.dumps({"session_id": "s", "hook_event_name": "SessionStart", "source": "startup", "cwd": "."})
    for args in (
        ["remember", "--kind", "fact", "--text", "x"],
        ["search", "x"],
        ["list"],
        ["config", "show"],
        ["doctor"],
        ["mcp", "--json"],
        ["hook", "session-start", "--agent", "claude-code"],
    ):
        runner.invoke(cli, ["--url", url, *args], input=payload, catch_exceptions=False)
    readers = {where for _, where in recorder.readers}
    assert readers and all(w.endswith("memstone/config.py") for w in readers), sorted(recorder.readers)
