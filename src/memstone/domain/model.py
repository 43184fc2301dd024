"""Domain values: Memories, Revisions, manifests, entries and their immutable versions.

A Memory (``mem_…``) is a set of entries that evolve together. Its history is a chain of immutable Revisions
1..n; each Revision commits (by hash) to a manifest that maps every entry (``ent_…``) to its current immutable
EntryVersion (``ver_…``) and a state, active or inactive. See docs/design.md.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal, get_args

from .canonical import ENTRY_CONTENT_TAG, canonical_json_floatless, json_string, tagged_sha256
from .fields import FieldDict, PlainDict, field_dict, plain_dict
from .ids import EntryId, EntryVersionId, MemoryId, SourceId
from .purge import PURGE_MARK, PURGED_TEXT, Tombstone

EntryState = Literal["active", "inactive"]
ChangeOp = Literal["add", "revise", "deactivate", "reactivate"]
VersionStatus = Literal["current", "superseded", "deleted"]  # a version in its entry's history
Surface = Literal["agent-session", "workflow", "human", "import", "api"]
SearchMode = Literal["fts", "vector", "hybrid", "auto"]
Channel = Literal["fts", "vector", "context"]  # context: placed as a neighbour of a strong hit

KnownKind = Literal[
    "fact",
    "preference",
    "decision",
    "constraint",
    "convention",
    "correction",
    "lesson",
    "pattern",
    "procedure",
    "working_note",
]
KNOWN_KINDS: tuple[str, ...] = get_args(KnownKind)  # the built-in kinds, in this order; a store may add its own

MEMORY_SCHEMA = "memstone.memory.v1"
# The tag an accepted maintenance ``stale`` proposal adds: the entry's evidence (a cited file, the entries a
# summary summarizes) changed after it was written. Search hits, recall and the Explorer show it; removing
# the tag (after re-checking the entry) clears it.
STALE_TAG = "stale"


@dataclass(frozen=True, slots=True, kw_only=True, order=True)
class ArtifactRef(FieldDict):
    """An exact Revision of a Memory: the anchor of every citation."""

    memory_id: MemoryId
    revision: int

    def __str__(self) -> str:
        return f"{self.memory_id}@{self.revision}"


@dataclass(frozen=True, slots=True, kw_only=True, order=True)
class Relation(FieldDict):
    """An outgoing link from an entry to another entry (Xema MemoryRelation)."""

    kind: str
    target: EntryId


@dataclass(frozen=True, slots=True, kw_only=True)
class EntryContent:
    """The hashed content of one entry version. Every field here is covered by the entry content hash."""

    kind: str
    text: str
    title: str | None = None
    tags: tuple[str, ...] = ()
    slug: str | None = None
    important: bool = False
    mandatory: bool = False
    sources: tuple[SourceId, ...] = ()
    artifacts: tuple[ArtifactRef, ...] = ()
    relations: tuple[Relation, ...] = ()
    # Set for a purged version (read from its stored text, see domain/purge.py): the hash it had. Its text,
    # title and tags are gone; the hash stays, so every manifest and Revision that names it still verifies.
    purged_hash: str | None = None

    def __post_init__(self) -> None:
        if self.text.startswith(PURGE_MARK):
            object.__setattr__(self, "purged_hash", self.text[len(PURGE_MARK) :])
            object.__setattr__(self, "text", PURGED_TEXT)
        elif self.purged_hash is not None and self.text != PURGED_TEXT:
            raise ValueError("a purged entry content has no text to change")

    def canonical(self) -> dict[str, object]:
        """The canonical JSON object hashed by :attr:`content_hash`."""
        return {
            "artifacts": [a.to_dict() for a in self.artifacts],
            "important": self.important,
            "kind": self.kind,
            "mandatory": self.mandatory,
            "relations": [r.to_dict() for r in self.relations],
            "slug": self.slug,
            "sources": list(self.sources),
            "tags": list(self.tags),
            "text": self.text,
            "title": self.title,
        }

    def canonical_text(self) -> str:
        """The canonical JSON text of :meth:`canonical` (entry content holds no floats and only ASCII keys, so the
        fast encoder is exact JCS here). The usual content (no artifacts or relations, plain strings and bools) is
        written field by field in sorted key order, with the encoder's own string escaping: the same text, for a
        fraction of the work (every write hashes it, and every search hit re-checks it); a property test pins the
        two paths together."""
        kind, text, title, slug, tags, sources = self.kind, self.text, self.title, self.slug, self.tags, self.sources
        if (
            self.artifacts
            or self.relations
            or type(kind) is not str
            or type(text) is not str
            or (title is not None and type(title) is not str)
            or (slug is not None and type(slug) is not str)
            or type(self.important) is not bool
            or type(self.mandatory) is not bool
            or (tags and not all(type(t) is str for t in tags))
            or (sources and not all(type(s) is str for s in sources))
        ):
            return canonical_json_floatless(self.canonical())
        important = "true" if self.important else "false"
        mandatory = "true" if self.mandatory else "false"
        slug_json = "null" if slug is None else json_string(slug)
        title_json = "null" if title is None else json_string(title)
        sources_json = ",".join(map(json_string, sources))
        tags_json = ",".join(map(json_string, tags))
        return (
            f'{{"artifacts":[],"important":{important},"kind":{json_string(kind)},"mandatory":{mandatory},'
            f'"relations":[],"slug":{slug_json},"sources":[{sources_json}],"tags":[{tags_json}],'
            f'"text":{json_string(text)},"title":{title_json}}}'
        )

    @property
    def content_hash(self) -> str:
        if self.purged_hash is not None:
            return self.purged_hash
        return tagged_sha256(ENTRY_CONTENT_TAG, self.canonical_text().encode("utf-8"))


@dataclass(frozen=True, slots=True, kw_only=True)
class Provenance:
    """Who wrote a version, from where and when. Stored beside the content, not hashed."""

    author: str | None = None
    surface: Surface = "api"
    created_at: str = ""


class ContentFields:
    """The base of a value that shows one entry version's content: its fields, read off :meth:`shown_content`."""

    __slots__ = ()

    def shown_content(self) -> EntryContent:
        raise NotImplementedError

    @property
    def kind(self) -> str:
        return self.shown_content().kind

    @property
    def text(self) -> str:
        return self.shown_content().text

    @property
    def title(self) -> str | None:
        return self.shown_content().title

    @property
    def tags(self) -> tuple[str, ...]:
        return self.shown_content().tags

    @property
    def slug(self) -> str | None:
        return self.shown_content().slug

    @property
    def important(self) -> bool:
        return self.shown_content().important

    @property
    def mandatory(self) -> bool:
        return self.shown_content().mandatory


