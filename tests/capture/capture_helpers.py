"""Shared constants and helpers of the capture tests (a uniquely named module: tests are not packages here)."""

from __future__ import annotations

from pathlib import Path

from memstone import MemoryService
from memstone.capture import UserPrompt, capture

PROJECT = "memstone://orgs/acme/projects/ledgerd"
USER = "memstone://users/anonymous"


def db_bytes(db_path: Path) -> bytes:
    """Every byte of the database and its WAL/SHM files, to prove what is (not) stored."""
    return b"".join(p.read_bytes() for p in sorted(db_path.parent.glob(db_path.name + "*")) if p.is_file())


async def entry_then(service: MemoryService, memory: list[str], first: str, then: str) -> tuple[str, list[object]]:
    """Capture ``memory``, then ``first`` (which must add one entry), then ``then``: the entry of ``first`` and
    the (action, entry id) of each outcome of ``then``."""
    for text in memory:
        await capture(service, UserPrompt(text=text), scope=PROJECT)
    (entry,) = (await capture(service, UserPrompt(text=first), scope=PROJECT)).entries()
    later = await capture(service, UserPrompt(text=then), scope=PROJECT)
    return entry, [(o.action, o.entry_id) for o in later.outcomes]
