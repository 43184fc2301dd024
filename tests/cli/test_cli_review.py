"""``memstone review list|accept|reject``: the capture review queue from the CLI, on a real SQLite file."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from memstone import open_service
from memstone.capture import CaptureSettings, ReviewQueue, UserPrompt, capture
from memstone.cli.main import cli

PROJECT = "memstone://orgs/acme/projects/ledgerd"


@pytest.fixture
def url(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("MEMSTONE_EMBEDDING", "none")
    monkeypatch.chdir(tmp_path)
    return f"sqlite:///{tmp_path / 'memstone.db'}"


def queued(url: str, *texts: str) -> list[str]:
    """Capture each text in review mode (as a hook would) and return the queued item ids."""

    async def run() -> list[str]:
        settings = CaptureSettings().with_mode(PROJECT, "review")
        ids = []
        async with open_service(url, embedding=None) as svc:
            queue = ReviewQueue.of(svc)  # the queue kept in the store
            for text in texts:
                result = await capture(svc, UserPrompt(text=text), scope=PROJECT, settings=settings, queue=queue)
                assert result.status == "queued", result
                ids.append(str(result.outcomes[0].queue_item))
        return ids

    return asyncio.run(run())


def run(url: str, *args: str, code: int = 0) -> Any:
    result = CliRunner().invoke(cli, ["--url", url, *args], catch_exceptions=False)
    assert result.exit_code == code, (result.stdout, result.stderr)
    return json.loads(result.stdout) if "--json" in args else result


def test_list_accept_and_reject_the_queue(url: str) -> None:
    first, second = queued(url, "Never log card numbers.", "Prefer table-driven tests.")
    pending = run(url, "review", "list", "--json")["items"]
    assert [i["item_id"] for i in pending] == [first, second]
    assert pending[0]["candidate"]["text"] == "Never log card numbers." and pending[0]["scope"] == PROJECT
    assert first in run(url, "review", "list").stdout

    accepted = run(url, "review", "accept", first, "--json")
    (entry,) = accepted["entries"]
    assert accepted["item"]["status"] == "accepted" and accepted["item"]["result_entry"] == entry
    shown = run(url, "show", entry, "--json")["version"]
    assert shown["text"] == "Never log card numbers."

    rejected = run(url, "review", "reject", second, "--note", "too generic", "--json")
    assert (rejected["item"]["status"], rejected["item"]["note"]) == ("rejected", "too generic")
    assert run(url, "review", "list", "--json")["items"] == []
    everything = run(url, "review", "list", "--status", "all", "--scope", PROJECT, "--json")["items"]
    assert [i["status"] for i in everything] == ["accepted", "rejected"]
    assert run(url, "memories", "--json")["memories"][0]["active_count"] == 1  # only the accepted one was written


def test_review_errors_are_clear(url: str) -> None:
    (item,) = queued(url, "Never push to main directly.")
    run(url, "review", "reject", item)
    again = run(url, "review", "accept", item, "--json", code=2)
    assert "already rejected" in again["error"]["message"]
    missing = run(url, "review", "reject", "cap_nope", "--json", code=4)
    assert missing["error"]["code"] == "not_found"
    assert run("sqlite:///:memory:", "review", "list", "--json")["items"] == []  # an in-memory store has one too
    absent = url.replace("memstone.db", "absent.db")
    assert run(absent, "review", "list", "--json", code=4)["error"]["code"] == "not_found"  # a read creates nothing
    assert not Path(absent.removeprefix("sqlite:///")).exists()
