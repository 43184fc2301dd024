"""The review queue: candidates and flags that wait for a person or an agent to accept or reject them.

In ``review`` mode capture records the event's Sources (after secret scanning) and queues each admitted
candidate here instead of writing it. :func:`~memstone.capture.accept` re-plans the candidate against the
*current* head (a queued "revise" may have gone stale) and writes it; :func:`~memstone.capture.reject` closes it.
Git-change :class:`~memstone.capture.ReviewFlag` values are queued in every mode; a flag is closed, never written.

Storage: the ``capture_queue`` table of the memory store itself (:mod:`memstone.capture.store`), on every engine;
``ReviewQueue.of(svc)`` is the queue of a service's store. Adding checks and inserts under one lock, so concurrent
hooks neither lose items nor queue a statement twice. Decided items stay as an audit trail, and a statement that
was rejected once is not queued again.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Literal, cast

from ..domain.errors import InvalidInput, NotFound
from ..domain.fields import PlainDict
from ..domain.ids import EntryId, EntryVersionId, MemoryId, SourceId
from .candidates import Candidate, PlanAction, ReviewFlag
from .store import CaptureStore, capture_store_of

if TYPE_CHECKING:
    from ..service import MemoryService

__all__ = ["ItemType", "QueueItem", "QueueStatus", "ReviewQueue"]

QueueStatus = Literal["pending", "accepted", "rejected"]
ItemType = Literal["candidate", "flag"]
QUEUE_VERSION = 1


@dataclass(frozen=True, slots=True, kw_only=True)
class QueueItem(PlainDict):
    """One queued candidate (``item_type="candidate"``) or review flag (``"flag"``) and its decision."""

    item_id: str
    item_type: ItemType
    scope: str | None
    memory_id: MemoryId | None
    created_at: str
    candidate: Candidate | None = None
    action: PlanAction | None = None  # what dedup planned when it was queued (re-planned on accept)
    target_entry: EntryId | None = None
    evidence: tuple[tuple[str, SourceId], ...] = ()  # candidate evidence key -> recorded Source id
    flag: ReviewFlag | None = None
    status: QueueStatus = "pending"
    decided_at: str | None = None
    decided_by: str | None = None
    note: str | None = None
    result_entry: EntryId | None = None

    @property
    def source_ids(self) -> tuple[SourceId, ...]:
        return tuple(sid for _, sid in self.evidence)

    @classmethod
    def from_dict(cls, data: Mapping[str, object]) -> QueueItem:
        cand = data.get("candidate")
        flag = data.get("flag")
        evidence = data.get("evidence") or []
        assert isinstance(evidence, list)
        flag_obj = None
        if isinstance(flag, dict):
            paths = flag.get("paths") or []
            assert isinstance(paths, list)
            flag_obj = ReviewFlag(
                entry_id=EntryId(str(flag["entry_id"])),
                entry_version_id=EntryVersionId(str(flag["entry_version_id"])),
                entry_excerpt=str(flag.get("entry_excerpt", "")),
                paths=tuple(str(p) for p in paths),
                base_commit=str(flag.get("base_commit", "")),
                head_commit=str(flag.get("head_commit", "")),
                reason=str(flag.get("reason", "evidence_changed")),
            )

        def opt(key: str) -> str | None:
            value = data.get(key)
            return value if isinstance(value, str) else None

        return cls(
            item_id=str(data["item_id"]),
            item_type=cast(ItemType, data["item_type"]),
            scope=opt("scope"),
            memory_id=MemoryId(m) if (m := opt("memory_id")) else None,
            created_at=str(data.get("created_at", "")),
            candidate=Candidate.from_dict(cand) if isinstance(cand, dict) else None,
            action=cast(PlanAction, data["action"]) if data.get("action") else None,
            target_entry=EntryId(t) if (t := opt("target_entry")) else None,
            evidence=tuple((str(k), SourceId(str(v))) for k, v in evidence),
            flag=flag_obj,
            status=cast(QueueStatus, data.get("status", "pending")),
            decided_at=opt("decided_at"),
            decided_by=opt("decided_by"),
            note=opt("note"),
            result_entry=EntryId(r) if (r := opt("result_entry")) else None,
        )


class ReviewQueue:
    """The review queue of one store (``ReviewQueue.of(svc)``, or over any :class:`CaptureStore`)."""

    def __init__(self, store: CaptureStore) -> None:
        self.store = store

    @classmethod
    def of(cls, svc: MemoryService) -> ReviewQueue:
        """The queue kept in a service's store (refused for a backend that keeps none)."""
        return cls(capture_store_of(svc.backend))

    def __repr__(self) -> str:
        return f"ReviewQueue({type(self.store).__name__})"

    async def add(self, items: Sequence[QueueItem]) -> tuple[QueueItem, ...]:
        """Queue items; a candidate whose text is already pending or was rejected for that scope is skipped, and
        so is a flag already pending. Returns the items actually queued."""
        if not items:
            return ()
        added = set(await self.store.queue_add([i.to_dict() for i in items]))
        return tuple(i for i in items if i.item_id in added)

    async def items(self, *, status: QueueStatus | None = None, scope: str | None = None) -> tuple[QueueItem, ...]:
        """Every item (optionally only one status or one scope), oldest first."""
        return tuple(QueueItem.from_dict(r) for r in await self.store.queue_items(status=status, scope=scope))

    async def pending(self, scope: str | None = None) -> tuple[QueueItem, ...]:
        """The items that wait for a decision."""
        return await self.items(status="pending", scope=scope)

    async def get(self, item_id: str) -> QueueItem:
        """One item by id (NotFound when there is none)."""
        found = await self.store.queue_item(item_id)
        if found is None:
            raise NotFound(f"no queued capture item {item_id}", hint="list the pending items of the review queue")
        return QueueItem.from_dict(found)

    async def decide(
        self,
        item_id: str,
        status: Literal["accepted", "rejected"],
        *,
        decided_at: str,
        decided_by: str | None = None,
        note: str | None = None,
        result_entry: EntryId | None = None,
    ) -> QueueItem:
        """Close a pending item; deciding an already decided item is refused."""
        item = await self.get(item_id)
        done = replace(
            item, status=status, decided_at=decided_at, decided_by=decided_by, note=note, result_entry=result_entry
        )
        if item.status == "pending" and await self.store.queue_decide(item_id, done.to_dict()):
            return done
        raise InvalidInput(f"capture item {item_id} is already {(await self.get(item_id)).status}")
