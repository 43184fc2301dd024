"""The CLI with real embedding models: the default MiniLM, backfill, and migration to the multilingual model."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest


@pytest.fixture
def run(tmp_path: Path, json_cli):  # type: ignore[no-untyped-def]
    return json_cli(f"sqlite:///{tmp_path / 'v.db'}")


def test_a_new_store_uses_the_default_model_and_searches_hybrid(run) -> None:  # type: ignore[no-untyped-def]
    run("remember", "--kind", "fact", "--text", "Postgres backups run every night at two")
    run("remember", "--kind", "fact", "--text", "The dashboard is built with React and Vite")
    result = run("search", "when is the database snapshotted")
    assert result["mode"] == "hybrid"
    hits = result["hits"]
    assert isinstance(hits, list) and hits[0]["text"] == "Postgres backups run every night at two"
    assert hits[0]["matched_by"] == ["vector"]


def test_writes_without_a_model_then_backfill_then_migration(run) -> None:  # type: ignore[no-untyped-def]
    run("remember", "--kind", "fact", "--text", "Backups of the database run every night")
    run("--embedding", "none", "remember", "--kind", "fact", "--text", "Releases ship on Thursdays")
    auto = run("search", "releases")
    assert auto["mode"] == "fts" and "incomplete" in str(auto["fallback_reason"])
    run("search", "releases", "--mode", "vector", code=5)
    assert run("embed", "--backfill")["embedded"] == 1
    assert run("search", "releases")["mode"] == "hybrid"
    migrated = run("reembed", "--profile", "use-multilingual-v3")
    assert migrated["embedded"] == 2
    cross = run("--embedding", "use-multilingual-v3", "search", "数据库备份", "--mode", "vector")
    hits = cross["hits"]
    assert isinstance(hits, list) and hits[0]["text"] == "Backups of the database run every night"
    assert run("verify")["ok"] is True
    # The store now records the multilingual profile: opening it with the old model is refused by name.
    refused = run("--embedding", "minilm-l6-int8", "search", "x", code=2)
    assert refused["error"]["code"] == "profile_mismatch"  # type: ignore[index]


def test_embedding_writes_nothing_into_the_home_folder(tmp_path: Path) -> None:
    """onnxruntime's telemetry is off: a real embed and search leave HOME empty (issue 11)."""
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMSTONE_", "ORT_", "XDG_"))}
    env["HOME"] = str(home)
    url = f"sqlite:///{tmp_path / 'v.db'}"
    for args in (("remember", "--kind", "fact", "--text", "Backups run nightly"), ("search", "snapshot schedule")):
        done = subprocess.run(
            [sys.executable, "-m", "memstone.cli.main", "--url", url, *args, "--json"],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["mode"] == "hybrid"  # the model really ran
    assert sorted(str(p.relative_to(home)) for p in home.rglob("*")) == []
