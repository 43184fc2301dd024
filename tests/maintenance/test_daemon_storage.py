"""The daemon's storage loop runs the engine's own upkeep gate when the engine has one (LanceDB's ``storage_due``
and ``maintain_storage``: sweep, checkpoint, compaction) instead of the SQL engines' write-marker gate."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

import memstone
from memstone import EntryInput
from memstone.maintenance.daemon import Daemon, DaemonSettings

WEB = "memstone://orgs/acme/projects/web"


async def test_the_daemon_checkpoints_a_lancedb_store_when_its_gate_says_so(tmp_path: Path) -> None:
    pytest.importorskip("lancedb")
    from memstone.backends.lance.store import LanceMemoryBackend

    async with memstone.open_service(f"lancedb:///{tmp_path / 'store'}", embedding=None) as svc:
        backend = svc.backend
        assert isinstance(backend, LanceMemoryBackend)
        for n in range(100):  # the gate: 100 writes since the last checkpoint
            await svc.remember(scope=WEB, entries=[EntryInput(kind="fact", text=f"Fact number {n}.")])
        assert backend.lance.log.checkpoint_seq() == 0
        first = Daemon(svc, DaemonSettings(once=True, upkeep_every_s=0))
        assert await first.run(asyncio.Event()) == 0
        assert backend.lance.log.checkpoint_seq() >= 100  # (the dry run the daemon also started writes too)
        assert "checkpoint_seq" in str(first.loops["storage"].last_action)
        second = Daemon(svc, DaemonSettings(once=True, upkeep_every_s=0))
        assert await second.run(asyncio.Event()) == 0
        assert second.loops["storage"].last_action == "storage: nothing due"


async def test_an_engine_without_its_own_gate_uses_the_write_marker_gate(tmp_path: Path) -> None:
    async with memstone.open_service(f"sqlite:///{tmp_path / 'm.db'}", embedding=None) as svc:
        await svc.remember(scope=WEB, entries=[EntryInput(kind="fact", text="Deploy with uv.")])
        daemon = Daemon(svc, DaemonSettings(once=True, upkeep_every_s=0))
        assert await daemon.run(asyncio.Event()) == 0
    assert (daemon.loops["storage"].last_action or "").startswith("storage upkeep in")
