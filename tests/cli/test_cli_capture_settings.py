"""``memstone capture-settings show|set``: capture's settings in the store, read by the hooks' capture."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from memstone import open_service
from memstone.capture import CaptureSettings, load_capture_settings
from memstone.cli.main import cli

WEB = "memstone://orgs/acme/projects/web"


def run(url: str, *args: str, code: int = 0) -> Any:
    result = CliRunner().invoke(cli, ["--url", url, *args], catch_exceptions=False)
    assert result.exit_code == code, (result.stdout, result.stderr)
    return json.loads(result.stdout) if "--json" in args else result


def test_set_then_show_and_the_library_reads_the_same(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'm.db'}"
    # ``show`` is a read: on a path with no store it says so and creates nothing; on a store, the defaults.
    assert run(url, "capture-settings", "show", "--json", code=4)["error"]["code"] == "not_found"
    assert not (tmp_path / "m.db").exists()
    run(url, "migrate", "--json")
    assert run(url, "capture-settings", "show", "--json")["settings"] == CaptureSettings().to_dict()
    done = run(url, "capture-settings", "set", "--mode", f"{WEB}=review", "--default-mode", "off", "--json")
    assert done["settings"]["modes"] == {WEB: "review"} and done["settings"]["default_mode"] == "off"

    async def read() -> CaptureSettings:
        async with open_service(url, embedding=None) as svc:
            return await load_capture_settings(svc)

    assert asyncio.run(read()) == CaptureSettings().with_mode(WEB, "review").with_mode(None, "off")
    old = tmp_path / "old.capture.json"
    CaptureSettings().with_mode(WEB, "off").save(old)
    assert run(url, "capture-settings", "set", "--from-file", str(old), "--json")["settings"]["modes"] == {WEB: "off"}
    assert "memstone://orgs/acme/projects/web  off" in run(url, "capture-settings", "show").stdout


def test_bad_settings_are_refused_and_nothing_changes(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'm.db'}"
    run(url, "capture-settings", "set", "--mode", f"{WEB}=review")
    bad = run(url, "capture-settings", "set", "--mode", f"{WEB}=maybe", "--json", code=2)
    assert bad["error"]["code"] == "invalid_input"
    assert run(url, "capture-settings", "set", "--mode", "no-equals-sign", "--json", code=2)["error"]["hint"]
    missing = run(url, "capture-settings", "set", "--from-file", str(tmp_path / "absent.json"), "--json", code=2)
    assert "no file" in missing["error"]["message"]
    assert run(url, "capture-settings", "show", "--json")["settings"]["modes"] == {WEB: "review"}


def test_a_team_server_url_is_refused_like_every_local_only_command(tmp_path: Path, monkeypatch: Any) -> None:
    # A team server keeps its own settings: like every command that runs only where the store is, this one says
    # so (it used to report "unknown store URL scheme 'http'", a scheme every remote command takes).
    monkeypatch.chdir(tmp_path)
    for args in (("show",), ("set", "--default-mode", "off")):
        refused = run("http://127.0.0.1:9", "capture-settings", *args, "--json", code=5)
        assert refused["error"]["code"] == "capability_not_supported"
        assert f"memstone capture-settings {args[0]} does not run against a team server" in refused["error"]["message"]
    assert list(tmp_path.iterdir()) == []
