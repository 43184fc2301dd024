"""An acknowledged write is durable by default; the faster mode is an explicit choice (issue 12, durability)."""

from __future__ import annotations

from pathlib import Path

from memstone import open_service
from memstone.backends.sqlite import SQLiteMemoryBackend

FULL, NORMAL = 2, 1  # PRAGMA synchronous values


async def _synchronous(url: str) -> tuple[int, str]:
    async with open_service(url, embedding=None) as svc:
        backend = svc.backend
        assert isinstance(backend, SQLiteMemoryBackend)
        ((sync,),) = backend.conn.execute("PRAGMA synchronous").fetchall()
        ((journal,),) = backend.conn.execute("PRAGMA journal_mode").fetchall()
        return int(sync), str(journal)


async def test_the_default_syncs_the_wal_at_every_commit(tmp_path: Path) -> None:
    assert await _synchronous(f"sqlite:///{tmp_path / 'm.db'}") == (FULL, "wal")


async def test_durability_fast_is_the_explicit_faster_mode(tmp_path: Path) -> None:
    assert await _synchronous(f"sqlite:///{tmp_path / 'm.db'}?durability=fast") == (NORMAL, "wal")
    assert await _synchronous(f"sqlite:///{tmp_path / 'm.db'}?durability=full") == (FULL, "wal")
