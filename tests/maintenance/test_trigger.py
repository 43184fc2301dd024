"""The write-threshold event: writes since the last run, one event per crossing, and no run started by it."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from memstone import EntryInput, MemoryService
from memstone.cli.main import cli
from memstone.domain.errors import InvalidInput
from memstone.maintenance import maintain, runs, scope_status

WEB = "memstone://orgs/acme/projects/web"


async def write(svc: MemoryService, n: int) -> None:
    """``n`` writes: each a new Revision of the scope's Memory."""
    for _ in range(n):
        head = await svc.resolve(WEB)
        number = head.revision if head is not None else 0
        await svc.remember(scope=WEB, entries=[EntryInput(kind="fact", text=f"Fact number {number} about the build.")])


@pytest.mark.oceanbase
async def test_crossing_the_threshold_records_one_event_and_starts_no_run(svc: MemoryService) -> None:
    await write(svc, 2)
    below = await scope_status(svc, WEB, threshold=3)
    assert below.writes_since_run == 2 and below.event is None
    await write(svc, 2)
    crossed = await scope_status(svc, WEB, threshold=3)
    assert crossed.event is not None and crossed.event.kind == "writes_threshold_reached"
    assert crossed.event.writes == 4 and crossed.event.threshold == 3
    await write(svc, 1)
    again = await scope_status(svc, WEB, threshold=3)
    assert again.event == crossed.event  # one event per crossing
    assert await runs(svc, scope=WEB) == []  # a signal: it starts no run
    await maintain(svc, scope=WEB, mode="apply")
    after = await scope_status(svc, WEB, threshold=3)
    assert after.writes_since_run == 0 and after.event is None  # counted from where the run ended
    await write(svc, 3)
    fresh = await scope_status(svc, WEB, threshold=3)
    assert fresh.event is not None and fresh.event.event_id != crossed.event.event_id


async def test_a_bad_threshold_is_refused(svc: MemoryService) -> None:
    with pytest.raises(InvalidInput):
        await scope_status(svc, WEB, threshold=0)


def test_status_from_the_cli(db_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import asyncio
    import json

    import memstone

    monkeypatch.setenv("MEMSTONE_EMBEDDING", "none")

    async def seed() -> None:
        async with memstone.open_service(db_url, embedding=None) as svc:
            await write(svc, 2)

    asyncio.run(seed())
    result = CliRunner().invoke(
        cli, ["--url", db_url, "--scope", WEB, "maintenance", "status", "--threshold", "2", "--json"]
    )
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["threshold_reached"] is True and out["writes_since_run"] == 2 and out["last_run"] is None
