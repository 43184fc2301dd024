"""Hostile values at the library and the CLI are InvalidInput / exit 2, never a traceback (issue 12, finding 9)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from memstone import open_service
from memstone.cli.main import cli
from memstone.domain.errors import InvalidInput
from memstone.domain.model import ArtifactRef, EntryInput

SCOPE = "memstone://orgs/acme"
HUGE = 9223372036854775808  # 2**63: one past what SQLite stores


async def test_the_library_refuses_wrong_types_and_huge_revisions(tmp_path: Path) -> None:
    async with open_service(f"sqlite:///{tmp_path / 'm.db'}", embedding=None) as svc:
        rev = await svc.remember(scope=SCOPE, entries=[EntryInput(kind="fact", text="hello world")])
        assert rev is not None
        bad: list[Any] = [
            lambda: svc.remember(scope=SCOPE, entries=[EntryInput(kind="fact", text="x", tags=5)]),  # type: ignore[arg-type]
            lambda: svc.remember(scope=SCOPE, entries=[EntryInput(kind="fact", text="x", relations=5)]),  # type: ignore[arg-type]
            lambda: svc.remember(scope=SCOPE, entries=5),  # type: ignore[arg-type]
            lambda: svc.remember(scope=SCOPE, entries=[EntryInput(kind="fact", text="x")], sources=7),  # type: ignore[arg-type]
            lambda: svc.search("hello", scopes=True),  # type: ignore[arg-type]
            lambda: svc.search("hello", memories=True),  # type: ignore[arg-type]
            lambda: svc.search("hello", scopes=[SCOPE], kinds=True),  # type: ignore[arg-type]
            lambda: svc.search("hello", scopes=[SCOPE], tags=5),  # type: ignore[arg-type]
            lambda: svc.revision(rev.memory_id, HUGE),
            lambda: svc.revision(ArtifactRef(memory_id=rev.memory_id, revision=HUGE)),
            lambda: svc.forget(rev, entries=3),  # type: ignore[arg-type]
            # found by bench/bench_fuzz.py: no Memory named was an AssertionError
            lambda: svc.forget(None, entries=[rev.changes[0].entry_id]),  # type: ignore[arg-type]
            lambda: svc.reactivate(None, entries=[rev.changes[0].entry_id]),  # type: ignore[arg-type]
            lambda: svc.organize(None),  # type: ignore[arg-type]
        ]
        for i, call in enumerate(bad):
            with pytest.raises(InvalidInput):
                await call()
            assert (await svc.head(rev.memory_id)).revision == 1, i
        assert len((await svc.search("hello", scopes=[SCOPE])).hits) == 1


def run(url: str, *args: str) -> tuple[int, dict[str, Any]]:
    result = CliRunner().invoke(cli, ["--url", url, *args, "--json"], catch_exceptions=False)
    return result.exit_code, json.loads(result.stdout)


@pytest.mark.parametrize("command", ["show", "cite", "list"])
def test_the_cli_refuses_a_revision_past_64_bits(tmp_path: Path, command: str) -> None:
    url = f"sqlite:///{tmp_path / 'm.db'}"
    code, out = run(url, "--scope", SCOPE, "remember", "--kind", "fact", "--text", "hello world")
    assert code == 0
    entry = next(c["entry_id"] for c in out["revision"]["changes"])
    memory = out["revision"]["memory_id"]
    args = {"show": [entry], "cite": [entry], "list": ["--memory", memory]}[command]
    code, out = run(url, command, *args, "--revision", str(HUGE))
    assert code == 2 and out["error"]["code"] == "invalid_input", out
