"""Structured tool outputs of the MCP server (pydantic: the SDK turns them into ``outputSchema``).

Pydantic appears only here and in the server module (house rule). Every model is built from domain values by a
``of(...)`` constructor, so the tools stay thin. Most constructors are table-driven (``Out.project``): a field
takes the domain value's attribute of its own name or the dotted path the class's ``paths`` table gives, and
``of`` passes only the values it computes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Literal, Self

from pydantic import BaseModel, Field

from ...capture.queue import ItemType, QueueItem, QueueStatus
from ...domain.history import EntryDiff
from ...domain.maintenance import JudgeName, MaintenanceRun, Proposal, ProposalKind
from ...domain.model import STALE_TAG, Change, EntryState, MemoryHit, Revision, RevisionChanges, VersionStatus
from ...domain.purge import Tombstone
from ...domain.records import CrossLink, Record
from ...service import HistoryItem

SNIPPET = 400


def _snippet(text: str) -> tuple[str, bool]:
    if len(text) <= SNIPPET:
        return text, False
    return text[:SNIPPET].rstrip() + " …", True


def _attr(src: object, path: str) -> Any:
    value: Any = src
    for part in path.split("."):
        value = getattr(value, part)
    return value


class Out(BaseModel):
    """An output read field by field from one domain value (see the module docstring)."""

    paths: ClassVar[Mapping[str, str]] = {}

    @classmethod
    def project(cls, src: object, /, **computed: object) -> Self:
        read = {name: _attr(src, cls.paths.get(name, name)) for name in cls.model_fields if name not in computed}
        return cls(**read, **computed)


class EntryFields(Out):
    """The fields every entry-shaped output starts with (after its ids)."""

    kind: str
    title: str | None
    tags: list[str]
    important: bool
    mandatory: bool
    stale: bool = Field(
        default=False, description="Flagged stale by maintenance: its evidence changed; re-check before relying on it."
    )

    @classmethod
    def project(cls, src: object, /, **computed: object) -> Self:
        if "stale" not in computed:
            computed["stale"] = STALE_TAG in _attr(src, cls.paths.get("tags", "tags"))
        return super().project(src, **computed)


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
    state: EntryState
    scope: str | None
    memory_id: str
    revision: int = Field(description="Revision of the Memory this was read at.")
    relations: list[RelationOut]
    created_at: str
    updated_at: str
    updated_by: str | None

    paths = {
        "id": "entry_id",
        "version": "revision",
        "version_id": "entry_version_id",
        "memory_id": "memory_ref.memory_id",
        "revision": "memory_ref.revision",
    }

    @classmethod
    def of(cls, r: Record) -> MemoryOut:
        relations = [RelationOut(kind=x.kind, target=x.target) for x in r.version.content.relations]
        return cls.project(r, relations=relations)


class MemoryBrief(EntryFields):
    """A catalogue row: enough to choose; memory_source gives the full text."""

    id: str
    version: int
    snippet: str
    truncated: bool
    state: EntryState
    scope: str | None
    updated_at: str
    shadowed_by: str | None = Field(default=None, description="A more specific scope's memory that overrides this.")

    paths = {"id": "entry_id", "version": "revision"}

    @classmethod
    def of(cls, r: Record) -> MemoryBrief:
        snippet, cut = _snippet(r.text)
        return cls.project(r, snippet=snippet, truncated=cut)


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

    paths = {
        "id": "entry_id",
        "version_id": "entry_version_id",
        "memory_id": "memory_ref.memory_id",
        "revision": "memory_ref.revision",
        "current_version_id": "current_entry_version_id",
    }

    @classmethod
    def of(cls, h: MemoryHit) -> HitOut:
        snippet, cut = _snippet(h.text)
        return cls.project(h, snippet=snippet, truncated=cut, score=round(h.score, 6))


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
    status: VersionStatus
    text: str
    author: str | None
    surface: str
    created_at: str
    revision: int = Field(description="The Memory revision that wrote this version.")
    reason: str | None = Field(default=None, description="Why that revision wrote it (e.g. update, flag, revert).")
    changes: list[FieldChangeOut] = Field(default_factory=list, description="What changed from the previous version.")
    text_diff: list[str] = Field(default_factory=list)
    purge: Tombstone | None = Field(
        default=None, description="When, by whom and why this version's content was purged (null: not purged)."
    )

    paths = {
        "version": "version.version",
        "version_id": "version.entry_version_id",
        **{name: f"version.content.{name}" for name in ("kind", "title", "tags", "important", "mandatory", "text")},
        **{name: f"version.provenance.{name}" for name in ("author", "surface", "created_at")},
        "revision": "version.created_in_revision",
    }

    @classmethod
    def of(cls, item: HistoryItem, diff: EntryDiff | None) -> VersionOut:
        changes = [FieldChangeOut(field=x.field, old=x.old, new=x.new) for x in diff.changes] if diff else []
        return cls.project(item, changes=changes, text_diff=list(diff.text_diff) if diff else [])


class HistoryOut(BaseModel):
    id: str
    versions: list[VersionOut]


class ChangeOut(Out):
    op: str
    id: str
    from_version_id: str | None
    to_version_id: str | None
    reason: str | None

    paths = {
        "id": "entry_id",
        "from_version_id": "from_entry_version_id",
        "to_version_id": "to_entry_version_id",
    }


class RevisionChangesOut(BaseModel):
    revision: int
    changes: list[ChangeOut]

    @classmethod
    def of(cls, rc: RevisionChanges) -> RevisionChangesOut:
        return cls(revision=rc.memory_ref.revision, changes=[ChangeOut.project(c) for c in rc.changes])


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


class ReviewItemOut(Out):
    """One item of the capture review queue: a queued candidate (its proposed text and kind) or a review flag."""

    id: str
    type: ItemType
    status: QueueStatus
    scope: str | None
    kind: str | None
    text: str | None
    queued_at: str
    result_entry: str | None = None
    note: str | None = None

    paths = {"id": "item_id", "type": "item_type", "queued_at": "created_at"}

    @classmethod
    def of(cls, item: QueueItem) -> ReviewItemOut:
        c = item.candidate
        text = c.text if c else (item.flag.reason if item.flag else None)
        return cls.project(item, kind=c.kind if c else None, text=text)


class ReviewListOut(BaseModel):
    items: list[ReviewItemOut]
    count: int


class ReviewDecisionOut(BaseModel):
    """The decided item, and the entries accepting it wrote (none for a reject or a no-op)."""

    item: ReviewItemOut
    entries: list[str] = Field(default_factory=list)
    note: str | None = None


class ProposalOut(Out):
    """One maintenance proposal: what to do with which entries (a merge's survivor first), on which hashes, why."""

    id: str
    run: str
    kind: ProposalKind
    action: str
    entries: list[str]
    evidence: str
    status: str
    text: str | None = None
    slug: str | None = None
    result: str | None = None
    judge: JudgeName = Field(
        default="rules", description="model: the optional model judge's candidate; accept or reject it."
    )

    paths = {"id": "proposal_id", "run": "run_id"}

    @classmethod
    def of(cls, p: Proposal) -> ProposalOut:
        return cls.project(p)


class MaintainOut(Out):
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

    paths = {"run": "run_id", "model_calls": "usage.model_calls", "failed_model_calls": "usage.failed_calls"}

    @classmethod
    def of(cls, run: MaintenanceRun, proposals: tuple[Proposal, ...]) -> MaintainOut:
        return cls.project(run, totals=dict(run.totals), proposals=[ProposalOut.of(p) for p in proposals])


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
