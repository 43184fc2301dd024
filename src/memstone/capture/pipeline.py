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

from ..domain.errors import InvalidInput, MemstoneError
from ..domain.ids import MemoryId, SourceId, new_ulid
from ..domain.model import ArtifactRef, EntryInput, EntryVersion, Revision, Source, Surface
from ..domain.secrets import SecretFinding, describe_findings, find_secrets
from ..ports import EmbeddingModel
from ..service import MemoryService, utc_now
from ._text import clean
from .adapters import build_file_candidates, git_change_flags, statement_candidates, working_note_candidate
from .admission import (
    SEMANTIC_THRESHOLDS,
    Admission,
    Semantic,
    admit,
    plan_candidates,
    semantic_key,
    semantic_texts,
)
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
from .junk_model import JunkClassifier, screen
from .junk_text import TextJunkClassifier
from .nearness import (
    ANCHOR_COSINE,
    COMBINED_CORRECTION_MIN,
    COMBINED_MIN,
    NEAREST_CHANGE_COSINE,
    NEAREST_COSINE,
    SUBJECT_COSINE,
    XLANG_COSINE,
)
from .outcomes import CaptureOutcome, CaptureResult, Proposal
from .queue import QueueItem, ReviewQueue
from .resets import rescued
from .settings import CaptureMode, CaptureSettings
from .statements import lesson_candidates
from .vector_cache import VectorCache
from .writing import Batch, current_head, enqueue, entry_inputs, status_of, write_candidates

__all__ = [
    "CaptureOutcome",
    "CapturePipeline",
    "CaptureResult",
    "Proposal",
    "capture",
]

