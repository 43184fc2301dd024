"""The CLI surface of embedding profiles per organization: ``reembed --org``, ``embed --backfill --org`` and the
org lines of ``doctor``, on PostgreSQL; refused by name (exit 5) on SQLite."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from click.testing import CliRunner

from memstone.cli.main import cli

Run = Callable[..., dict[str, object]]

GLOBEX = "memstone://orgs/globex"
ACME = "memstone://orgs/acme"


def test_reembed_and_backfill_one_org_on_postgres(postgres_url: str, json_cli: Callable[[str], Run]) -> None:
    run = json_cli(postgres_url)
    base = ("--embedding", "hashing-32")
    run(*base, "--scope", ACME, "remember", "--kind", "fact", "--text", "Backups run nightly at two")
    run(*base, "--scope", GLOBEX, "remember", "--kind", "fact", "--text", "Lunch is served at noon")
    migrated = run("reembed", "--org", "Globex", "--profile", "hashing-48")
    assert migrated == {"embedded": 1, "profile": "hashing-48", "org": "globex"}
    # A write made without a model leaves a gap in globex only; the org's backfill fills it with its own model.
    run("--embedding", "none", "--scope", GLOBEX, "remember", "--kind", "fact", "--text", "Badges are required")
    assert run(*base, "embed", "--backfill", "--org", "globex") == {
        "embedded": 1,
        "profile": "hashing-48",
        "org": "globex",
    }
    hits = run(*base, "--scope", GLOBEX, "search", "badges required", "--mode", "vector")["hits"]
    assert isinstance(hits, list) and hits[0]["text"] == "Badges are required"
    result = CliRunner().invoke(cli, ["--url", postgres_url, *base, "doctor", "--json"], catch_exceptions=False)
    report = json.loads(result.stdout)
    assert report["org_profiles"] == {"globex": {"profile": "hashing-48", "dimension": 48, "vectors_missing": 0}}
    assert run(*base, "verify")["ok"] is True


def test_reembed_org_is_refused_on_sqlite(tmp_path: Path, json_cli: Callable[[str], Run]) -> None:
    run = json_cli(f"sqlite:///{tmp_path / 'o.db'}")
    run("--embedding", "hashing-32", "--scope", GLOBEX, "remember", "--kind", "fact", "--text", "Lunch at noon")
    refused = run("reembed", "--org", "globex", "--profile", "hashing-48", code=5)
    assert refused["error"]["code"] == "capability_not_supported"  # type: ignore[index]
    assert run("--embedding", "hashing-32", "embed", "--backfill", "--org", "globex")["embedded"] == 0
