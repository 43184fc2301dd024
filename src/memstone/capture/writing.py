"""Planned candidates into the store: write them (re-planned on a stale head), or put them in the review queue,
and say what happened to each (:class:`CaptureOutcome`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..domain.errors import RevisionConflictError
from ..domain.ids import EntryId, EntryVersionId, MemoryId, SourceId, new_ulid
from ..domain.model import EntryInput, EntryVersion, Revision, Surface
from ..service import MemoryService, utc_now
from .admission import Semantic, plan_candidates
from .candidates import Candidate, Plan
from .outcomes import CaptureOutcome, CaptureStatus
from .queue import QueueItem, ReviewQueue

MAX_WRITE_ATTEMPTS = 3


async def current_head(service: MemoryService, scope: str | None, memory_id: MemoryId | None) -> Revision | None:
    if memory_id is not None:
        return await service.head(memory_id)
    assert scope is not None
    return await service.resolve(scope)


def entry_inputs(
    plans: Sequence[Plan], live: Sequence[EntryVersion], evidence_ids: Mapping[str, SourceId]
) -> tuple[list[tuple[Plan, EntryInput]], list[SourceId]]:
    by_id = {v.entry_id: v for v in live}
    out: list[tuple[Plan, EntryInput]] = []
    used: set[SourceId] = set()
    for plan in plans:
        c = plan.candidate
        sids = [evidence_ids[k] for k in c.evidence if k in evidence_ids]
        if plan.action == "add":
            used.update(sids)
            item = EntryInput(
                kind=c.kind,
                text=plan.text,
                title=c.title,
                tags=c.tags,
                slug=c.slug,
                important=c.important,
                mandatory=c.mandatory,
                sources=sids,
                reason=f"capture: {c.origin}",
            )
            out.append((plan, item))
        elif plan.action == "revise" and plan.entry_id in by_id:
            used.update(sids)
            v = by_id[plan.entry_id]
            content = v.content
            item = EntryInput(
                entry=v,
                kind=v.kind,
                text=plan.text,
                title=content.title,
                tags=tuple(sorted(set(content.tags) | set(c.tags))),
                slug=content.slug or c.slug,
                important=content.important or c.important,
                mandatory=content.mandatory or c.mandatory,
                sources=sids,
                artifacts=content.artifacts,
                relations=content.relations,
                reason=f"capture: {plan.why}"[:512],
            )
            out.append((plan, item))
    return out, sorted(used)


@dataclass(frozen=True, slots=True, kw_only=True)
class Batch:
    """Candidates bound for one Memory: ``memory_id``'s, else ``scope``'s (made by the first write).

    ``scope`` is kept beside a ``memory_id`` (the review queue records both); a write addresses the Memory by id.
    ``known`` is a head and its live entries the caller has just read (the first attempt plans against them);
    ``semantic`` the candidates' and entries' vectors it embedded for planning (None: plan without a model).
    """

    scope: str | None
    memory_id: MemoryId | None
    candidates: Sequence[Candidate]
    known: tuple[Revision | None, Sequence[EntryVersion]] | None = None
    semantic: Semantic | None = None


async def write_candidates(
    service: MemoryService,
    batch: Batch,
    evidence_ids: Mapping[str, SourceId],
    *,
    author: str | None,
    surface: Surface,
) -> tuple[Revision | None, list[CaptureOutcome]]:
    """Plan ``batch`` against the current head and write; a stale head (another writer) re-reads and re-plans."""
    memory_id, known = batch.memory_id, batch.known
    scope = batch.scope if memory_id is None else None  # a Memory named by id: its scope is not asked for
    for attempt in range(MAX_WRITE_ATTEMPTS):
        if attempt == 0 and known is not None:
            head, live = known[0], list(known[1])
        else:
            head = await current_head(service, scope, memory_id)
            live = await service.entries(head) if head is not None else []
        plans = plan_candidates(batch.candidates, live, batch.semantic)
        inputs, used = entry_inputs(plans, live, evidence_ids)
        if not inputs:
            return None, [unchanged_outcome(p, head) for p in plans]
        try:
            rev = await service.remember(
                head,
                entries=[i for _, i in inputs],
                sources=used,
                scope=scope if head is None else None,
                mode="append",
                author=author,
                surface=surface,
            )
        except RevisionConflictError:
            # Trigger: another process committed to this Memory between our read and our write.
            # Why: candidates planned against a stale head must not be applied to the new one (RFC).
            # Outcome: re-read the head, re-plan, try again (at most MAX_WRITE_ATTEMPTS times).
            if attempt + 1 == MAX_WRITE_ATTEMPTS:
                raise
            continue
        return rev, await map_outcomes(service, plans, rev, head)
    raise AssertionError("unreachable")  # pragma: no cover


def unchanged_outcome(plan: Plan, head: Revision | None) -> CaptureOutcome:
    return CaptureOutcome(
        action="unchanged",
        candidate=plan.candidate,
        reason=plan.why,
        entry_id=plan.entry_id,
        entry_version_id=plan.entry_version_id,
        memory_id=head.memory_id if head else None,
        score=plan.score,
    )


async def map_outcomes(
    service: MemoryService, plans: Sequence[Plan], rev: Revision | None, head: Revision | None
) -> list[CaptureOutcome]:
    if rev is None or (head is not None and rev.revision == head.revision):
        return [unchanged_outcome(p, head) for p in plans]  # the service found nothing new to write
    revised = {c.entry_id: c.to_entry_version_id for c in rev.changes if c.op == "revise"}
    added: dict[str, tuple[EntryId, EntryVersionId]] = {}
    for change in rev.changes:
        if change.op == "add" and change.to_entry_version_id is not None:
            version = await service.get(change.to_entry_version_id)
            added.setdefault(" ".join(version.text.split()), (change.entry_id, change.to_entry_version_id))
    out = []
    for plan in plans:
        key = " ".join(plan.text.split())
        if plan.action == "add" and key in added:
            eid, vid = added[key]
            out.append(
                CaptureOutcome(
                    action="added", candidate=plan.candidate, reason=plan.why, entry_id=eid, entry_version_id=vid,
                    memory_id=rev.memory_id,
                )
            )  # fmt: skip
        elif plan.action == "revise" and plan.entry_id in revised:
            out.append(
                CaptureOutcome(
                    action="revised", candidate=plan.candidate, reason=plan.why, entry_id=plan.entry_id,
                    entry_version_id=revised[plan.entry_id], memory_id=rev.memory_id, score=plan.score,
                )
            )  # fmt: skip
        else:
            out.append(unchanged_outcome(plan, rev))
    return out


async def enqueue(
    queue: ReviewQueue,
    plans: Sequence[Plan],
    scope: str | None,
    memory_id: MemoryId | None,
    evidence_ids: Mapping[str, SourceId],
) -> list[CaptureOutcome]:
    out: list[CaptureOutcome] = []
    items: list[tuple[Plan, QueueItem]] = []
    for plan in plans:
        if plan.action == "unchanged":
            out.append(unchanged_outcome(plan, None))
            continue
        c = plan.candidate
        item = QueueItem(
            item_id=new_ulid("cap_"),
            item_type="candidate",
            scope=scope,
            memory_id=memory_id,
            created_at=utc_now(),
            candidate=c,
            action=plan.action,
            target_entry=plan.entry_id,
            evidence=tuple((k, evidence_ids[k]) for k in c.evidence if k in evidence_ids),
        )
        items.append((plan, item))
    added = {i.item_id for i in await queue.add([i for _, i in items])}
    for plan, item in items:
        if item.item_id in added:
            queued = CaptureOutcome(
                action="queued",
                candidate=plan.candidate,
                reason=plan.why,
                entry_id=plan.entry_id,
                queue_item=item.item_id,
                memory_id=memory_id,
            )
            out.append(queued)
        else:
            why = "already pending or rejected in the review queue"
            out.append(CaptureOutcome(action="unchanged", candidate=plan.candidate, reason=why))
    return out


def status_of(outcomes: Sequence[CaptureOutcome]) -> CaptureStatus:
    actions = {o.action for o in outcomes}
    if actions & {"added", "revised"}:
        return "stored"
    if "queued" in actions or any(o.action == "flagged" and o.queue_item for o in outcomes):
        return "queued"
    if "unchanged" in actions:
        return "unchanged"
    return "nothing"


__all__ = [
    "MAX_WRITE_ATTEMPTS",
    "Batch",
    "current_head",
    "enqueue",
    "entry_inputs",
    "map_outcomes",
    "status_of",
    "unchanged_outcome",
    "write_candidates",
]
