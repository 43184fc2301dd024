"""Structured tool outputs of the MCP server (pydantic: the SDK turns them into ``outputSchema``).

Pydantic appears only here and in the server module (house rule). Every model is built from domain values by a
``of(...)`` constructor, so the tools stay thin.
"""

from __future__ import annotations

from typing import Any, Literal, Protocol

from pydantic import BaseModel, Field

from ...capture.queue import QueueItem
from ...domain.history import EntryDiff
from ...domain.maintenance import MaintenanceRun, Proposal
from ...domain.model import STALE_TAG, Change, MemoryHit, Revision, RevisionChanges
from ...domain.records import CrossLink, Record
from ...service import HistoryItem

SNIPPET = 400


def _snippet(text: str) -> tuple[str, bool]:
    if len(text) <= SNIPPET:
        return text, False
    return text[:SNIPPET].rstrip() + " …", True


class Described(Protocol):
    """What a record, a hit and an entry's content all say about an entry."""

    @property
    def kind(self) -> str: ...
    @property
    def title(self) -> str | None: ...
    @property
    def tags(self) -> tuple[str, ...]: ...
    @property
    def important(self) -> bool: ...
    @property
    def mandatory(self) -> bool: ...


class EntryFields(BaseModel):
    """The fields every entry-shaped output starts with (after its ids)."""

    kind: str
    title: str | None
    tags: list[str]
    important: bool
    mandatory: bool
    stale: bool = Field(
        default=False, description="Flagged stale by maintenance: its evidence changed; re-check before relying on it."
    )

    @staticmethod
    def fields_of(x: Described) -> dict[str, Any]:
        return {
            "kind": x.kind,
            "title": x.title,
            "tags": list(x.tags),
            "important": x.important,
            "mandatory": x.mandatory,
            "stale": STALE_TAG in x.tags,
        }


class RelationOut(BaseModel):
    kind: str
    target: str


class MemoryOut(EntryFields):
    """One memory in full: its current version, flags, scope and timestamps."""

    id: str = Field(description="Entry id (ent_…): pass it to memory_source, memory_update, memory_forget.")
    version: int = Field(description="Version number of this memory (1 = first write); memory_update can check it.")
    version_id: str
    text: str
    slug: str | None
    state: Literal["active", "inactive"]
    scope: str | None
    memory_id: str
    revision: int = Field(description="Revision of the Memory this was read at.")
    relations: list[RelationOut]
    created_at: str
    updated_at: str
    updated_by: str | None

    @classmethod
    def of(cls, r: Record) -> MemoryOut:
        c = r.version.content
        return cls(
            id=r.entry_id,
            version=r.revision,
            version_id=r.entry_version_id,
            **cls.fields_of(c),
            text=c.text,
            slug=c.slug,
            state=r.state,
            scope=r.scope,
            memory_id=r.memory_ref.memory_id,
            revision=r.memory_ref.revision,
            relations=[RelationOut(kind=x.kind, target=x.target) for x in c.relations],
            created_at=r.created_at,
            updated_at=r.updated_at,
            updated_by=r.updated_by,
        )


class MemoryBrief(EntryFields):
    """A catalogue row: enough to choose; memory_source gives the full text."""

    id: str
    version: int
    snippet: str
    truncated: bool
    state: Literal["active", "inactive"]
    scope: str | None
    updated_at: str
    shadowed_by: str | None = Field(default=None, description="A more specific scope's memory that overrides this.")

    @classmethod
    def of(cls, r: Record) -> MemoryBrief:
        snippet, cut = _snippet(r.text)
        return cls(
            id=r.entry_id,
            version=r.revision,
            **cls.fields_of(r),
            snippet=snippet,
            truncated=cut,
            state=r.state,
            scope=r.scope,
            updated_at=r.updated_at,
            shadowed_by=r.shadowed_by,
        )


class HitOut(EntryFields):
    """One search hit, anchored to the exact version that matched."""

    id: str
    version_id: str
    snippet: str
    truncated: bool
    score: float
    matched_by: list[str]
    scope: str | None
    memory_id: str
    revision: int
    superseded: bool = Field(description="Only an older version matched; current_version_id is the live one.")
    current_version_id: str | None

    @classmethod
    def of(cls, h: MemoryHit) -> HitOut:
        snippet, cut = _snippet(h.text)
        return cls(
            id=h.entry_id,
            version_id=h.entry_version_id,
            **cls.fields_of(h),
            snippet=snippet,
            truncated=cut,
            score=round(h.score, 6),
            matched_by=list(h.matched_by),
            scope=h.scope,
            memory_id=h.memory_ref.memory_id,
            revision=h.memory_ref.revision,
            superseded=h.superseded,
            current_version_id=h.current_entry_version_id,
        )


