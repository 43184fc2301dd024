"""The daemon runs the engine's own storage upkeep when the engine has one (LanceDB's ``storage_due`` gate and
``maintain_storage``: sweep, checkpoint, compaction), and has no such loop on an engine without one."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

import memstone
from memstone import EntryInput
from memstone.maintenance.daemon import Daemon, DaemonSettings, read_health

WEB = "memstone://orgs/acme/projects/web"


def storage_action(health: Path) -> str | None:
    report = read_health(health)
    assert report is not None
    loops = {str(x["name"]): x for x in report["loops"]}  # type: ignore[attr-defined]
    return str(loops["storage"]["last_action"]) if "storage" in loops else None


async def test_the_daemon_checkpoints_a_lancedb_store_when_its_gate_says_so(tmp_path: Path) -> None:
    pytest.importorskip("lancedb")
    from memstone.backends.lance.store import LanceMemoryBackend

    health = tmp_path / "health.json"
    async with memstone.open_service(f"lancedb:///{tmp_path / 'store'}", embedding=None) as svc:
        backend = svc.backend
        assert isinstance(backend, LanceMemoryBackend)
        for n in range(100):  # the gate: 100 writes since the last checkpoint
            await svc.remember(scope=WEB, entries=[EntryInput(kind="fact", text=f"Fact number {n}.")])
        assert backend.lance.log.checkpoint_seq() == 0
        assert await Daemon(svc, DaemonSettings(once=True, health_file=health)).run(asyncio.Event()) == 0
        assert backend.lance.log.checkpoint_seq() >= 100  # (the dry run the daemon also started writes too)
        assert "checkpoint_seq" in str(storage_action(health))
        assert await Daemon(svc, DaemonSettings(once=True, health_file=health)).run(asyncio.Event()) == 0
        assert storage_action(health) == "storage: nothing due"


async def test_an_engine_without_its_own_upkeep_has_no_storage_loop(tmp_path: Path) -> None:
    health = tmp_path / "health.json"
    async with memstone.open_service(f"sqlite:///{tmp_path / 'm.db'}", embedding=None) as svc:
        await svc.remember(scope=WEB, entries=[EntryInput(kind="fact", text="Deploy with uv.")])
        assert await Daemon(svc, DaemonSettings(once=True, health_file=health)).run(asyncio.Event()) == 0
    assert storage_action(health) is None
