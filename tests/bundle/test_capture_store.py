"""The capture review queue and settings live in the store's own engine: one behaviour on all three engines.

Before, both were JSON files beside a SQLite database, so capture's review mode existed only for a local file.
"""

from __future__ import annotations

import asyncio

import pytest

from memstone import InvalidInput, MemoryService, NotFound, open_service
from memstone.capture import (
    Candidate,
    CaptureSettings,
    QueueItem,
    ReviewFlag,
    ReviewQueue,
    UserPrompt,
    accept,
    capture,
    load_capture_settings,
    reject,
    save_capture_settings,
)
from memstone.domain.ids import EntryId, EntryVersionId, SourceId

SCOPE = "memstone://orgs/acme/projects/web"


def item(n: int, text: str | None = None, scope: str = SCOPE) -> QueueItem:
    return QueueItem(
        item_id=f"cap_{n:04d}",
        item_type="candidate",
        scope=scope,
        memory_id=None,
        created_at="2026-01-01T00:00:00Z",
        candidate=Candidate(kind="constraint", text=text or f"Rule number {n} for everyone.", origin="statement"),
        action="add",
        evidence=(("event", SourceId(f"src_{n}")),),
    )


FLAG = QueueItem(
    item_id="cap_flag",
    item_type="flag",
    scope=SCOPE,
    memory_id=None,
    created_at="t",
    flag=ReviewFlag(
        entry_id=EntryId("ent_1"),
        entry_version_id=EntryVersionId("ver_1"),
        entry_excerpt="x",
        paths=("Makefile",),
        base_commit="a",
        head_commit="b",
    ),
)


async def queue_and_settings(svc: MemoryService, url: str) -> None:
    queue = ReviewQueue.of(svc)
    assert await queue.add([item(1), FLAG]) == (item(1), FLAG)
    assert await queue.add([FLAG]) == ()  # the same flag is not queued twice while pending
    assert await queue.add([item(9, "  RULE number 1 for   everyone. ")]) == ()  # same text, folded: pending already
    assert await queue.add([item(2, scope="memstone://orgs/acme/projects/api", text="Rule number 1 for everyone.")])
    async with open_service(url, embedding=None) as other:  # another process sees the same queue
        again = ReviewQueue.of(other)
        assert [i.item_id for i in await again.items()] == ["cap_0001", "cap_flag", "cap_0002"]  # oldest first
        assert await again.get("cap_flag") == FLAG
        decided = await again.decide("cap_0001", "rejected", decided_at="t2", decided_by="bob", note="no")
        assert (decided.status, decided.note) == ("rejected", "no")
    assert [i.item_id for i in await queue.pending(scope=SCOPE)] == ["cap_flag"]
    assert await queue.add([item(3, "Rule number 1 for everyone.")]) == ()  # rejected: not queued again
    with pytest.raises(InvalidInput, match="already rejected"):
        await queue.decide("cap_0001", "accepted", decided_at="t3")
    with pytest.raises(NotFound):
        await queue.get("cap_nope")
    assert [i.status for i in await queue.items(status="rejected")] == ["rejected"]

    assert await load_capture_settings(svc) == CaptureSettings()  # nothing saved: the defaults
    chosen = CaptureSettings(record_sources="when_used").with_mode(SCOPE, "review").with_mode(None, "off")
    await save_capture_settings(svc, chosen)
    async with open_service(url, embedding=None) as other:
        assert await load_capture_settings(other) == chosen


async def test_the_review_queue_and_settings_on_every_engine(store_url: str) -> None:
    async with open_service(store_url, embedding=None) as svc:
        await queue_and_settings(svc, store_url)
        # The capture pipeline end to end in review mode: queued, then accepted into the store, or rejected.
        settings = CaptureSettings().with_mode("memstone://orgs/acme/projects/docs", "review")
        docs = "memstone://orgs/acme/projects/docs"
        first = await capture(svc, UserPrompt(text="Never log card numbers."), scope=docs, settings=settings)
        second = await capture(svc, UserPrompt(text="Prefer table-driven tests."), scope=docs, settings=settings)
        assert (first.status, second.status) == ("queued", "queued") and await svc.resolve(docs) is None
        queue = ReviewQueue.of(svc)
        done = await accept(svc, queue, str(first.outcomes[0].queue_item), decided_by="alice")
        (entry,) = done.entries()
        assert (await svc.get(entry)).text == "Never log card numbers."
        await reject(svc, queue, str(second.outcomes[0].queue_item), decided_by="alice")
        assert await queue.pending(scope=docs) == ()


async def test_concurrent_writers_on_one_store_lose_no_item(engine_store_url: str) -> None:
    """Four services (as four hooks would) queue at once: every distinct item is kept, exactly once."""
    async with open_service(engine_store_url, embedding=None):
        pass

    async def writer(start: int) -> None:
        async with open_service(engine_store_url, embedding=None) as svc:
            queue = ReviewQueue.of(svc)
            for n in range(start, start + 10):
                await queue.add([item(n), item(1000 + n % 5, "One rule all writers share.")])

    await asyncio.gather(*(writer(k * 100) for k in range(4)))
    async with open_service(engine_store_url, embedding=None) as svc:
        pending = await ReviewQueue.of(svc).pending()
    texts = [i.candidate.text for i in pending if i.candidate]
    assert len(pending) == 41 and texts.count("One rule all writers share.") == 1