@dataclass(frozen=True, slots=True, kw_only=True)
class EntryVersion(ContentFields):
    """One immutable content version of an entry."""

    memory_id: MemoryId
    entry_id: EntryId
    entry_version_id: EntryVersionId
    version: int
    previous_version_id: EntryVersionId | None
    content: EntryContent
    entry_content_hash: str
    created_in_revision: int
    provenance: Provenance = field(default_factory=Provenance)

    def shown_content(self) -> EntryContent:
        return self.content

    def to_dict(self) -> dict[str, object]:
        """Its fields, the content's canonical fields and the provenance's standing in place of those two."""
        out: dict[str, object] = {}
        for name, value in field_dict(self).items():
            if isinstance(value, EntryContent):
                out.update(value.canonical())
            elif isinstance(value, Provenance):
                out.update(field_dict(value))
            else:
                out[name] = value
        return out


@dataclass(frozen=True, slots=True, kw_only=True)
class HistoryItem:
    """One step of an entry's revision chain, walkable by previous/next (``service.history``)."""

    version: EntryVersion
    previous_version_id: EntryVersionId | None
    next_version_id: EntryVersionId | None
    status: VersionStatus
    reason: str | None = None  # why the Revision that wrote this version wrote it (its Change's reason)
    purge: Tombstone | None = None  # when, by whom and why this version's content was purged (issue 12)

    def to_dict(self) -> dict[str, object]:
        return {
            **self.version.to_dict(),
            "next_version_id": self.next_version_id,
            "status": self.status,
            "reason": self.reason,
            "purge": self.purge.to_dict() if self.purge is not None else None,
        }


@dataclass(frozen=True, slots=True, kw_only=True, order=True)
class ManifestEntry:
    """One row of a Revision's manifest: the entry, its current version and hash, and its state."""

    entry_id: EntryId
    entry_version_id: EntryVersionId
    entry_content_hash: str
    state: EntryState