class MandatoryOut(BaseModel):
    memories: list[MemoryOut]
    count: int
    scopes: list[str]


class SearchOut(BaseModel):
    hits: list[HitOut]
    mode: str = Field(description="The search mode actually used (auto falls back to fts and says why).")
    fallback_reason: str | None
    order: str
    shadowed: int = Field(description="Hits hidden because a more specific scope overrides them.")


class SourceOut(BaseModel):
    id: str
    version_id: str
    version: int
    markdown: str = Field(description="The memory as Markdown with YAML frontmatter.")


class ListOut(BaseModel):
    memories: list[MemoryBrief]
    count: int
    scopes: list[str]


class RevisionRef(BaseModel):
    memory_id: str
    revision: int
    scope: str | None = None

    @classmethod
    def of(cls, rev: Revision, scope: str | None = None) -> RevisionRef:
        return cls(memory_id=rev.memory_id, revision=rev.revision, scope=scope)


class EntryRef(BaseModel):
    id: str
    version_id: str | None
    op: str


class WriteOut(BaseModel):
    """What a write did. ``unchanged`` means nothing was written (the store already held exactly this)."""

    status: Literal["created", "updated", "unchanged", "forgotten", "reactivated", "related"]
    entries: list[EntryRef]
    revisions: list[RevisionRef]
    similar: list[HitOut] = Field(default_factory=list)
    note: str | None = None

    @staticmethod
    def entries_of(changes: tuple[Change, ...]) -> list[EntryRef]:
        return [
            EntryRef(id=c.entry_id, version_id=c.to_entry_version_id or c.from_entry_version_id, op=c.op)
            for c in changes
        ]


class FieldChangeOut(BaseModel):
    field: str
    old: object
    new: object


class VersionOut(EntryFields):
    version: int
    version_id: str
    status: Literal["current", "superseded", "deleted"]
    text: str
    author: str | None
    surface: str
    created_at: str
    revision: int = Field(description="The Memory revision that wrote this version.")
    reason: str | None = Field(default=None, description="Why that revision wrote it (e.g. update, flag, revert).")
    changes: list[FieldChangeOut] = Field(default_factory=list, description="What changed from the previous version.")
    text_diff: list[str] = Field(default_factory=list)

    @classmethod
    def of(cls, item: HistoryItem, diff: EntryDiff | None) -> VersionOut:
        v = item.version
        c = v.content
        return cls(
            version=v.version,
            version_id=v.entry_version_id,
            status=item.status,
            **cls.fields_of(c),
            text=c.text,
            author=v.provenance.author,
            surface=v.provenance.surface,
            created_at=v.provenance.created_at,
            revision=v.created_in_revision,
            reason=item.reason,
            changes=[FieldChangeOut(field=x.field, old=x.old, new=x.new) for x in diff.changes] if diff else [],
            text_diff=list(diff.text_diff) if diff else [],
        )


class HistoryOut(BaseModel):
    id: str
    versions: list[VersionOut]


class ChangeOut(BaseModel):
    op: str
    id: str
    from_version_id: str | None
    to_version_id: str | None
    reason: str | None


class RevisionChangesOut(BaseModel):
    revision: int
    changes: list[ChangeOut]

    @classmethod
    def of(cls, rc: RevisionChanges) -> RevisionChangesOut:
        return cls(
            revision=rc.memory_ref.revision,
            changes=[
                ChangeOut(
                    op=c.op,
                    id=c.entry_id,
                    from_version_id=c.from_entry_version_id,
                    to_version_id=c.to_entry_version_id,
                    reason=c.reason,
                )
                for c in rc.changes
            ],
        )


class ChangesOut(BaseModel):
    memory_id: str | None
    scope: str
    head_revision: int
    revisions: list[RevisionChangesOut]


class OmittedOut(BaseModel):
    id: str
    section: str
    reason: str
    cost: int


