"""``install`` writes each agent's hook settings and MCP config idempotently; ``--uninstall`` restores every file
byte for byte, including pre-existing files with other hooks and odd formatting (tabs, CRLF, no final newline)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from memstone.agents.install import HOOKS, Launcher, config_files, install, status, toml_add, toml_remove
from memstone.cli.main import cli

LAUNCHER = Launcher(program="/opt/memstone/bin/memstone")
AGENTS = ["claude-code", "codex", "gemini", "cursor"]

# Pre-existing files, keyed by (agent, file name), in deliberately odd formats, with other tools' settings.
EXISTING: dict[tuple[str, str], bytes] = {
    ("claude-code", "settings.json"): (
        '{\n\t"permissions": {"allow": ["Bash(npm test)"]},\n\t"hooks": {\n\t\t"SessionStart": [{"hooks": '
        '[{"type": "command", "command": "other-tool brief"}]}],\n\t\t"PreToolUse": [{"matcher": "Bash", "hooks": '
        '[{"type": "command", "command": "guard.sh"}]}]\n\t},\n\t"note": "café ☕"\n}'
    ).encode(),
    (
        "claude-code",
        ".mcp.json",
    ): b'{\r\n    "mcpServers": {\r\n        "docs": {"command": "docs-mcp"}\r\n    }\r\n}\r\n',
    ("claude-code", ".claude.json"): b'{\n  "numStartups": 12,\n  "mcpServers": {"other": {"command": "x"}}\n}\n',
    ("codex", "hooks.json"): b'{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"notify-send done"}]}]}}',
    ("codex", "config.toml"): (
        b'model = "gpt-5.5-codex"  # the default\n\n[mcp_servers.docs]\ncommand = "docs-mcp"\n\n'
        b"[features]\nhooks = true"
    ),
    ("gemini", "settings.json"): (
        b'{\n   "theme": "GitHub",\n   "hooks": {\n      "AfterTool": [{"hooks": [{"type": "command", '
        b'"command": "lint.sh", "timeout": 5000}]}]\n   },\n   "mcpServers": {}\n}\n'
    ),
    ("cursor", "hooks.json"): b'{\n  "version": 1,\n  "hooks": {\n    "stop": [{"command": "say done"}]\n  }\n}\n',
    ("cursor", "mcp.json"): b'{"mcpServers": {"linear": {"url": "https://mcp.linear.app/sse"}}}\n',
}


def files_of(agent: str, where: str, home: Path, project: Path) -> list[Path]:
    return [c.path for c in config_files(agent, where, home=home, project=project, launcher=LAUNCHER)]  # type: ignore[arg-type]


def snapshot(root: Path) -> dict[str, bytes | None]:
    """Every file and folder under root (folders as None), to compare whole trees."""
    return {str(p.relative_to(root)): (p.read_bytes() if p.is_file() else None) for p in sorted(root.rglob("*"))}


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    (project / ".git").mkdir(parents=True)
    return home, project


@pytest.mark.parametrize("where", ["user", "project"])
@pytest.mark.parametrize("agent", AGENTS)
@pytest.mark.parametrize("existing", [False, True], ids=["new-files", "existing-files"])
def test_install_is_idempotent_and_uninstall_restores_every_byte(
    agent: str, where: str, existing: bool, dirs: tuple[Path, Path]
) -> None:
    home, project = dirs
    if existing:
        for path in files_of(agent, where, home, project):
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(EXISTING[(agent, path.name)])
    before_home, before_project = snapshot(home), snapshot(project)

    changes = install(agent, where, home=home, project=project, launcher=LAUNCHER)  # type: ignore[arg-type]
    assert {c.action for c in changes} == ({"updated"} if existing else {"created"})
    assert all(present for _, _, present in status(agent, where, home=home, project=project))  # type: ignore[arg-type]
    installed = {p: p.read_bytes() for p in files_of(agent, where, home, project)}
    for path, data in installed.items():
        text = data.decode()
        if existing and b"\r\n" in EXISTING[(agent, path.name)]:
            assert "\r\n" in text and "\n" not in text.replace("\r\n", "")  # the file keeps its line endings
        if path.suffix == ".json":
            json.loads(text)
        if existing:  # the user's other settings are all still there
            for marker in ("other-tool brief", "guard.sh", "docs-mcp", "numStartups", "notify-send", "GitHub",
                           "lint.sh", "say done", "linear", "café", "[features]"):  # fmt: skip
                if marker.encode() in EXISTING[(agent, path.name)] and marker.isascii():
                    assert marker in text, (path, marker)

    again = install(agent, where, home=home, project=project, launcher=LAUNCHER)  # type: ignore[arg-type]
    assert {c.action for c in again} == {"unchanged"}
    assert {p: p.read_bytes() for p in installed} == installed

    removed = install(agent, where, home=home, project=project, launcher=LAUNCHER, uninstall=True)  # type: ignore[arg-type]
    assert {c.action for c in removed} == {"restored"}
    after_home = {k: v for k, v in snapshot(home).items() if not k.startswith(".memstone")}
    assert after_home == {k: v for k, v in before_home.items() if not k.startswith(".memstone")}
    assert snapshot(project) == before_project


@pytest.mark.parametrize("agent", AGENTS)
def test_the_hooks_run_memstone_for_each_event_with_the_agent_named(agent: str, dirs: tuple[Path, Path]) -> None:
    home, project = dirs
    install(agent, "project", home=home, project=project, launcher=LAUNCHER)  # type: ignore[arg-type]
    hooks_file = files_of(agent, "project", home, project)[0]
    doc = json.loads(hooks_file.read_text())
    for spec in HOOKS[agent]:  # type: ignore[index]
        entries = doc["hooks"][spec.native]
        handler = entries[-1] if agent == "cursor" else entries[-1]["hooks"][0]
        assert handler["command"] == f"/opt/memstone/bin/memstone hook {spec.event} --agent {agent}"
    if agent == "cursor":
        assert doc["version"] == 1


def test_an_edit_after_install_is_kept_by_uninstall(dirs: tuple[Path, Path]) -> None:
    home, project = dirs
    install("claude-code", "user", home=home, project=project, launcher=LAUNCHER)
    settings = home / ".claude" / "settings.json"
    doc = json.loads(settings.read_text())
    doc["hooks"]["Stop"].append({"hooks": [{"type": "command", "command": "my-own-stop.sh"}]})
    doc["model"] = "opus"
    settings.write_text(json.dumps(doc, indent=2) + "\n")
    changes = install("claude-code", "user", home=home, project=project, launcher=LAUNCHER, uninstall=True)
    assert [c.action for c in changes] == ["removed", "restored"]
    assert json.loads(settings.read_text()) == {
        "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "my-own-stop.sh"}]}]},
        "model": "opus",
    }


def test_a_new_command_path_replaces_ours_in_place(dirs: tuple[Path, Path]) -> None:
    home, project = dirs
    install("gemini", "user", home=home, project=project, launcher=LAUNCHER)
    moved = Launcher(program="/usr/local/bin/memstone", prefix=("--url", "sqlite:////data/m.db"))
    assert [c.action for c in install("gemini", "user", home=home, project=project, launcher=moved)] == ["updated"]
    doc = json.loads((home / ".gemini" / "settings.json").read_text())
    assert len(doc["hooks"]["SessionStart"]) == 1
    command = doc["hooks"]["SessionStart"][0]["hooks"][0]["command"]
    assert command == "/usr/local/bin/memstone --url sqlite:////data/m.db hook session-start --agent gemini"
    assert doc["mcpServers"]["memstone"] == {
        "command": "/usr/local/bin/memstone",
        "args": ["--url", "sqlite:////data/m.db", "mcp"],
    }
    install("gemini", "user", home=home, project=project, launcher=moved, uninstall=True)
    assert not (home / ".gemini").exists()


def test_a_broken_file_is_refused_and_nothing_changes(dirs: tuple[Path, Path]) -> None:
    home, _ = dirs
    (home / ".cursor").mkdir()
    (home / ".cursor" / "mcp.json").write_text("{ // comments are not JSON\n}")
    before = snapshot(home)
    runner = CliRunner(env={"HOME": str(home)})
    result = runner.invoke(cli, ["install", "--agent", "cursor"])
    assert result.exit_code == 2 and "not valid JSON" in result.output
    assert snapshot(home) == before


def test_the_codex_toml_block_round_trips() -> None:
    original = 'model = "o3"\n\n[mcp_servers.memstone]\ncommand = "old"\nargs = ["mcp"]\n\n[features]\nhooks = true\n'
    updated = toml_add(original, LAUNCHER)
    assert updated.count("[mcp_servers.memstone]") == 1 and '"/opt/memstone/bin/memstone"' in updated
    assert "[features]\nhooks = true\n" in updated
    assert "[mcp_servers.memstone]" not in toml_remove(updated)
    assert toml_remove(toml_add("", LAUNCHER)) == ""


def test_the_cli_installs_into_the_project_root_and_reports(
    dirs: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    home, project = dirs
    (project / "src").mkdir()
    monkeypatch.chdir(project / "src")
    runner = CliRunner(env={"HOME": str(home)})
    result = runner.invoke(cli, ["install", "--agent", "codex", "--project", "--command", "memstone", "--json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    assert [f["action"] for f in out["files"]] == ["created", "created"]
    assert (project / ".codex" / "hooks.json").exists() and (project / ".codex" / "config.toml").exists()
    hooks = json.loads((project / ".codex" / "hooks.json").read_text())
    assert hooks["hooks"]["SessionStart"][0]["hooks"][0]["command"] == "memstone hook session-start --agent codex"
    result = runner.invoke(cli, ["install", "--agent", "codex", "--project", "--uninstall"])
    assert result.exit_code == 0 and "restored" in result.output
    assert not (project / ".codex").exists()


def _commands(doc: object) -> list[str]:
    """Every ``command`` string in a JSON document (hook handlers and MCP servers)."""
    if isinstance(doc, dict):
        found = [doc["command"]] if isinstance(doc.get("command"), str) else []
        return found + [c for v in doc.values() for c in _commands(v)]
    if isinstance(doc, list):
        return [c for v in doc for c in _commands(v)]
    return []


def test_a_project_install_writes_only_portable_commands(
    dirs: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    home, project = dirs
    monkeypatch.chdir(project)
    # What a developer's machine has: MEMSTONE_URL in the shell, memstone run by its absolute path.
    monkeypatch.setattr("sys.argv", [str(tmp_path / "venv" / "bin" / "memstone")])
    env = {"HOME": str(home), "MEMSTONE_URL": f"sqlite:///{tmp_path}/private/m.db"}
    result = CliRunner(env=env).invoke(cli, ["install", "--agent", "claude-code", "--project"])
    assert result.exit_code == 0, result.output
    committed = [project / ".claude" / "settings.json", project / ".mcp.json"]
    for path in committed:
        text = path.read_text("utf-8")
        assert str(tmp_path) not in text and "--url" not in text and "MEMSTONE_URL" not in text, text
    hooks = json.loads(committed[0].read_text("utf-8"))
    assert set(_commands(hooks)) == {f"memstone hook {spec.event} --agent claude-code" for spec in HOOKS["claude-code"]}
    assert json.loads(committed[1].read_text("utf-8"))["mcpServers"]["memstone"] == {
        "command": "memstone",
        "args": ["mcp"],
    }
    assert not (project / ".claude" / "settings.local.json").exists()


def test_an_explicit_url_goes_to_the_local_settings_file_only(
    dirs: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    home, project = dirs
    monkeypatch.chdir(project)
    url = f"sqlite:///{tmp_path}/team/m.db"
    runner = CliRunner(env={"HOME": str(home)})
    result = runner.invoke(cli, ["--url", url, "install", "--agent", "claude-code", "--project", "--json"])
    assert result.exit_code == 0, result.output
    local = json.loads((project / ".claude" / "settings.local.json").read_text("utf-8"))
    assert local == {"env": {"MEMSTONE_URL": url}}
    for path in (project / ".claude" / "settings.json", project / ".mcp.json"):
        assert url not in path.read_text("utf-8") and str(tmp_path) not in path.read_text("utf-8")
    assert runner.invoke(cli, ["install", "--agent", "claude-code", "--project", "--uninstall"]).exit_code == 0
    assert sorted(p.name for p in project.iterdir()) == [".git"]  # every file and folder install made is gone
    refused = runner.invoke(cli, ["--url", url, "install", "--agent", "codex", "--project", "--json"])
    assert refused.exit_code == 2 and "would be committed" in json.loads(refused.output)["error"]["message"]
    assert sorted(p.name for p in project.iterdir()) == [".git"]