@dataclass(frozen=True, slots=True, kw_only=True)
class Change(FieldDict):
    """What one Revision did to one entry."""

    op: ChangeOp
    entry_id: EntryId
    from_entry_version_id: EntryVersionId | None
    to_entry_version_id: EntryVersionId | None
    reason: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Revision(PlainDict):
    """An immutable snapshot of a Memory. ``content_hash`` commits to the manifest root and the changes."""

    memory_id: MemoryId
    revision: int
    content_hash: str
    manifest_root: str
    entry_count: int
    active_count: int
    changes: tuple[Change, ...]
    sources: tuple[SourceId, ...] = ()
    artifacts: tuple[ArtifactRef, ...] = ()
    author: str | None = None
    surface: Surface = "api"
    created_at: str = ""

    @property
    def ref(self) -> ArtifactRef:
        return ArtifactRef(memory_id=self.memory_id, revision=self.revision)


def revision_content(manifest_root: str, changes: tuple[Change, ...]) -> dict[str, object]:
    """The canonical MemoryContent object whose hash is a Revision's ``content_hash``."""
    return {
        "schema": MEMORY_SCHEMA,
        "manifest": {"format": "radix-v1", "root": manifest_root},
        "changes": [c.to_dict() for c in changes],
    }


@dataclass(frozen=True, slots=True, kw_only=True)
class RevisionChanges(PlainDict):
    """The compact change summary of one Revision, as ``changes()`` returns it."""

    memory_ref: ArtifactRef
    changes: tuple[Change, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class Source(FieldDict):
    """A persisted piece of evidence (a user note, a file, a task outcome, a git change); its dict is its fields."""

    source_id: SourceId
    kind: str
    uri: str | None = None
    content: str
    content_hash: str = ""
    created_at: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class EntryInput:
    """A caller's entry for ``remember``: ``entry=None`` adds a new entry, an entry (or its id) revises it.

    ``sources=None`` means "supported by all of the operation's sources".
    """

    kind: str
    text: str
    entry: EntryVersion | EntryId | None = None
    title: str | None = None
    tags: tuple[str, ...] | list[str] = ()
    slug: str | None = None
    important: bool = False
    mandatory: bool = False
    sources: tuple[SourceId, ...] | list[SourceId] | None = None
    artifacts: tuple[ArtifactRef, ...] | list[ArtifactRef] = ()
    relations: tuple[Relation, ...] | list[Relation] = ()
    reason: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class EntryPatch:
    """A change to one entry for ``MemoryService.update``: a field left ``None`` keeps its value; an empty
    string clears the title or the slug. The same rule on every surface (library, CLI, HTTP PATCH, MCP)."""

    kind: str | None = None
    text: str | None = None
    title: str | None = None
    tags: tuple[str, ...] | list[str] | None = None
    slug: str | None = None
    important: bool | None = None
    mandatory: bool | None = None
    relations: tuple[Relation, ...] | list[Relation] | None = None
    reason: str | None = None

    def applied_to(self, current: EntryVersion) -> EntryInput:
        """The revision of ``current`` this patch asks for (sources and artifacts are kept)."""
        c = current.content
        return EntryInput(
            entry=current,
            kind=c.kind if self.kind is None else self.kind,
            text=c.text if self.text is None else self.text,
            title=c.title if self.title is None else (self.title or None),
            tags=c.tags if self.tags is None else self.tags,
            slug=c.slug if self.slug is None else (self.slug or None),
            important=c.important if self.important is None else self.important,
            mandatory=c.mandatory if self.mandatory is None else self.mandatory,
            sources=c.sources,
            artifacts=c.artifacts,
            relations=c.relations if self.relations is None else self.relations,
            reason=self.reason,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class UpdateResult:
    """What ``MemoryService.update`` did: ``updated`` (a new version) or ``unchanged`` (the content was already so)."""

    status: Literal["updated", "unchanged"]
    revision: Revision
    previous: EntryVersion
    current: EntryVersion


@dataclass(frozen=True, slots=True, kw_only=True)
class RememberOutcome:
    """What ``MemoryService.remember_outcome`` did, as a value (issue 11).

    ``status``: ``created`` (at least one new entry), ``revised`` (only new versions of existing entries) or
    ``unchanged`` (nothing was written). ``existing`` names the live entries that already held what was given:
    on a no-op, the entry to go to instead. ``revision`` is the new Revision, the current one on a no-op, or None
    when nothing worth saving was given to a new Memory.
    """

    status: Literal["created", "revised", "unchanged"]
    added: tuple[EntryId, ...] = ()
    revised: tuple[EntryId, ...] = ()
    existing: tuple[EntryId, ...] = ()
    revision: Revision | None

    @classmethod
    def committed(cls, revision: Revision, *, existing: Iterable[EntryId] = ()) -> RememberOutcome:
        """The outcome of a write that committed ``revision`` (its changes are this write's)."""
        added = tuple(c.entry_id for c in revision.changes if c.op == "add")
        revised = tuple(c.entry_id for c in revision.changes if c.op == "revise")
        return cls(
            status="created" if added else "revised" if revised else "unchanged",
            revision=revision,
            added=added,
            revised=revised,
            existing=tuple(existing),
        )

    def to_dict(self) -> dict[str, object]:
        return plain_dict(self)


@dataclass(frozen=True, slots=True, kw_only=True)
class MemoryHit:
    """One search result, anchored to an exact entry version of an exact Revision."""

    memory_ref: ArtifactRef
    entry_id: EntryId
    entry_version_id: EntryVersionId
    text: str
    score: float
    matched_by: tuple[Channel, ...]
    kind: str = ""
    title: str | None = None
    tags: tuple[str, ...] = ()
    important: bool = False
    mandatory: bool = False
    entry_content_hash: str = ""
    updated_at: str = ""
    ranks: Mapping[str, int] = field(default_factory=dict)
    slug: str | None = None
    scope: str | None = None
    # Graphit include_superseded: only an archived version matched. The hit carries that version (anchored at
    # the Revision that wrote it) and the entry's current version; flags are the current version's.
    superseded: bool = False
    current_entry_version_id: EntryVersionId | None = None
    # The parts behind ``score`` (N12 explainability): bm25, coverage, lexical, cosine, dense, fusion.
    contributions: Mapping[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, object]:
        return {
            "memory_ref": self.memory_ref.to_dict(),
            "entry_id": self.entry_id,
            "entry_version_id": self.entry_version_id,
            "kind": self.kind,
            "title": self.title,
            "text": self.text,
            "tags": list(self.tags),
            "slug": self.slug,
            "important": self.important,
            "mandatory": self.mandatory,
            "score": self.score,
            "matched_by": list(self.matched_by),
            "ranks": dict(self.ranks),
            "contributions": dict(self.contributions),
            "entry_content_hash": self.entry_content_hash,
            "updated_at": self.updated_at,
            "scope": self.scope,
            "superseded": self.superseded,
            "current_entry_version_id": self.current_entry_version_id,
            "stale": self.stale,
        }

    @property
    def stale(self) -> bool:
        """Flagged stale by maintenance: its evidence changed after it was written (the ``stale`` tag)."""
        return STALE_TAG in self.tags


@dataclass(frozen=True, slots=True, kw_only=True)
class Shadowed(PlainDict):
    """A hit that precedence dropped (a more specific scope holds the same kind and slug), reported, not lost."""

    memory_ref: ArtifactRef
    entry_id: EntryId
    kind: str
    slug: str
    scope: str
    shadowed_by: EntryId
    shadowed_by_scope: str


@dataclass(frozen=True, slots=True, kw_only=True)
class SearchResult:
    """Hits plus the mode actually used (``auto`` reports what it fell back to)."""

    mode: SearchMode
    requested_mode: SearchMode
    fallback_reason: str | None = None
    order: Literal["relevance", "priority"] = "relevance"
    hits: tuple[MemoryHit, ...]
    shadowed: tuple[Shadowed, ...] = ()

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self.hits)

    def __len__(self) -> int:
        return len(self.hits)

    def __getitem__(self, index: int) -> MemoryHit:
        return self.hits[index]

    def to_dict(self) -> dict[str, object]:
        return plain_dict(self)


@dataclass(frozen=True, slots=True, kw_only=True)
class Citation(PlainDict):
    """A Handoff citation: an exact Revision, entry and entry version (and the hash it had)."""

    memory_ref: ArtifactRef
    entry_id: EntryId
    entry_version_id: EntryVersionId
    entry_content_hash: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class VerifyReport:
    """What ``verify`` found. Authority damage is never repaired; projection damage is rebuildable."""

    revisions_checked: int = 0
    versions_checked: int = 0
    nodes_checked: int = 0
    projections_checked: int = 0
    authority_damage: tuple[str, ...] = ()
    projection_damage: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.authority_damage and not self.projection_damage

    def to_dict(self) -> dict[str, object]:
        return {"ok": self.ok, **plain_dict(self)}
