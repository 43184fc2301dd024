"""``memstone purge``: confirmation, --json, --list, and the purged text gone from the store's files."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from memstone.cli.main import cli

SCOPE = "memstone://orgs/acme/projects/web"


def memstone(db: Path, *args: str, stdin: str | None = None) -> tuple[int, str]:
    result = CliRunner().invoke(
        cli, ["--url", f"sqlite:///{db}", "--scope", SCOPE, *args], input=stdin, env={"MEMSTONE_EMBEDDING": "none"}
    )
    return result.exit_code, result.output


def store_files(directory: Path) -> bytes:
    """The bytes of the store and every file beside it (-wal, -shm)."""
    return b"".join(p.read_bytes() for p in sorted(directory.iterdir()) if p.name.startswith("m.db"))


def test_purge_asks_lists_and_erases(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    code, out = memstone(db, "remember", "--kind", "fact", "--text", "Vendor Qzxwvlambda holds the keys.", "--json")
    assert code == 0, out
    entry = json.loads(out)["entries"][0]
    code, out = memstone(db, "purge", entry, "--json")
    assert code == 2 and "reason" in out
    code, out = memstone(db, "purge", entry, "--reason", "vendor secret")  # CliRunner's stdin is not a terminal
    assert code == 2 and "--yes" in out
    assert b"Qzxwvlambda" in store_files(tmp_path)  # refused purges erased nothing
    code, out = memstone(db, "purge", entry, "--reason", "vendor secret", "--yes", "--json")
    assert code == 0, out
    report = json.loads(out)
    assert [p["version"] for p in report["purged"]] == [1] and report["forgotten_in_revision"] == 2
    code, out = memstone(db, "purge", entry, "--list", "--json")
    assert code == 0 and [t["reason"] for t in json.loads(out)["tombstones"]] == ["vendor secret"]
    code, out = memstone(db, "verify", "--json")
    assert code == 0 and json.loads(out)["ok"] is True, out
    assert b"Qzxwvlambda" not in store_files(tmp_path)
    # history names what was purged, when, by whom and why; the reason is kept, not erased
    code, out = memstone(db, "history", entry, "--json")
    items = json.loads(out)["history"]
    assert code == 0 and [i["purge"]["reason"] for i in items] == ["vendor secret"], out
    assert items[0]["purge"]["purged_at"] and items[0]["purge"]["entry_content_hash"] == items[0]["entry_content_hash"]
    code, out = memstone(db, "history", entry)
    assert code == 0 and ": vendor secret" in out and "purged " in out, out
    code, out = memstone(db, "purge", "ent_01J00000000000000000000000", "--reason", "x", "--yes")
    assert code == 4


def test_purge_list_on_a_mistyped_path_creates_no_store(tmp_path: Path) -> None:
    typo = tmp_path / "typo" / "m.db"
    code, out = memstone(typo, "purge", "ent_01ARZ3NDEKTSV4RRFFQ69G5FAV", "--list", "--json")
    assert code != 0 and json.loads(out)["error"]["code"] == "not_found", out
    assert not typo.exists() and not typo.parent.exists()
