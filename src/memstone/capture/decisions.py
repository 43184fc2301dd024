"""Review decisions on queued capture items: :func:`accept` writes the candidate as auto capture would now,
:func:`reject` closes it so the same statement is not queued again.

Who may see and decide an item is decided here, once, for every surface (CLI, HTTP, MCP): :func:`visible_items`
lists the items of scopes the actor can read; :func:`decidable` reads one item as NotFound unless its scope is
readable, and needs ``write`` on that scope; both decisions go through it."""

from __future__ import annotations

from ..domain.errors import InvalidInput, NotFound
from ..domain.model import Surface
from ..service import MemoryService, utc_now
from .outcomes import CaptureResult
from .queue import QueueItem, QueueStatus, ReviewQueue
from .writing import Batch, status_of, write_candidates


async def visible_items(
    service: MemoryService, queue: ReviewQueue, *, status: QueueStatus | None = "pending", scope: str | None = None
) -> list[QueueItem]:
    """The queue's items (``status`` None: all) of scopes the actor may read, oldest first."""
    found = await queue.items(status=status, scope=scope)
    return [i for i in found if await service.policy.readable(i.scope)]


async def decidable(service: MemoryService, queue: ReviewQueue, item_id: str) -> QueueItem:
    """One item the actor may decide: NotFound unless its scope is readable (an unreadable item is not shown to
    exist), Forbidden without ``write`` on its scope."""
    item = await queue.get(item_id)
    if not await service.policy.readable(item.scope):
        raise NotFound(f"no queued capture item {item_id}", hint="list the review queue to see the items you can read")
    if item.scope is not None:
        await service.policy.require_named(item.scope, "write")
    return item


async def accept(
    service: MemoryService,
    queue: ReviewQueue,
    item_id: str,
    *,
    decided_by: str | None = None,
    surface: Surface = "human",
) -> CaptureResult:
    """Accept a queued item: re-plan its candidate against the current head and write it (a flag is just closed).

    The write is the same as ``auto`` capture would have made now: a near-duplicate that appeared meanwhile
    turns the add into a revision or a no-op.
    """
    item = await decidable(service, queue, item_id)
    if item.status != "pending":
        raise InvalidInput(f"capture item {item_id} is already {item.status}")
    if item.candidate is None:
        await queue.decide(item_id, "accepted", decided_at=utc_now(), decided_by=decided_by, note="flag acknowledged")
        return CaptureResult(status="nothing", mode="review", reason="flag acknowledged; nothing was written")
    if item.memory_id is None and item.scope is None:
        raise InvalidInput(f"capture item {item_id} names neither a scope nor a memory")
    batch = Batch(scope=item.scope, memory_id=item.memory_id, candidates=[item.candidate])
    rev, outcomes = await write_candidates(service, batch, dict(item.evidence), author=decided_by, surface=surface)
    entry = next((o.entry_id for o in outcomes if o.entry_id is not None), None)
    await queue.decide(item_id, "accepted", decided_at=utc_now(), decided_by=decided_by, result_entry=entry)
    written = rev is not None and any(o.action in ("added", "revised") for o in outcomes)
    return CaptureResult(
        status=status_of(outcomes),
        mode="review",
        outcomes=tuple(outcomes),
        revisions=(rev,) if written and rev is not None else (),
    )


async def reject(
    service: MemoryService,
    queue: ReviewQueue,
    item_id: str,
    *,
    decided_by: str | None = None,
    note: str | None = None,
) -> QueueItem:
    """Reject a queued item: nothing is written, and the same statement is not queued again for that scope."""
    await decidable(service, queue, item_id)
    return await queue.decide(item_id, "rejected", decided_at=utc_now(), decided_by=decided_by, note=note)


__all__ = ["accept", "decidable", "reject", "visible_items"]