class LinkOut(BaseModel):
    """A relation touching a recalled memory (``outgoing``: it points elsewhere; ``incoming``: it is cited)."""

    direction: Literal["outgoing", "incoming"]
    kind: str
    source: str
    target: str
    other_title: str | None
    other_state: str

    @classmethod
    def of(cls, x: CrossLink) -> LinkOut:
        return cls.model_validate(x, from_attributes=True)


class RecallOut(BaseModel):
    """The initial recall protocol in one call."""

    briefing: str = Field(description="The same text the session-start hook injects, ready to read.")
    mandatory: list[MemoryOut]
    contextual: list[HitOut]
    links: list[LinkOut] = Field(default_factory=list)
    omitted: list[OmittedOut]
    budget_tokens: int | None
    used_tokens: int
    mode: str
    note: str


class ReviewItemOut(BaseModel):
    """One item of the capture review queue: a queued candidate (its proposed text and kind) or a review flag."""

    id: str
    type: Literal["candidate", "flag"]
    status: Literal["pending", "accepted", "rejected"]
    scope: str | None
    kind: str | None
    text: str | None
    queued_at: str
    result_entry: str | None = None
    note: str | None = None

    @classmethod
    def of(cls, item: QueueItem) -> ReviewItemOut:
        c = item.candidate
        return cls(
            id=item.item_id,
            type=item.item_type,
            status=item.status,
            scope=item.scope,
            kind=c.kind if c else None,
            text=c.text if c else (item.flag.reason if item.flag else None),
            queued_at=item.created_at,
            result_entry=item.result_entry,
            note=item.note,
        )


class ReviewListOut(BaseModel):
    items: list[ReviewItemOut]
    count: int


class ReviewDecisionOut(BaseModel):
    """The decided item, and the entries accepting it wrote (none for a reject or a no-op)."""

    item: ReviewItemOut
    entries: list[str] = Field(default_factory=list)
    note: str | None = None


class ProposalOut(BaseModel):
    """One maintenance proposal: what to do with which entries (a merge's survivor first), on which hashes, why."""

    id: str
    run: str
    kind: Literal["duplicate", "prune", "slug", "stale", "empty", "mandatory"]
    action: str
    entries: list[str]
    evidence: str
    status: str
    text: str | None = None
    slug: str | None = None
    result: str | None = None
    judge: Literal["rules", "model"] = Field(
        default="rules", description="model: the optional model judge's candidate; accept or reject it."
    )

    @classmethod
    def of(cls, p: Proposal) -> ProposalOut:
        return cls(id=p.proposal_id, run=p.run_id, kind=p.kind, action=p.action, entries=list(p.entries),
                   evidence=p.evidence, status=p.status, text=p.text, slug=p.slug, result=p.result,
                   judge=p.judge)  # fmt: skip


class MaintainOut(BaseModel):
    """A finished maintenance run: status, what it listed and spent, totals derived from its proposals."""

    run: str
    scope: str
    mode: str
    status: str
    listed: int
    model_calls: int
    failed_model_calls: int = 0
    totals: dict[str, int]
    proposals: list[ProposalOut]
    error: str | None = None

    @classmethod
    def of(cls, run: MaintenanceRun, proposals: tuple[Proposal, ...]) -> MaintainOut:
        return cls(run=run.run_id, scope=run.scope, mode=run.mode, status=run.status, listed=run.listed,
                   model_calls=run.usage.model_calls, failed_model_calls=run.usage.failed_calls,
                   totals=dict(run.totals),
                   proposals=[ProposalOut.of(p) for p in proposals], error=run.error)  # fmt: skip


class ProposalsOut(BaseModel):
    proposals: list[ProposalOut]
    count: int


__all__ = [
    "ChangesOut",
    "EntryRef",
    "HistoryOut",
    "HitOut",
    "LinkOut",
    "ListOut",
    "MaintainOut",
    "MandatoryOut",
    "MemoryBrief",
    "MemoryOut",
    "ProposalOut",
    "ProposalsOut",
    "RecallOut",
    "ReviewDecisionOut",
    "ReviewItemOut",
    "ReviewListOut",
    "RevisionChangesOut",
    "RevisionRef",
    "SearchOut",
    "SourceOut",
    "VersionOut",
    "WriteOut",
]
