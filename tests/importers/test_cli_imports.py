"""`memstone import` (both shapes), `memstone render` and `memstone sync` through CliRunner on a real store."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from memstone.cli.main import cli

from .conftest import PROJECT, write


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("MEMSTONE_URL", "MEMSTONE_SCOPE", "MEMSTONE_AUTHOR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("MEMSTONE_EMBEDDING", "none")


class Cli:
    def __init__(self, url: str) -> None:
        self.url = url

    def __call__(self, *args: str, code: int = 0) -> Result:
        result = CliRunner().invoke(cli, ["--url", self.url, "--scope", PROJECT, *args], catch_exceptions=False)
        assert result.exit_code == code, f"exit {result.exit_code}\nstdout: {result.stdout}\nstderr: {result.stderr}"
        return result

    def json(self, *args: str, code: int = 0) -> Any:
        return json.loads(self(*args, "--json", code=code).stdout)


@pytest.fixture
def run(tmp_path: Path) -> Cli:
    return Cli(f"sqlite:///{tmp_path / 'm.db'}")


def test_import_from_dry_run_then_import_then_noop(run: Cli, tmp_path: Path) -> None:
    write(tmp_path / "repo", "CLAUDE.md", "# Web\n\n- Never push to main\n- Prefer squash merges\n")
    dry = run("import", "--from", "claude-md", str(tmp_path / "repo"), "--dry-run")
    assert "add        [constraint] mandatory" in dry.stdout and "dry run: nothing written" in dry.stdout
    assert run.json("memories") == {"memories": []}
    done = run.json("import", "--from", "claude-md", str(tmp_path / "repo"))
    assert (done["added"], len(done["revisions"])) == (2, 1)
    assert done["entries"][0]["file"] == str(tmp_path / "repo" / "CLAUDE.md")
    again = run.json("import", "--from", "claude-md", str(tmp_path / "repo"))
    assert (again["added"], again["unchanged"], again["revisions"]) == (0, 2, [])


def test_bad_input_exits_2_naming_the_file_and_line(run: Cli, tmp_path: Path) -> None:
    path = tmp_path / "memory.jsonl"
    path.write_text('{"type": "entity", "name": "A", "entityType": "x"}\n{broken\n', "utf-8")
    out = run.json("import", "--from", "mcp-memory", str(path), code=2)
    assert out["error"]["code"] == "invalid_input" and f"{path}:2" in out["error"]["message"]


def test_import_without_from_still_reads_a_backup(run: Cli, tmp_path: Path) -> None:
    run("remember", "--kind", "fact", "--text", "kept in the backup")
    run("export", str(tmp_path / "backup"))
    other = Cli(f"sqlite:///{tmp_path / 'copy.db'}")
    report = other.json("import", str(tmp_path / "backup"))
    assert report["revisions_written"] == 1
    assert other("import", str(tmp_path / "backup"), "--dry-run", code=2).exit_code == 2


def test_render_and_check(run: Cli, tmp_path: Path) -> None:
    run("remember", "--kind", "constraint", "--text", "Never edit site/", "--mandatory")
    assert run("render", "--agent", "codex", "--dir", str(tmp_path), "--check", code=1).exit_code == 1
    out = run.json("render", "--agent", "codex", "--dir", str(tmp_path))
    assert out["changed"] and out["mandatory"] == 1 and Path(out["path"]) == tmp_path / "AGENTS.md"
    assert "up to date" in run("render", "--agent", "codex", "--dir", str(tmp_path), "--check").stdout
    assert not run.json("render", "--agent", "codex", "--file", str(tmp_path / "AGENTS.md"))["changed"]


def test_sync_reports_and_exits_3_on_a_conflict(run: Cli, tmp_path: Path) -> None:
    rev = run.json("remember", "--kind", "fact", "--text", "Original")["revision"]
    entry = rev["changes"][0]["entry_id"]
    folder = tmp_path / "f"
    first = run.json("sync", str(folder), "--scope", PROJECT)
    assert len(first["files_written"]) == 1
    (path,) = folder.rglob("*.md")
    run("remember", "--kind", "fact", "--text", "Changed in the store", "--revise", entry)
    path.write_text(path.read_text("utf-8").replace("Original", "Changed in the file"), "utf-8")
    out = run("sync", str(folder), code=3)
    assert "CONFLICT" in out.stdout and "1 conflicts" in out.stdout
