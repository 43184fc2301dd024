"""The capture pipeline: a task event in, admitted and deduplicated entries (or queue items) out.

:func:`capture` is the one call a hook or the MCP server makes per event::

    event (UserPrompt, TurnStop, GitChange, …)
      → fit to the Source size limit
      → secret scan of every field and every Source to be written      (a secret refuses the whole event:
                                                                          nothing is stored, not even a Source)
      → mode for the scope: off → return; auto / review → continue
      → CapturePipeline.propose: deterministic adapters (+ the model extractor when one is configured)
      → admission (reason codes) → dedup against the live entries (add / revise / unchanged)
      → record the event's Sources (service.record_source)
      → auto:   service.remember(head, entries=…, sources=…, mode="append")   (re-planned on a stale head)
        review: the review queue (accept / reject later)
      → CaptureResult (a value: status, outcomes with entry ids, reasons, token use)

:class:`CapturePipeline` also implements the ``CandidatePipeline`` port (``extract(evidence, current_entries)``)
for callers that already persisted their Sources.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from ..domain.errors import InvalidInput, MemstoneError, RevisionConflictError
from ..domain.ids import EntryId, EntryVersionId, MemoryId, SourceId, new_ulid
from ..domain.model import ArtifactRef, EntryInput, EntryVersion, Revision, Source, Surface
from ..domain.secrets import SecretFinding, describe_findings, find_secrets
from ..ports import EmbeddingModel
from ..service import MemoryService, utc_now
from ._text import clean
from .adapters import build_file_candidates, git_change_flags, statement_candidates, working_note_candidate
from .admission import SEMANTIC_THRESHOLDS, Admission, Semantic, admit, plan_candidates, semantic_texts
from .candidates import Candidate, Plan, ReviewFlag, Skip
from .events import (
    Bootstrap,
    ExplicitSubmit,
    FileSnapshot,
    GitChange,
    Handoff,
    SourceDraft,
    TaskEvent,
    TurnStop,
    UserCorrection,
    UserPrompt,
    event_from_source,
    event_sources,
    event_texts,
    fit_event,
)
from .extractor import ModelExtractor, TokenUsage
from .queue import QueueItem, ReviewQueue
from .settings import CaptureMode, CaptureSettings
from .statements import lesson_candidates

__all__ = [
    "CaptureOutcome",
    "CapturePipeline",
    "CaptureResult",
    "Proposal",
    "accept",
    "capture",
    "reject",
]

CaptureStatus = Literal["stored", "queued", "unchanged", "nothing", "refused", "off"]
OutcomeAction = Literal["added", "revised", "unchanged", "rejected", "queued", "flagged", "off"]
MAX_WRITE_ATTEMPTS = 3
_EVENT_LABELS = {
    "user-prompt": "the user prompt",
    "user-correction": "the user correction",
    "agent-turn": "the turn report",
    "handoff": "the handoff",
    "git-change": "the git change",
    "explicit-submit": "the submitted entries",
    "bootstrap": "the bootstrap files",
}


@dataclass(frozen=True, slots=True, kw_only=True)
class CaptureOutcome:
    """What happened to one candidate (or flag): added, revised, unchanged, rejected (with a reason), queued…"""

    action: OutcomeAction
    candidate: Candidate | None = None
    reason: str | None = None
    entry_id: EntryId | None = None
    entry_version_id: EntryVersionId | None = None
    memory_id: MemoryId | None = None
    queue_item: str | None = None
    flag: ReviewFlag | None = None
    score: float = 0.0

    def to_dict(self) -> dict[str, object]:
        return {
            "action": self.action,
            "candidate": self.candidate.to_dict() if self.candidate else None,
            "reason": self.reason,
            "entry_id": self.entry_id,
            "entry_version_id": self.entry_version_id,
            "memory_id": self.memory_id,
            "queue_item": self.queue_item,
            "flag": self.flag.to_dict() if self.flag else None,
            "score": round(self.score, 3),
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class CaptureResult:
    """The value :func:`capture` returns. ``status`` sums it up; ``outcomes`` has one row per candidate or flag.

    ``status``: ``stored`` (an entry was added or revised), ``queued`` (items wait in the review queue),
    ``unchanged`` (every candidate was already known), ``nothing`` (no candidate), ``refused`` (a secret: nothing
    at all was stored; ``reason`` says why without echoing it) or ``off`` (capture is off for the scope).
    """

    status: CaptureStatus
    mode: CaptureMode
    reason: str | None = None
    findings: tuple[SecretFinding, ...] = ()
    sources: tuple[Source, ...] = ()
    outcomes: tuple[CaptureOutcome, ...] = ()
    skipped: tuple[Skip, ...] = ()
    revisions: tuple[Revision, ...] = ()
    usage: TokenUsage = field(default_factory=TokenUsage)
    extractor_error: str | None = None

    def entries(self, *actions: OutcomeAction) -> tuple[EntryId, ...]:
        """Entry ids of the outcomes with these actions (default: added and revised)."""
        wanted = actions or ("added", "revised")
        return tuple(o.entry_id for o in self.outcomes if o.action in wanted and o.entry_id is not None)

    def to_dict(self) -> dict[str, object]:
        return {
            "status": self.status,
            "mode": self.mode,
            "reason": self.reason,
            "findings": [f.to_dict() for f in self.findings],
            "sources": [s.source_id for s in self.sources],
            "outcomes": [o.to_dict() for o in self.outcomes],
            "skipped": [s.to_dict() for s in self.skipped],
            "revisions": [str(r.ref) for r in self.revisions],
            "usage": self.usage.to_dict(),
            "extractor_error": self.extractor_error,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class Proposal:
    """Everything the pipeline proposes for one event, before dedup: admission decisions, flags, skips, cost."""

    admissions: tuple[Admission, ...] = ()
    flags: tuple[ReviewFlag, ...] = ()
    skipped: tuple[Skip, ...] = ()
    usage: TokenUsage = field(default_factory=TokenUsage)
    extractor_error: str | None = None

    @property
    def admitted(self) -> tuple[Candidate, ...]:
        return tuple(a.candidate for a in self.admissions if a.admitted)


SourceLookup = Callable[[Sequence[str]], Awaitable[Sequence[Source]]]


class CapturePipeline:
    """Deterministic adapters, the optional model extractor and admission, for one event at a time.

    Implements the ``CandidatePipeline`` port: :meth:`extract` takes persisted Sources and the current entries
    and returns the planned writes and review flags. ``source_lookup`` (e.g. ``service.sources``) lets
    :meth:`extract` resolve the evidence of current entries for Git-change flags.

    >>> pipeline = CapturePipeline()  # no model; working notes on
    """

    def __init__(
        self,
        *,
        working_notes: bool = True,
        extractor: ModelExtractor | None = None,
        source_lookup: SourceLookup | None = None,
        embedding: EmbeddingModel | None = None,
    ) -> None:
        self.working_notes = working_notes
        self.extractor = extractor
        self.embedding = embedding
        self._source_lookup = source_lookup

    async def propose(
        self,
        event: TaskEvent,
        *,
        evidence: Mapping[str, str],
        live: Sequence[EntryVersion] = (),
        sources: Mapping[SourceId, Source] | None = None,
    ) -> Proposal:
        """Candidates, admission decisions, flags and skips for one (already secret-scanned) event."""
        candidates: list[Candidate] = []
        skipped: list[Skip] = []
        flags: tuple[ReviewFlag, ...] = ()
        files: tuple[FileSnapshot, ...] = ()
        match event:
            case UserPrompt() | UserCorrection():
                analysis = statement_candidates(event)
                candidates.extend(analysis.candidates)
                skipped.extend(analysis.skipped)
            case TurnStop() | Handoff():
                candidates.extend(
                    lesson_candidates(event.final_report if isinstance(event, TurnStop) else event.summary)
                )
                if self.working_notes:
                    note, skip = working_note_candidate(event)
                    if note is not None:
                        candidates.append(note)
                    if skip is not None:
                        skipped.append(skip)
                files = event.files if isinstance(event, TurnStop) else ()
            case GitChange():
                flags = git_change_flags(event, live, sources or {})
                files = event.files
                if not flags and not files:
                    skipped.append(Skip(excerpt=", ".join(event.changed_paths[:5]), reason="no_evidence_touched"))
            case ExplicitSubmit():
                candidates.extend(
                    Candidate(
                        kind=e.kind,
                        text=e.text,
                        origin="submitted",
                        scope=e.scope,
                        title=e.title,
                        tags=e.tags,
                        important=e.important,
                        mandatory=e.mandatory,
                    )
                    for e in event.entries
                )
            case Bootstrap():
                files = event.files
        candidates.extend(build_file_candidates(files))
        usage = TokenUsage()
        error = None
        if self.extractor is not None and isinstance(event, (UserPrompt, UserCorrection, TurnStop, Handoff)):
            text = (
                event.text
                if isinstance(event, (UserPrompt, UserCorrection))
                else (event.final_report if isinstance(event, TurnStop) else event.summary)
            )
            if clean(text):
                label = "user statement" if isinstance(event, (UserPrompt, UserCorrection)) else "agent turn report"
                extraction = await self.extractor.extract(text, session_id=event.context.session_id, label=label)
                candidates.extend(extraction.candidates)
                usage, error = extraction.usage, extraction.error
        admissions = tuple(admit(c, evidence=evidence) for c in candidates)
        return Proposal(admissions=admissions, flags=flags, skipped=tuple(skipped), usage=usage, extractor_error=error)

    async def extract(
        self, evidence: Sequence[Source], current_entries: Sequence[EntryVersion]
    ) -> tuple[Plan | ReviewFlag, ...]:
        """The ``CandidatePipeline`` port: planned writes (add / revise) and flags from persisted Sources.

        Every event Source written by capture decodes back into its event; ``build-file`` Sources are read as
        files of a Bootstrap. A Source holding a secret yields nothing. No-op plans are left out.
        """
        files = []
        events: list[tuple[TaskEvent, Source]] = []
        for source in evidence:
            if find_secrets(source.content):
                continue
            decoded = event_from_source(source)
            if isinstance(decoded, FileSnapshot):
                files.append((decoded, source))
            elif decoded is not None:
                events.append((decoded, source))
        if files:
            events.append((Bootstrap(files=tuple(f for f, _ in files)), files[0][1]))
        by_id: dict[SourceId, Source] = {}
        if self._source_lookup is not None and any(isinstance(e, GitChange) for e, _ in events):
            wanted = sorted({sid for v in current_entries for sid in v.content.sources})
            by_id = {s.source_id: s for s in await self._source_lookup(wanted)}
        file_evidence = {f"file:{f.path}": s.content for f, s in files}
        out: list[Plan | ReviewFlag] = []
        admitted: list[Candidate] = []
        for event, source in events:
            keyed = {"event": source.content, **file_evidence}
            proposal = await self.propose(event, evidence=keyed, live=current_entries, sources=by_id)
            admitted.extend(proposal.admitted)
            out.extend(proposal.flags)
        out.extend(p for p in plan_candidates(admitted, current_entries) if p.action != "unchanged")
        return tuple(out)

    async def candidates(
        self, evidence: Sequence[Source], current_entries: Sequence[EntryVersion]
    ) -> tuple[EntryInput, ...]:
        """The ``CandidatePipeline`` port: the entries the evidence calls for, each citing the Source it came from.

        Adds come back as new entries, revisions as new versions of the live entry they revise; near-duplicates of
        live entries are left out. The service validates and commits them like any other write.
        """
        out: list[EntryInput] = []
        seen: set[tuple[str | None, str]] = set()
        for source in evidence:
            plans = [p for p in await self.extract([source], current_entries) if isinstance(p, Plan)]
            keys = {"event": source.source_id}
            if source.kind == "build-file" and source.uri:
                keys[source.uri] = source.source_id  # a file snapshot is cited as "file:<path>"
            for _, item in _inputs(plans, current_entries, keys)[0]:
                key = (str(item.entry) if item.entry is not None else None, item.text)
                if key not in seen:
                    seen.add(key)
                    out.append(item)
        return tuple(out)


# ============================================================================================ capture
def _scan(event: TaskEvent, drafts: Sequence[SourceDraft]) -> tuple[str, tuple[SecretFinding, ...]] | None:
    label = _EVENT_LABELS.get(event.source_kind, "the event")
    for text in event_texts(event):
        found = find_secrets(text)
        if found:
            return label, found
    for draft in drafts:
        for text in (draft.content, draft.uri or ""):
            found = find_secrets(text)
            if found:
                where = label if draft.key == "event" else f"the file {draft.key.removeprefix('file:')}"
                return where, found
    return None


def _service_model(service: MemoryService) -> EmbeddingModel | None:
    indexer = service.indexer
    return indexer.model if indexer is not None else None


async def _semantic(
    model: EmbeddingModel | None, candidates: Sequence[Candidate], live: Sequence[EntryVersion]
) -> Semantic | None:
    """Vectors for near-duplicate matching by meaning, when a calibrated model is loaded; None otherwise.

    Trigger: the service (or the pipeline) has an embedding model whose profile has a calibrated threshold.
    Why: the lexical matcher misses paraphrases in other words; the hook path has no model and stays lexical.
    Outcome: the candidates and the live entries that share a subject token with them are embedded once; a
    model that fails costs nothing but the semantic rule (capture never fails on it).
    """
    threshold = SEMANTIC_THRESHOLDS.get(model.profile.profile_id) if model is not None else None
    if model is None or threshold is None or not candidates:
        return None
    texts = semantic_texts(candidates, live)
    try:
        result = await model.embed(tuple(texts))
    except (MemstoneError, ValueError, OSError, RuntimeError, ImportError):
        return None
    if len(result.vectors) != len(texts):
        return None
    return Semantic(vectors=dict(zip(texts, result.vectors, strict=True)), threshold=threshold)


async def _current(service: MemoryService, scope: str | None, memory_id: MemoryId | None) -> Revision | None:
    if memory_id is not None:
        return await service.head(memory_id)
    assert scope is not None
    return await service.resolve(scope)


def _inputs(
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


async def _write(
    service: MemoryService,
    *,
    scope: str | None,
    memory_id: MemoryId | None,
    candidates: Sequence[Candidate],
    evidence_ids: Mapping[str, SourceId],
    author: str | None,
    surface: Surface,
    known: tuple[Revision | None, Sequence[EntryVersion]] | None = None,
    semantic: Semantic | None = None,
) -> tuple[Revision | None, list[CaptureOutcome]]:
    """Plan against the current head and write; a stale head (another writer) re-reads and re-plans.

    ``known`` is a head and its live entries the caller has just read; the first attempt uses them.
    """
    for attempt in range(MAX_WRITE_ATTEMPTS):
        if attempt == 0 and known is not None:
            head, live = known[0], list(known[1])
        else:
            head = await _current(service, scope, memory_id)
            live = await service.entries(head) if head is not None else []
        plans = plan_candidates(candidates, live, semantic)
        inputs, used = _inputs(plans, live, evidence_ids)
        if not inputs:
            return None, [_outcome(p, head) for p in plans]
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
        return rev, await _map_outcomes(service, plans, rev, head)
    raise AssertionError("unreachable")  # pragma: no cover


def _outcome(plan: Plan, head: Revision | None) -> CaptureOutcome:
    return CaptureOutcome(
        action="unchanged",
        candidate=plan.candidate,
        reason=plan.why,
        entry_id=plan.entry_id,
        entry_version_id=plan.entry_version_id,
        memory_id=head.memory_id if head else None,
        score=plan.score,
    )


async def _map_outcomes(
    service: MemoryService, plans: Sequence[Plan], rev: Revision | None, head: Revision | None
) -> list[CaptureOutcome]:
    if rev is None or (head is not None and rev.revision == head.revision):
        return [_outcome(p, head) for p in plans]  # the service found nothing new to write
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
            out.append(_outcome(plan, rev))
    return out


async def capture(
    service: MemoryService,
    event: TaskEvent,
    *,
    scope: str | None = None,
    memory: Revision | ArtifactRef | None = None,
    mode: CaptureMode | None = None,
    settings: CaptureSettings | None = None,
    queue: ReviewQueue | None = None,
    pipeline: CapturePipeline | None = None,
    author: str | None = None,
    surface: Surface = "agent-session",
) -> CaptureResult:
    """Capture one task event into the Memory of ``scope`` (or the given ``memory``); see the module docstring.

    Project-scope candidates go to that Memory; user-scope ones ("in all my projects …") to
    ``settings.user_scope``. ``mode=None`` uses ``settings.mode_for(scope)``. ``review`` needs a ``queue``; in
    ``auto`` a queue (when given) receives Git-change flags.

    >>> result = await capture(svc, UserPrompt(text="Never edit site/; it is generated."),  # doctest: +SKIP
    ...                        scope="memstone://orgs/acme/projects/docs")
    >>> result.status, result.entries()  # doctest: +SKIP
    ('stored', ('ent_01J…',))
    """
    if (scope is None) == (memory is None):
        raise InvalidInput("capture needs exactly one of scope= or memory=")
    settings = settings or CaptureSettings()
    used_mode: CaptureMode = mode or settings.mode_for(scope)
    if used_mode not in ("auto", "review", "off"):
        raise InvalidInput(f"unknown capture mode {used_mode!r}", hint="use auto, review or off")
    if used_mode == "off":
        return CaptureResult(status="off", mode="off", reason="capture is off for this scope")
    user_mode: CaptureMode = settings.mode_for(settings.user_scope) if mode is None else used_mode
    if "review" in (used_mode, user_mode) and queue is None:
        raise InvalidInput("review mode needs a review queue", hint="pass queue=ReviewQueue(path)")

    original = event
    event = fit_event(event)
    drafts = event_sources(event)
    secret = _scan(original, drafts) or _scan(event, drafts)
    if secret is not None:
        where, found = secret
        # Trigger: a secret in any field of the event or of a Source we would write.
        # Why: a secret must never be stored, not even as evidence (issue 5); partial redaction would keep the rest.
        # Outcome: refuse the whole event; nothing is written anywhere; the reason names kinds and spans only.
        reason = (
            f"refused: {describe_findings(found, where=where)}. Nothing was stored, not even the event. "
            "Remove the secret (name the environment variable or vault path that holds it instead) and send it again."
        )
        return CaptureResult(status="refused", mode=used_mode, reason=reason, findings=found)

    memory_id = memory.memory_id if memory is not None else None
    pipeline = pipeline or CapturePipeline(working_notes=settings.working_notes)
    head = await _current(service, scope, memory_id)
    live = await service.entries(head) if head is not None else []
    by_id: dict[SourceId, Source] = {}
    if isinstance(event, GitChange) and live:
        wanted = sorted({sid for v in live for sid in v.content.sources})
        by_id = {s.source_id: s for s in await service.sources(wanted)} if wanted else {}
    evidence = {d.key: d.content for d in drafts}
    proposal = await pipeline.propose(event, evidence=evidence, live=live, sources=by_id)

    outcomes: list[CaptureOutcome] = [
        CaptureOutcome(action="rejected", candidate=a.candidate, reason=a.reason)
        for a in proposal.admissions
        if not a.admitted
    ]
    groups: list[tuple[str | None, MemoryId | None, CaptureMode, list[Candidate]]] = [
        (scope, memory_id, used_mode, [c for c in proposal.admitted if c.scope == "project"]),
        (settings.user_scope, None, user_mode, [c for c in proposal.admitted if c.scope == "user"]),
    ]
    for _, _, group_mode, cands in groups[1:]:
        if group_mode == "off":
            outcomes.extend(CaptureOutcome(action="off", candidate=c, reason="capture is off for the user scope")
                            for c in cands)  # fmt: skip
            cands.clear()

    # Which Sources to record: all of them ("always"), or only those that back something ("when_used").
    planned: list[
        tuple[
            str | None,
            MemoryId | None,
            CaptureMode,
            list[Plan],
            tuple[Revision | None, list[EntryVersion]],
            Semantic | None,
        ]
    ] = []
    needed: set[str] = {"event"} if proposal.flags else set()
    for index, (group_scope, group_memory, group_mode, cands) in enumerate(groups):
        if not cands:
            continue
        group_head, group_live = head, live
        if index > 0:  # the user scope: its own Memory
            group_head = await _current(service, group_scope, group_memory)
            group_live = await service.entries(group_head) if group_head is not None else []
        semantic = await _semantic(pipeline.embedding or _service_model(service), cands, group_live)
        plans = plan_candidates(cands, group_live, semantic)
        planned.append((group_scope, group_memory, group_mode, plans, (group_head, group_live), semantic))
        needed.update(k for p in plans if p.action != "unchanged" for k in p.candidate.evidence)
    record_all = settings.record_sources == "always"
    recorded: dict[str, Source] = {}
    for draft in drafts:
        if record_all or draft.key in needed:
            recorded[draft.key] = await service.record_source(draft.kind, draft.content, uri=draft.uri)
    evidence_ids = {k: s.source_id for k, s in recorded.items()}

    revisions: list[Revision] = []
    for group_scope, group_memory, group_mode, plans, known, semantic in planned:
        cands = [p.candidate for p in plans]
        if group_mode == "review":
            assert queue is not None
            outcomes.extend(_enqueue(queue, plans, group_scope, group_memory, evidence_ids))
            continue
        rev, written = await _write(
            service,
            scope=group_scope if group_memory is None else None,
            memory_id=group_memory,
            candidates=cands,
            evidence_ids=evidence_ids,
            author=author,
            surface=surface,
            known=known,
            semantic=semantic,
        )
        outcomes.extend(written)
        if rev is not None and any(o.action in ("added", "revised") for o in written):
            revisions.append(rev)

    for flag in proposal.flags:
        item_id = None
        if queue is not None:
            item = QueueItem(
                item_id=new_ulid("cap_"),
                item_type="flag",
                scope=scope,
                memory_id=head.memory_id if head else memory_id,
                created_at=utc_now(),
                flag=flag,
                target_entry=flag.entry_id,
                evidence=(("event", evidence_ids["event"]),) if "event" in evidence_ids else (),
            )
            item_id = item.item_id if queue.add([item]) else None
        outcomes.append(CaptureOutcome(action="flagged", flag=flag, entry_id=flag.entry_id, queue_item=item_id,
                                       reason=flag.reason))  # fmt: skip

    return CaptureResult(
        status=_status(outcomes),
        mode=used_mode,
        sources=tuple(recorded.values()),
        outcomes=tuple(outcomes),
        skipped=proposal.skipped,
        revisions=tuple(revisions),
        usage=proposal.usage,
        extractor_error=proposal.extractor_error,
    )


def _enqueue(
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
            out.append(_outcome(plan, None))
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
    added = {i.item_id for i in queue.add([i for _, i in items])}
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


def _status(outcomes: Sequence[CaptureOutcome]) -> CaptureStatus:
    actions = {o.action for o in outcomes}
    if actions & {"added", "revised"}:
        return "stored"
    if "queued" in actions or any(o.action == "flagged" and o.queue_item for o in outcomes):
        return "queued"
    if "unchanged" in actions:
        return "unchanged"
    return "nothing"


# ============================================================================================ review decisions
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
    item = queue.get(item_id)
    if item.status != "pending":
        raise InvalidInput(f"capture item {item_id} is already {item.status}")
    if item.candidate is None:
        queue.decide(item_id, "accepted", decided_at=utc_now(), decided_by=decided_by, note="flag acknowledged")
        return CaptureResult(status="nothing", mode="review", reason="flag acknowledged; nothing was written")
    if item.memory_id is None and item.scope is None:
        raise InvalidInput(f"capture item {item_id} names neither a scope nor a memory")
    rev, outcomes = await _write(
        service,
        scope=item.scope if item.memory_id is None else None,
        memory_id=item.memory_id,
        candidates=[item.candidate],
        evidence_ids=dict(item.evidence),
        author=decided_by,
        surface=surface,
    )
    entry = next((o.entry_id for o in outcomes if o.entry_id is not None), None)
    queue.decide(item_id, "accepted", decided_at=utc_now(), decided_by=decided_by, result_entry=entry)
    written = rev is not None and any(o.action in ("added", "revised") for o in outcomes)
    return CaptureResult(
        status=_status(outcomes),
        mode="review",
        outcomes=tuple(outcomes),
        revisions=(rev,) if written and rev is not None else (),
    )


def reject(queue: ReviewQueue, item_id: str, *, decided_by: str | None = None, note: str | None = None) -> QueueItem:
    """Reject a queued item: nothing is written, and the same statement is not queued again for that scope."""
    return queue.decide(item_id, "rejected", decided_at=utc_now(), decided_by=decided_by, note=note)
