"""Export and import never leave their directory through symbolic links (issue 12, finding 3)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from click.testing import CliRunner

from memstone.cli.main import cli
from memstone.domain.ledger import FORMAT, INDEX_NAME

SCOPE = "memstone://orgs/acme"


def run(url: str, *args: str, code: int = 0) -> dict[str, object]:
    result = CliRunner().invoke(cli, ["--url", url, *args, "--json"], catch_exceptions=False)
    assert result.exit_code == code, result.output
    out: dict[str, object] = json.loads(result.stdout)
    return out


def store(tmp_path: Path, name: str = "m.db") -> str:
    url = f"sqlite:///{tmp_path / name}"
    run(url, "--scope", SCOPE, "remember", "--kind", "fact", "--slug", "retry", "--text", "retry with backoff")
    return url


def error_code(out: dict[str, object]) -> object:
    error = out["error"]
    assert isinstance(error, dict)
    return error["code"]


def test_export_refuses_to_delete_through_a_planted_link(tmp_path: Path) -> None:
    url = store(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("precious", "utf-8")
    target = tmp_path / "x"
    target.mkdir()
    (target / "link").symlink_to(outside)
    index = {"format": FORMAT, "memories": [], "files": [{"path": "link/keep.txt", "sha256": "0"}]}
    (target / INDEX_NAME).write_text(json.dumps(index), "utf-8")
    error = run(url, "export", str(target), code=6)["error"]
    assert isinstance(error, dict) and "symbolic link" in error["message"]
    assert (outside / "keep.txt").read_text("utf-8") == "precious"


def test_export_refuses_to_write_through_a_linked_folder(tmp_path: Path) -> None:
    url = store(tmp_path)
    target = tmp_path / "x"
    run(url, "export", str(target))
    outside = tmp_path / "outside"
    shutil.move(target / "orgs", outside)
    (target / "orgs").symlink_to(outside)
    before = sorted((p.relative_to(outside), p.read_bytes()) for p in outside.rglob("*") if p.is_file())
    assert error_code(run(url, "export", str(target), code=6)) == "integrity"
    assert sorted((p.relative_to(outside), p.read_bytes()) for p in outside.rglob("*") if p.is_file()) == before


def test_import_refuses_a_linked_index(tmp_path: Path) -> None:
    url = store(tmp_path)
    target = tmp_path / "x"
    run(url, "export", str(target))
    shutil.move(target / INDEX_NAME, tmp_path / INDEX_NAME)
    (target / INDEX_NAME).symlink_to(tmp_path / INDEX_NAME)
    other = f"sqlite:///{tmp_path / 'other.db'}"
    assert error_code(run(other, "import", str(target), code=6)) == "integrity"
    assert run(other, "memories") == {"memories": []}


def test_import_refuses_linked_scope_folders_and_ledgers(tmp_path: Path) -> None:
    url = store(tmp_path)
    target = tmp_path / "x"
    run(url, "export", str(target))
    elsewhere = tmp_path / "elsewhere"
    shutil.move(target / "orgs" / "acme", elsewhere)
    (target / "orgs" / "acme").symlink_to(elsewhere)
    other = f"sqlite:///{tmp_path / 'other.db'}"
    assert error_code(run(other, "import", str(target), code=6)) == "integrity"
    assert run(other, "memories") == {"memories": []}
    (target / "orgs" / "acme").unlink()
    shutil.move(elsewhere, target / "orgs" / "acme")
    (ledger,) = (target / "orgs").rglob("retry.md")
    shutil.move(ledger, tmp_path / "retry.md")
    ledger.symlink_to(tmp_path / "retry.md")
    assert error_code(run(other, "import", str(target), code=6)) == "integrity"
    assert run(other, "memories") == {"memories": []}