_EVENT_LABELS = {
    "user-prompt": "the user prompt",
    "user-correction": "the user correction",
    "agent-turn": "the turn report",
    "handoff": "the handoff",
    "git-change": "the git change",
    "explicit-submit": "the submitted entries",
    "bootstrap": "the bootstrap files",
}


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
        vector_cache: VectorCache | None = None,
        junk_screen: bool = True,
        junk_classifier: JunkClassifier | None = None,
        text_classifier: TextJunkClassifier | None = None,
        text_screen: bool = True,
    ) -> None:
        self.working_notes = working_notes
        self.extractor = extractor
        self.embedding = embedding
        self.vector_cache = vector_cache  # vectors of live entries kept between events (see vector_cache.py)
        self._source_lookup = source_lookup
        # The learned junk screen (junk_model.py): on when a model is loaded; weights shipped for its profile
        # unless ``junk_classifier`` is given (another profile's weights are refused); junk_screen=False: rules only.
        self.junk_screen = junk_screen
        self.junk_classifier = junk_classifier
        # The model-free learned screen (junk_text.py): on by default with the weights shipped in the package.
        self.text_classifier = text_classifier
        self.text_screen = text_screen

    async def propose(
        self,
        event: TaskEvent,
        *,
        evidence: Mapping[str, str],
        live: Sequence[EntryVersion] = (),
        sources: Mapping[SourceId, Source] | None = None,
        model: EmbeddingModel | None = None,
    ) -> Proposal:
        """Candidates, admission decisions, flags and skips for one (already secret-scanned) event.

        The learned junk screens are the last step of admission: the model-free one always (unless
        ``text_screen=False``), and with ``model`` (else the pipeline's own) the one over its embeddings."""
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
                candidates.extend(lesson_candidates(event.report))
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
            text = event.text if isinstance(event, (UserPrompt, UserCorrection)) else event.report
            if clean(text):
                label = "user statement" if isinstance(event, (UserPrompt, UserCorrection)) else "agent turn report"
                extraction = await self.extractor.extract(text, session_id=event.context.session_id, label=label)
                candidates.extend(extraction.candidates)
                usage, error = extraction.usage, extraction.error
        admissions = tuple(admit(c, evidence=evidence) for c in candidates)
        vectors: dict[str, tuple[float, ...]] = {}
        if self.junk_screen:
            admissions = await screen(
                admissions,
                model or self.embedding,
                self.junk_classifier,
                text_classifier=self.text_classifier,
                text_screen=self.text_screen,
                vectors=vectors,
            )
        if isinstance(event, (UserPrompt, UserCorrection)):  # a correction the screens dropped (resets.py)
            dropped = [(a.candidate, a.reason or "") for a in admissions if not a.admitted]
            again = rescued(event.text, skipped, dropped, live)
            admissions += tuple(Admission(candidate=c, admitted=True, detail="resets a live entry") for c in again)
        return Proposal(
            admissions=admissions,
            flags=flags,
            skipped=tuple(skipped),
            usage=usage,
            extractor_error=error,
            vectors=vectors,
        )

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
            for _, item in entry_inputs(plans, current_entries, keys)[0]:
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
    model: EmbeddingModel | None,
    candidates: Sequence[Candidate],
    live: Sequence[EntryVersion],
    cache: VectorCache | None = None,
    memory_key: str = "",
    known: Mapping[str, tuple[float, ...]] | None = None,
) -> Semantic | None:
    """Vectors for near-duplicate matching by meaning, when a calibrated model is loaded; None otherwise.

    Trigger: the service (or the pipeline) has an embedding model whose profile has a calibrated threshold.
    Why: the lexical matcher misses paraphrases in other words; the hook path has no model and stays lexical.
    Outcome: the candidates and the live entries that share a subject token with them are embedded, except the
    texts whose vectors ``cache`` holds (the Memory's entries embedded by an earlier event); a model that fails
    costs nothing but the semantic rule (capture never fails on it).
    """
    threshold = SEMANTIC_THRESHOLDS.get(model.profile.profile_id) if model is not None else None
    if model is None or threshold is None or not candidates:
        return None
    profile = model.profile.profile_id
    texts = semantic_texts(candidates, live, other_languages=profile in XLANG_COSINE, every=profile in NEAREST_COSINE)
    vectors = cache.lookup(profile, memory_key, texts) if cache is not None else {}
    vectors.update((t, known[t]) for t in texts if known and t in known and t not in vectors)  # the junk screen's
    missing = tuple(t for t in texts if t not in vectors)
    if missing:
        try:
            result = await model.embed(missing)
        except (MemstoneError, ValueError, OSError, RuntimeError, ImportError):
            return None
        if len(result.vectors) != len(missing):
            return None
        vectors.update(zip(missing, result.vectors, strict=True))
    if cache is not None:
        cache.keep(profile, memory_key, vectors, live=[semantic_key(v.text) for v in live])
    return Semantic(
        vectors={t: vectors[t] for t in texts},
        threshold=threshold,
        combined=COMBINED_MIN.get(profile),
        combined_correction=COMBINED_CORRECTION_MIN.get(profile),
        subject=SUBJECT_COSINE.get(profile),
        anchor=ANCHOR_COSINE.get(profile),
        crosslang=XLANG_COSINE.get(profile),
        nearest=NEAREST_COSINE.get(profile),
        nearest_change=NEAREST_CHANGE_COSINE.get(profile),
    )


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
    ``settings.user_scope``. ``mode=None`` uses ``settings.mode_for(scope)``. ``review`` queues into ``queue``
    (default: the service store's own, ``ReviewQueue.of(service)``); in ``auto`` a queue (when given) receives
    Git-change flags.

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
        queue = ReviewQueue.of(service)  # the queue kept in the service's own store

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
    head = await current_head(service, scope, memory_id)
    live = await service.entries(head) if head is not None else []
    by_id: dict[SourceId, Source] = {}
    if isinstance(event, GitChange) and live:
        wanted = sorted({sid for v in live for sid in v.content.sources})
        by_id = {s.source_id: s for s in await service.sources(wanted)} if wanted else {}
    evidence = {d.key: d.content for d in drafts}
    model = pipeline.embedding or _service_model(service)
    proposal = await pipeline.propose(event, evidence=evidence, live=live, sources=by_id, model=model)

    outcomes: list[CaptureOutcome] = [
        CaptureOutcome(action="rejected", candidate=a.candidate, reason=a.reason, detail=a.detail)
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
    planned: list[tuple[CaptureMode, list[Plan], Batch]] = []
    needed: set[str] = {"event"} if proposal.flags else set()
    for index, (group_scope, group_memory, group_mode, cands) in enumerate(groups):
        if not cands:
            continue
        group_head, group_live = head, live
        if index > 0:  # the user scope: its own Memory
            group_head = await current_head(service, group_scope, group_memory)
            group_live = await service.entries(group_head) if group_head is not None else []
        cache = pipeline.vector_cache if group_head is not None else None  # a new Memory has nothing to keep
        memory_key = group_head.memory_id if group_head is not None else ""
        semantic = await _semantic(model, cands, group_live, cache, memory_key, proposal.vectors)
        plans = plan_candidates(cands, group_live, semantic)
        batch = Batch(
            scope=group_scope,
            memory_id=group_memory,
            candidates=[p.candidate for p in plans],
            known=(group_head, group_live),
            semantic=semantic,
        )
        planned.append((group_mode, plans, batch))
        needed.update(k for p in plans if p.action != "unchanged" for k in p.candidate.evidence)
    record_all = settings.record_sources == "always"
    recorded: dict[str, Source] = {}
    for draft in drafts:
        if record_all or draft.key in needed:
            recorded[draft.key] = await service.record_source(draft.kind, draft.content, uri=draft.uri)
    evidence_ids = {k: s.source_id for k, s in recorded.items()}

    revisions: list[Revision] = []
    for group_mode, plans, batch in planned:
        if group_mode == "review":
            assert queue is not None
            outcomes.extend(await enqueue(queue, plans, batch.scope, batch.memory_id, evidence_ids))
            continue
        rev, written = await write_candidates(service, batch, evidence_ids, author=author, surface=surface)
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
            item_id = item.item_id if await queue.add([item]) else None
        outcomes.append(CaptureOutcome(action="flagged", flag=flag, entry_id=flag.entry_id, queue_item=item_id,
                                       reason=flag.reason))  # fmt: skip

    return CaptureResult(
        status=status_of(outcomes),
        mode=used_mode,
        sources=tuple(recorded.values()),
        outcomes=tuple(outcomes),
        skipped=proposal.skipped,
        revisions=tuple(revisions),
        usage=proposal.usage,
        extractor_error=proposal.extractor_error,
    )
