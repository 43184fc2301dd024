"""Shared constants and helpers of the capture tests (a uniquely named module: tests are not packages here)."""

from __future__ import annotations

from pathlib import Path

from memstone import MemoryService
from memstone.capture import UserPrompt, capture
from memstone.capture.pipeline import CapturePipeline

PROJECT = "memstone://orgs/acme/projects/ledgerd"
USER = "memstone://users/anonymous"


def db_bytes(db_path: Path) -> bytes:
    """Every byte of the database and its WAL/SHM files, to prove what is (not) stored."""
    return b"".join(p.read_bytes() for p in sorted(db_path.parent.glob(db_path.name + "*")) if p.is_file())


async def entry_then(service: MemoryService, memory: list[str], first: str, then: str) -> tuple[str, list[object]]:
    """Capture ``memory``, then ``first`` (which must add one entry), then ``then``: the entry of ``first`` and
    the (action, entry id) of each outcome of ``then``. Dedup is under test here, not the learned junk screen
    (test_junk_text.py): its borderline p(junk) of a one-line fact ("The preview wiki runs at …" 0.401 against
    0.389) would decide the premise, so these run with the rules alone."""
    rules = CapturePipeline(text_screen=False)
    for text in memory:
        await capture(service, UserPrompt(text=text), scope=PROJECT, pipeline=rules)
    (entry,) = (await capture(service, UserPrompt(text=first), scope=PROJECT, pipeline=rules)).entries()
    later = await capture(service, UserPrompt(text=then), scope=PROJECT, pipeline=rules)
    return entry, [(o.action, o.entry_id) for o in later.outcomes]
