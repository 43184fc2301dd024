"""A read-only store can be read, searched and verified; a write names the file and says it is read-only.

Issue 12, finding 11. Root ignores file modes, so the CLI runs in a child process without the capabilities that
let root write anyway (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER), dropped from its bounding set.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from memstone import open_service
from memstone.domain.errors import BackendUnavailable
from memstone.domain.model import EntryInput
from process_support import as_ordinary_user

SCOPE = "memstone://orgs/acme"


def memstone(url: str, *args: str) -> tuple[int, dict[str, object]]:
    cmd = [sys.executable, "-m", "memstone.cli.main", "--url", url, *args, "--json"]
    env = {**os.environ, "MEMSTONE_EMBEDDING": "none"}
    done = subprocess.run(cmd, capture_output=True, text=True, preexec_fn=as_ordinary_user, env=env, timeout=120)
    return done.returncode, json.loads(done.stdout or "{}")


async def _seed(path: Path) -> None:
    async with open_service(f"sqlite:///{path}", embedding=None) as svc:
        await svc.remember(scope=SCOPE, entries=[EntryInput(kind="fact", text="the backup holds the deploy notes")])


def _files(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir())}


@pytest.fixture
def read_only_dir(tmp_path: Path) -> Iterator[Path]:
    directory = tmp_path / "backup"
    directory.mkdir()
    yield directory
    directory.chmod(0o755)
    for p in directory.iterdir():
        p.chmod(0o644)


async def test_a_read_only_file_in_a_read_only_directory_is_searched_and_verified(read_only_dir: Path) -> None:
    db = read_only_dir / "m.db"
    await _seed(db)
    assert sorted(p.name for p in read_only_dir.iterdir()) == ["m.db"]  # closed cleanly: no WAL left
    db.chmod(0o444)
    read_only_dir.chmod(0o555)
    before = _files(read_only_dir)
    url = f"sqlite:///{db}"
    code, found = memstone(url, "--scope", SCOPE, "search", "deploy")
    assert code == 0, found
    hits = found["hits"]
    assert isinstance(hits, list) and len(hits) == 1
    code, report = memstone(url, "verify")
    assert code == 0 and report["ok"] is True, report
    code, out = memstone(url, "--scope", SCOPE, "remember", "--kind", "fact", "--text", "a new note")
    error = out["error"]
    assert code == 1 and isinstance(error, dict), out
    assert error["code"] == "backend_unavailable"
    assert str(db) in str(error["message"]) and "read-only" in str(error["message"])
    assert _files(read_only_dir) == before


async def test_mode_ro_opens_a_writable_store_read_only(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    await _seed(db)
    before = db.read_bytes()
    async with open_service(f"sqlite:///{db}?mode=ro", embedding=None) as svc:
        assert len((await svc.search("deploy", scopes=[SCOPE])).hits) == 1
        assert (await svc.verify()).ok
        with pytest.raises(BackendUnavailable, match="read-only"):
            await svc.remember(scope=SCOPE, entries=[EntryInput(kind="fact", text="refused")])
    assert db.read_bytes() == before


async def test_an_unknown_url_option_is_refused(tmp_path: Path) -> None:
    from memstone.domain.errors import InvalidInput

    with pytest.raises(InvalidInput, match="unknown store URL option"):
        async with open_service(f"sqlite:///{tmp_path / 'm.db'}?mode=rwx", embedding=None):
            pass
    assert not (tmp_path / "m.db").exists()


async def test_a_read_only_store_of_an_older_schema_is_refused_with_the_way_to_migrate_it(tmp_path: Path) -> None:
    """Issue 13: an old store (schema <= 3) opened read-only used to open unmigrated, and then verify, principals,
    capture settings and tombstones failed with SQL errors ("no such table")."""
    import shutil

    from memstone.backends.sqlite import migrations

    db = tmp_path / "old.db"
    shutil.copyfile(Path(__file__).parent.parent / "fixtures" / "previous-release.db", db)
    before = db.read_bytes()
    with pytest.raises(BackendUnavailable, match="older memstone") as refused:
        async with open_service(f"sqlite:///{db}?mode=ro", embedding=None):
            pass
    assert "schema version 1" in refused.value.message and f"{migrations.LATEST}" in refused.value.message
    assert refused.value.hint is not None and "memstone --url" in refused.value.hint and "migrate" in refused.value.hint
    assert db.read_bytes() == before  # nothing written
    code, out = memstone(f"sqlite:///{db}?mode=ro", "verify")
    error = out["error"]
    assert isinstance(error, dict) and code != 0
    assert "older memstone" in str(error["message"]) and "migrate" in str(error["hint"])

    async with open_service(f"sqlite:///{db}", embedding=None) as svc:  # what the hint says: a writable open
        assert svc.backend.state.schema_version == migrations.LATEST
    async with open_service(f"sqlite:///{db}?mode=ro", embedding=None) as svc:
        assert (await svc.verify()).ok
        assert await svc.memories()
