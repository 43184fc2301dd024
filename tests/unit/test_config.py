"""memstone.config: argument > environment > file > derived > default, each value with its source."""

from __future__ import annotations

from pathlib import Path

import pytest

from memstone.config import SETTINGS, Config
from memstone.domain.errors import InvalidInput


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "home"
    folder.mkdir()
    monkeypatch.setenv("HOME", str(folder))
    return folder


def test_precedence_is_argument_environment_file_default(tmp_path: Path, home: Path) -> None:
    file = tmp_path / "c.toml"
    file.write_text('url = "sqlite:///file.db"\nauthor = "file"\nhost = "10.0.0.1"\n', "utf-8")
    env = {"MEMSTONE_CONFIG": str(file), "MEMSTONE_URL": "sqlite:///env.db", "MEMSTONE_AUTHOR": "env"}
    config = Config.load({"url": "sqlite:///arg.db"}, env=env, cwd=home)
    assert (config.url, config.source("url")) == ("sqlite:///arg.db", "argument")
    assert (config.get("author"), config.source("author")) == ("env", "environment")
    assert (config.get("host"), config.source("host")) == ("10.0.0.1", "file")
    assert (config.get("port"), config.source("port")) == ("8765", "default")
    assert [r["name"] for r in config.show()] == [s.name for s in SETTINGS]


def test_the_default_scope_is_the_project_in_a_repository_else_the_user(tmp_path: Path, home: Path) -> None:
    repo = tmp_path / "web"
    (repo / ".git").mkdir(parents=True)
    (repo / "src").mkdir()
    inside = Config.load(env={}, cwd=repo / "src")
    project = inside.get("project_scope")
    assert project is not None and project.startswith("memstone://orgs/local/projects/web-")
    assert inside.default_scope == project and inside.read_scopes == (project, "memstone://users/anonymous")
    outside = Config.load(env={"MEMSTONE_USER_SCOPE": "memstone://users/alice"}, cwd=home)
    assert outside.get("project_scope") is None
    assert outside.default_scope == "memstone://users/alice" and outside.read_scopes == ("memstone://users/alice",)
    pinned = Config.load({"scope": "memstone://orgs/acme"}, env={}, cwd=repo)
    assert pinned.default_scope == "memstone://orgs/acme" and pinned.read_scopes == ("memstone://orgs/acme",)


@pytest.mark.parametrize(
    ("env", "file_text", "says"),
    [
        pytest.param({"MEMSTONE_PORT": "eighty"}, None, "MEMSTONE_PORT must be an integer", id="env-integer"),
        pytest.param({}, "port = -1\n", "port must not be negative", id="file-negative"),
        pytest.param({}, 'colour = "red"\n', "unknown setting 'colour'", id="file-unknown-key"),
        pytest.param({}, "url = [1]\n", "url must be a string or an integer", id="file-type"),
        pytest.param({}, "url = \n", "is not valid TOML", id="file-syntax"),
    ],
)
def test_a_bad_setting_is_refused_by_name(
    tmp_path: Path, home: Path, env: dict[str, str], file_text: str | None, says: str
) -> None:
    file = tmp_path / "c.toml"
    if file_text is not None:
        file.write_text(file_text, "utf-8")
    with pytest.raises(InvalidInput, match=says):
        Config.load(env={**env, "MEMSTONE_CONFIG": str(file)}, cwd=home)
