"""MemoryService: the use cases. Every front end (Python, CLI, MCP, HTTP) calls these and nothing else."""

from __future__ import annotations

import asyncio
import copy
import datetime as _dt
import logging
import time
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from typing import Literal, cast

from ..domain.canonical import SOURCE_CONTENT_TAG, tagged_sha256
from ..domain.errors import (
    ArtifactNotFoundError,
    CapabilityNotSupportedError,
    EntryInactiveError,
    InvalidCitationError,
    InvalidInput,
    NotFound,
    RevisionConflictError,
    StaleEntryError,
    StoreMigratingError,
)
from ..domain.ids import EntryId, EntryVersionId, MemoryId, SourceId, check_id, new_ulid
from ..domain.model import (
    ArtifactRef,
    Change,
    Citation,
    EntryContent,
    EntryInput,
    EntryPatch,
    EntryVersion,
    ManifestEntry,
    MemoryHit,
    Provenance,
    Revision,
    RevisionChanges,
    SearchMode,
    SearchResult,
    Source,
    Surface,
    UpdateResult,
    VerifyReport,
)
from ..domain.records import Record
from ..domain.render import render_markdown
from ..domain.rules import (
    build_content,
    normalize_artifacts,
    normalize_reason,
    normalize_source_ids,
    normalize_tags,
    normalize_text,
)
from ..domain.scopes import canonical_scope
from ..indexing import Progress, VectorIndexer
from ..ports import (
    ContentQuery,
    EmbeddingModel,
    HeadQuery,
    ManifestQuery,
    MemoriesQuery,
    MemoryBackend,
    RevisionQuery,
    ScopeQuery,
    SearchRequest,
    SourcesQuery,
    VectorStatusQuery,
    VersionsQuery,
    WritePlan,
)
from .policy import Actor, Policy, UserOrg, refuse_secrets, refuse_secrets_in_plan
from .records import Order, RecordsMixin, flag_reason

MemoryLike = Revision | ArtifactRef
EntryLike = EntryVersion | MemoryHit | str
RememberMode = Literal["append", "extract", "auto"]
MAX_LIMIT = 1000
WRITE_RETRIES = 5  # the one retry policy for writes that re-read the head after a lost race
log = logging.getLogger("memstone.service")


def utc_now() -> str:
    """The default clock: ISO-8601 UTC with milliseconds."""
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass(frozen=True, slots=True, kw_only=True)
class HistoryItem:
    """One step of an entry's revision chain, walkable by previous/next."""

    version: EntryVersion
    previous_version_id: EntryVersionId | None
    next_version_id: EntryVersionId | None
    status: Literal["current", "superseded", "deleted"]

    def to_dict(self) -> dict[str, object]:
        return {
            **self.version.to_dict(),
            "next_version_id": self.next_version_id,
            "status": self.status,
        }


class MemoryService(RecordsMixin):
    """Durable, versioned memory over one backend. Construct it with :func:`open_service`."""

    def __init__(
        self,
        backend: MemoryBackend,
        *,
        clock: Callable[[], str] = utc_now,
        new_id: Callable[[str], str] = new_ulid,
        author: str | None = None,
        surface: Surface = "api",
        closed_kinds: frozenset[str] | None = None,
        embedding: EmbeddingModel | None = None,
    ) -> None:
        self.backend = backend
        self._clock = clock
        self._new_id = new_id
        self._author = author
        self._surface: Surface = surface
        self._closed_kinds = closed_kinds
        self.indexer = VectorIndexer(embedding) if embedding is not None else None
        self.migration_wait_s = 600.0
        self._policy = Policy(Actor.local(author=author, surface=surface))

    def acting(self, actor: Actor, *, user_org: UserOrg | None = None) -> MemoryService:
        """A view of this service that acts as ``actor``: every read and write checks its grants, and its writes
        record it as author and surface. The view shares the open backend, the model and the caches.

        ``user_org`` looks up the organization of a user scope's user (for an admin's view of a colleague's scope).

        >>> view = svc.acting(Actor.of(access, surface="mcp"), user_org=principals.org_of)   # doctest: +SKIP
        """
        view = copy.copy(self)
        view._author = actor.author
        view._surface = actor.surface
        view._policy = Policy(actor, user_org=user_org)
        return view

    @property
    def actor(self) -> Actor:
        """Who this service acts as (the local user unless it is a view from :meth:`acting`)."""
        return self._policy.actor

    @property
    def policy(self) -> Policy:
        """The grant rule for this service's actor (front ends ask it; they never decide themselves)."""
        return self._policy

    async def scope_of(self, memory_id: MemoryId) -> str | None:
        """The scope a Memory is bound to (None: unbound). Bindings are permanent."""
        return (await self._scopes_of([memory_id])).get(memory_id)

    async def _may(self, memory_id: MemoryId, need: Literal["read", "write"], *, hidden: str) -> None:
        """The grant rule for a Memory found by id (NotFound ``hidden`` when the actor cannot read it)."""
        if self._policy.actor.trusted:
            return
        scope = (await self._scopes_of([memory_id])).get(memory_id)
        await self._policy.require_bound(scope, need, hidden=hidden)

    # ------------------------------------------------------------------ reads
    async def head(self, memory: MemoryLike | str) -> Revision:
        """The current Revision of a Memory."""
        memory_id = _memory_id(memory)
        head = await self.backend.read(HeadQuery(memory_id=memory_id))
        if head is None:
            raise ArtifactNotFoundError(f"no memory {memory_id}", hint="list memories with `memstone memories`")
        await self._may(memory_id, "read", hidden=f"no memory {memory_id}")
        return cast(Revision, head)

    async def revision(self, memory: MemoryLike | str, revision: int | None = None) -> Revision:
        """An exact Revision (default: the one ``memory`` names, or the head)."""
        memory_id = _memory_id(memory)
        number = revision if revision is not None else getattr(memory, "revision", None)
        if number is None:
            return await self.head(memory_id)
        if isinstance(number, bool) or not isinstance(number, int) or number < 1:
            raise InvalidInput(f"revision must be a positive integer, got {number!r}")
        found = await self.backend.read(RevisionQuery(ref=ArtifactRef(memory_id=memory_id, revision=number)))
        if found is None:
            raise ArtifactNotFoundError(f"no revision {number} of {memory_id}")
        await self._may(memory_id, "read", hidden=f"no memory {memory_id}")
        return cast(Revision, found)

    async def memories(self) -> tuple[Revision, ...]:
        """The head Revision of every Memory in the store (that the actor may read)."""
        heads = cast(list[Revision], await self.backend.read(MemoriesQuery()))
        if self._policy.actor.trusted:
            return tuple(heads)
        scope_of = await self._scopes_of([h.memory_id for h in heads])
        return tuple([h for h in heads if await self._policy.readable(scope_of.get(h.memory_id))])

    async def manifest(self, memory: MemoryLike | str) -> dict[EntryId, ManifestEntry]:
        """The whole manifest of a Revision (default: the head): entry → version, hash, state."""
        rev = await self.revision(memory)
        return dict(cast(dict[EntryId, ManifestEntry], await self.backend.read(ManifestQuery(ref=rev.ref))))

    async def entries(self, memory: MemoryLike | str, *, include_inactive: bool = False) -> list[EntryVersion]:
        """The current version of every (active) entry of a Revision, in entry id order."""
        rev = await self.revision(memory)
        manifest = await self.manifest(rev)
        wanted = [m for m in manifest.values() if include_inactive or m.state == "active"]
        wanted.sort(key=lambda m: m.entry_id.encode("utf-8"))
        out: list[EntryVersion] = []
        for i in range(0, len(wanted), 500):
            ids = tuple(m.entry_version_id for m in wanted[i : i + 500])
            out.extend(
                cast(
                    list[EntryVersion], await self.backend.read(VersionsQuery(memory_id=rev.memory_id, version_ids=ids))
                )
            )
        return out

    async def get(self, entry: EntryLike, *, memory: MemoryLike | str | None = None) -> EntryVersion:
        """An entry's version: the one current at ``memory`` (default: its head), or the exact version given."""
        if isinstance(entry, str) and entry.startswith("ver_"):
            found = cast(
                list[EntryVersion],
                await self.backend.read(VersionsQuery(memory_id=None, version_ids=(EntryVersionId(entry),))),
            )
            if not found:
                raise NotFound(f"no entry version {entry}")
            await self._may(found[0].memory_id, "read", hidden=f"no entry version {entry}")
            return found[0]
        entry_id = _entry_id(entry)
        versions = cast(list[EntryVersion], await self.backend.read(VersionsQuery(memory_id=None, entry_id=entry_id)))
        if not versions:
            raise NotFound(f"no entry {entry_id}", hint="search or list entries to find an id")
        await self._may(versions[0].memory_id, "read", hidden=f"no entry {entry_id}")
        rev = await self.revision(memory if memory is not None else versions[0].memory_id)
        manifest = cast(
            dict[EntryId, ManifestEntry], await self.backend.read(ManifestQuery(ref=rev.ref, entry_ids=(entry_id,)))
        )
        m = manifest.get(entry_id)
        if m is None:
            raise NotFound(f"entry {entry_id} is not in {rev.ref}")
        for v in versions:
            if v.entry_version_id == m.entry_version_id:
                return v
        raise NotFound(f"version {m.entry_version_id} of {entry_id} is missing")

    async def history(self, entry: EntryLike) -> tuple[HistoryItem, ...]:
        """Every version of an entry, oldest first, with previous/next links and current/superseded/deleted."""
        entry_id = _entry_id(entry)
        versions = cast(list[EntryVersion], await self.backend.read(VersionsQuery(memory_id=None, entry_id=entry_id)))
        if not versions:
            raise NotFound(f"no entry {entry_id}")
        await self._may(versions[0].memory_id, "read", hidden=f"no entry {entry_id}")
        head = await self.head(versions[0].memory_id)
        manifest = cast(
            dict[EntryId, ManifestEntry], await self.backend.read(ManifestQuery(ref=head.ref, entry_ids=(entry_id,)))
        )
        state = manifest[entry_id].state if entry_id in manifest else "inactive"
        out = []
        for i, v in enumerate(versions):
            nxt = versions[i + 1].entry_version_id if i + 1 < len(versions) else None
            if nxt is not None:
                status: Literal["current", "superseded", "deleted"] = "superseded"
            else:
                status = "current" if state == "active" else "deleted"
            out.append(
                HistoryItem(version=v, previous_version_id=v.previous_version_id, next_version_id=nxt, status=status)
            )
        return tuple(out)

    async def source(self, entry: EntryLike, *, memory: MemoryLike | str | None = None) -> str:
        """One entry (or exact version) rendered as Markdown with YAML frontmatter (the Graphit presentation)."""
        version = await self.get(entry, memory=memory)
        chain = await self.history(version.entry_id)
        item = next(h for h in chain if h.version.entry_version_id == version.entry_version_id)
        state = "inactive" if item.status == "deleted" else "active"
        return render_markdown(
            version,
            created_at=chain[0].version.provenance.created_at,
            state=state,
            current=item.next_version_id is None,
        )

    async def changes(
        self, memory: MemoryLike | str, *, since_revision: int | None = None
    ) -> tuple[RevisionChanges, ...]:
        """Compact per-Revision change summaries, ascending; ``since_revision`` is exclusive (0 = from the start)."""
        rev = await self.revision(memory)
        return await self.backend.changes(rev.ref, since_revision)

    async def expand(
        self, hits: Iterable[MemoryHit | Citation], *, layer: Literal["full"] = "full"
    ) -> tuple[EntryVersion, ...]:
        """The exact entry versions behind hits or citations, each validated against its Revision's manifest."""
        anchors = []
        for hit in hits:
            if not isinstance(hit, (MemoryHit, Citation)):
                raise InvalidInput(f"expand takes hits or citations, got {type(hit).__name__}")
            anchors.append((hit.memory_ref, hit.entry_id, hit.entry_version_id))
        for memory_id in sorted({a[0].memory_id for a in anchors}):
            await self._may(memory_id, "read", hidden=f"no memory {memory_id}")
        return await self.backend.expand(anchors)

    def cite(self, hit: MemoryHit | Record) -> Citation:
        """The exact Handoff anchor of a hit or record: memory ref + entry id + entry version id (+ hash)."""
        if isinstance(hit, Record):
            return self.cite_record(hit)
        return Citation(
            memory_ref=hit.memory_ref,
            entry_id=hit.entry_id,
            entry_version_id=hit.entry_version_id,
            entry_content_hash=hit.entry_content_hash or None,
        )

    async def verify_citation(self, citation: Citation) -> EntryVersion:
        """Check a citation against canonical bytes; returns the cited version or raises InvalidCitationError."""
        await self._may(citation.memory_ref.memory_id, "read", hidden=f"no memory {citation.memory_ref.memory_id}")
        (version,) = await self.backend.expand([(citation.memory_ref, citation.entry_id, citation.entry_version_id)])
        if citation.entry_content_hash is not None and citation.entry_content_hash != version.entry_content_hash:
            raise InvalidCitationError(f"citation hash does not match version {citation.entry_version_id}")
        return version

    # ------------------------------------------------------------------ evidence and scopes
    async def record_source(self, kind: str, content: str, *, uri: str | None = None) -> Source:
        """Persist a piece of evidence (immutable) and return it, to cite in ``remember(sources=...)``."""
        text = normalize_text(content, what="source content")
        kind_clean = normalize_tags([kind])[0]
        refuse_secrets([("source content", text), ("source uri", uri)])
        source = Source(
            source_id=SourceId(self._new_id("src_")),
            kind=kind_clean,
            content=text,
            uri=uri,
            content_hash=tagged_sha256(SOURCE_CONTENT_TAG, text.encode("utf-8")),
            created_at=self._clock(),
        )
        return await self.backend.put_source(source)

    async def sources(self, ids: Sequence[str]) -> tuple[Source, ...]:
        return tuple(
            cast(list[Source], await self.backend.read(SourcesQuery(source_ids=tuple(normalize_source_ids(ids)))))
        )

    async def resolve(self, scope: str) -> Revision | None:
        """The head of the Memory bound to a scope URI, or None when the scope is unbound."""
        uri = canonical_scope(scope)
        await self._policy.require_named(uri, "read")
        found = cast(list[tuple[str, MemoryId, str]], await self.backend.read(ScopeQuery(scope=uri)))
        if not found:
            return None
        return await self.head(found[0][1])

    async def scopes(self) -> tuple[tuple[str, MemoryId], ...]:
        """Every scope binding the actor may read: (scope URI, memory id)."""
        found = await self._bindings()
        if self._policy.actor.trusted:
            return found
        return tuple([(s, m) for s, m in found if await self._policy.readable(s)])

    async def _bindings(self) -> tuple[tuple[str, MemoryId], ...]:
        found = cast(list[tuple[str, MemoryId, str]], await self.backend.read(ScopeQuery(scope=None)))
        return tuple((s, m) for s, m, _ in found)

    # ------------------------------------------------------------------ writes
    async def remember(
        self,
        memory: MemoryLike | None = None,
        *,
        entries: Sequence[EntryInput] = (),
        sources: Sequence[Source | str] = (),
        artifacts: Sequence[ArtifactRef] = (),
        mode: RememberMode = "append",
        scope: str | None = None,
        author: str | None = None,
        surface: Surface | None = None,
    ) -> Revision | None:
        """Add or revise entries. ``memory=None`` creates a new Memory (or, with ``scope``, the scope's Memory).

        Returns the new Revision; the current one when nothing changed; None when nothing worth saving was
        given to a new Memory. A stale ``memory`` raises RevisionConflictError. A write addressed by ``scope``
        alone applies to the scope's current head and retries when another writer got there first.
        """
        entries = list(entries)
        if mode not in ("append", "extract", "auto"):
            raise InvalidInput(f"unknown remember mode {mode!r}", hint="use append, extract or auto")
        if mode == "auto":
            mode = "append" if entries else "extract"
        if mode == "extract":
            if entries:
                raise InvalidInput("extract takes evidence, not entries")
            if not sources and not artifacts:
                raise InvalidInput("nothing to remember: give entries, or sources/artifacts to extract from")
            raise CapabilityNotSupportedError(
                "extract", "no candidate pipeline is configured", hint="pass explicit entries with mode='append'"
            )
        if not entries:
            raise InvalidInput("append needs at least one entry")
        closed = await self.kinds()
        op_sources = normalize_source_ids(sources)
        op_artifacts = normalize_artifacts(artifacts)
        if scope is not None:
            scope = canonical_scope(scope)
        from_scope = memory is None and scope is not None
        if memory is None and scope is not None:
            bound = await self.resolve(scope)
            if bound is not None:
                memory = bound
        base = await self._base(memory)
        memory_id = base.memory_id if base is not None else MemoryId(self._new_id("mem_"))
        base_revision = base.revision if base is not None else 0
        new_revision = base_revision + 1
        now = self._clock()
        provenance = Provenance(author=author or self._author, surface=surface or self._surface, created_at=now)

        revise_ids = [_entry_id(e.entry) for e in entries if e.entry is not None]
        if len(set(revise_ids)) != len(revise_ids):
            raise InvalidInput("one remember call cannot change the same entry twice")
        current: dict[EntryId, ManifestEntry] = {}
        previous: dict[EntryVersionId, EntryVersion] = {}
        if revise_ids:
            if base is None:
                raise InvalidInput("a new Memory has no entries to revise")
            current = cast(
                dict[EntryId, ManifestEntry],
                await self.backend.read(ManifestQuery(ref=base.ref, entry_ids=tuple(EntryId(i) for i in revise_ids))),
            )
            ver_ids = tuple(m.entry_version_id for m in current.values())
            for v in cast(
                list[EntryVersion], await self.backend.read(VersionsQuery(memory_id=memory_id, version_ids=ver_ids))
            ):
                previous[v.entry_version_id] = v

        changes: list[Change] = []
        new_versions: list[EntryVersion] = []
        pending_new: dict[str, EntryContent] = {}
        for item in entries:
            if item.entry is None:
                content = build_content(item, op_sources=op_sources, closed_kinds=closed)
                pending_new.setdefault(content.content_hash, content)  # only the first identical new entry
                continue
            eid = EntryId(_entry_id(item.entry))
            cur = current.get(eid)
            if cur is None:
                raise InvalidInput(f"entry {eid} is not in {memory_id}")
            if cur.state != "active":
                raise EntryInactiveError(f"entry {eid} is inactive", hint="reactivate it first, then revise it")
            if isinstance(item.entry, EntryVersion) and item.entry.entry_version_id != cur.entry_version_id:
                raise InvalidInput(
                    f"stale entry: {item.entry.entry_version_id} is not the current version of {eid}",
                    hint="read the entry again and revise its current version",
                )
            prev = previous[cur.entry_version_id]
            content = build_content(
                item, op_sources=op_sources, inherited_sources=prev.content.sources, closed_kinds=closed
            )
            if content.content_hash == prev.entry_content_hash:
                continue  # identical content is a no-op
            vid = EntryVersionId(self._new_id("ver_"))
            new_versions.append(
                EntryVersion(
                    memory_id=memory_id,
                    entry_id=eid,
                    entry_version_id=vid,
                    version=prev.version + 1,
                    previous_version_id=prev.entry_version_id,
                    content=content,
                    entry_content_hash=content.content_hash,
                    created_in_revision=new_revision,
                    provenance=provenance,
                )
            )
            changes.append(
                Change(
                    op="revise",
                    entry_id=eid,
                    from_entry_version_id=prev.entry_version_id,
                    to_entry_version_id=vid,
                    reason=normalize_reason(item.reason) or flag_reason(prev.content, content),
                )
            )
        if pending_new and base is not None:
            existing = cast(
                list[tuple[EntryVersion, str]],
                await self.backend.read(ContentQuery(memory_id=memory_id, content_hashes=tuple(pending_new))),
            )
            for v, state in existing:
                if state == "active":
                    pending_new.pop(v.entry_content_hash, None)  # exact duplicate of a live entry
        reasons: dict[str, str | None] = {}
        for item in entries:
            if item.entry is None:
                reasons.setdefault(
                    build_content(item, op_sources=op_sources, closed_kinds=closed).content_hash,
                    normalize_reason(item.reason),
                )
        for content_hash, content in pending_new.items():
            eid = EntryId(self._new_id("ent_"))
            vid = EntryVersionId(self._new_id("ver_"))
            new_versions.append(
                EntryVersion(
                    memory_id=memory_id,
                    entry_id=eid,
                    entry_version_id=vid,
                    version=1,
                    previous_version_id=None,
                    content=content,
                    entry_content_hash=content_hash,
                    created_in_revision=new_revision,
                    provenance=provenance,
                )
            )
            changes.append(
                Change(
                    op="add",
                    entry_id=eid,
                    from_entry_version_id=None,
                    to_entry_version_id=vid,
                    reason=reasons.get(content_hash),
                )
            )
        if not changes:
            if base is not None and not from_scope and base.revision != (await self.head(base.memory_id)).revision:
                # Trigger: a replay whose content is already there, against an explicit base that is no longer
                # the head. Why: the RFC answers a stale base with RevisionConflictError, no-op or not; returning
                # the stale Revision would tell the caller its base is current. Outcome: re-read and retry.
                raise RevisionConflictError(base.memory_id, expected=base.revision)
            return base  # a no-op writes nothing (None for a new Memory)
        plan = WritePlan(
            memory_id=memory_id,
            base_revision=base_revision,
            changes=tuple(changes),
            new_versions=tuple(new_versions),
            sources=op_sources,
            artifacts=op_artifacts,
            author=provenance.author,
            surface=provenance.surface,
            created_at=now,
            bind_scope=scope if base is None else None,
        )
        try:
            return await self._commit(plan)
        except RevisionConflictError:
            if from_scope:
                # Trigger: another writer committed to the scope's Memory first (or won the binding race).
                # Why: a scope write names no base Revision, so both writes must be kept, in the one Memory the
                #      scope is bound to; each retry follows another writer's success, so it terminates.
                # Outcome: retry against the scope's current head.
                return await self.remember(
                    None,
                    entries=entries,
                    sources=sources,
                    artifacts=artifacts,
                    mode="append",
                    scope=scope,
                    author=author,
                    surface=surface,
                )
            raise

    async def update(
        self, entry: EntryLike, patch: EntryPatch, *, expected_version: int | str | None = None
    ) -> UpdateResult:
        """Revise one entry at its Memory's current head; fields the patch leaves ``None`` keep their value.

        ``expected_version`` (the version number or ``ver_…`` id you read) makes it optimistic: a change to this
        entry since then raises StaleEntryError and writes nothing. A lost race with a write to *another* entry
        of the same Memory is retried (up to ``WRITE_RETRIES`` times). The default reason is ``flag`` when only
        the flags change, else ``update``.

        >>> await svc.update("ent_…", EntryPatch(text="We deploy with uv."), expected_version=2)  # doctest: +SKIP
        """
        if not isinstance(patch, EntryPatch):
            raise InvalidInput(f"update takes an EntryPatch, got {type(patch).__name__}")
        if expected_version is not None and (
            isinstance(expected_version, bool)
            or not (
                isinstance(expected_version, str)
                or (isinstance(expected_version, int) and 1 <= expected_version < 2**63)
            )
        ):
            raise InvalidInput(f"expected_version must be a version number or a ver_… id, got {expected_version!r}")
        entry_id = EntryId(_entry_id(entry))
        for attempt in range(WRITE_RETRIES):
            found = await self.get(entry_id)
            head = await self.head(found.memory_id)
            current = await self.get(entry_id, memory=head)
            if expected_version is not None and expected_version not in (current.version, current.entry_version_id):
                raise StaleEntryError(
                    entry_id, memory_id=current.memory_id, expected=expected_version, actual=current.version
                )
            item = patch.applied_to(current)
            if item.reason is None:
                proposed = build_content(item, op_sources=(), inherited_sources=current.content.sources)
                item = replace(item, reason=flag_reason(current.content, proposed) or "update")
            try:
                rev = await self.remember(head, entries=[item])
            except RevisionConflictError:
                if attempt == WRITE_RETRIES - 1:
                    raise
                continue  # another entry of this Memory changed first: re-read and apply again
            assert rev is not None
            if rev.revision == head.revision:
                return UpdateResult(status="unchanged", revision=rev, previous=current, current=current)
            now = await self.get(entry_id, memory=rev)
            return UpdateResult(status="updated", revision=rev, previous=current, current=now)
        raise AssertionError("unreachable")

    async def forget(self, memory: MemoryLike, *, entries: Sequence[EntryLike], reason: str | None = None) -> Revision:
        """Mark entries inactive in a new Revision. Already-inactive entries are an idempotent no-op."""
        return await self._set_state(memory, entries, reason, target="inactive")

    async def reactivate(
        self, memory: MemoryLike, *, entries: Sequence[EntryLike], reason: str | None = None
    ) -> Revision:
        """Mark inactive entries active again, pointing at the same version. Active entries are a no-op."""
        return await self._set_state(memory, entries, reason, target="active")

    async def _set_state(
        self,
        memory: MemoryLike,
        entries: Sequence[EntryLike],
        reason: str | None,
        *,
        target: Literal["active", "inactive"],
    ) -> Revision:
        if not entries:
            raise InvalidInput("name at least one entry")
        base = await self._base(memory)
        assert base is not None
        why = normalize_reason(reason)
        ids = [EntryId(_entry_id(e)) for e in entries]
        if len(set(ids)) != len(ids):
            raise InvalidInput("an entry is named twice")
        manifest = cast(
            dict[EntryId, ManifestEntry], await self.backend.read(ManifestQuery(ref=base.ref, entry_ids=tuple(ids)))
        )
        changes = []
        for entry, eid in zip(entries, ids, strict=True):
            m = manifest.get(eid)
            if m is None:
                raise InvalidInput(f"entry {eid} is not in {base.memory_id}")
            if isinstance(entry, (EntryVersion, MemoryHit)) and entry.entry_version_id != m.entry_version_id:
                raise InvalidInput(f"stale entry: {entry.entry_version_id} is not the current version of {eid}")
            if m.state == target:
                continue
            if target == "inactive":
                changes.append(
                    Change(
                        op="deactivate",
                        entry_id=eid,
                        from_entry_version_id=m.entry_version_id,
                        to_entry_version_id=None,
                        reason=why,
                    )
                )
            else:
                changes.append(
                    Change(
                        op="reactivate",
                        entry_id=eid,
                        from_entry_version_id=None,
                        to_entry_version_id=m.entry_version_id,
                        reason=why,
                    )
                )
        if not changes:
            return base
        now = self._clock()
        plan = WritePlan(
            memory_id=base.memory_id,
            base_revision=base.revision,
            changes=tuple(changes),
            new_versions=(),
            author=self._author,
            surface=self._surface,
            created_at=now,
        )
        return await self._commit(plan)

    async def organize(self, memory: MemoryLike, *, dedupe: bool = True, normalize: bool = True) -> Revision:
        """Exact deduplication (keep the smallest entry id) and reference normalization, in one Revision."""
        base = await self._base(memory)
        assert base is not None
        current = await self.entries(base)
        changes: list[Change] = []
        new_versions: list[EntryVersion] = []
        deactivated: set[str] = set()
        now = self._clock()
        if dedupe:
            by_hash: dict[str, list[EntryVersion]] = {}
            for v in current:
                by_hash.setdefault(v.entry_content_hash, []).append(v)
            for group in by_hash.values():
                group.sort(key=lambda v: v.entry_id.encode("utf-8"))
                for dup in group[1:]:
                    deactivated.add(dup.entry_id)
                    changes.append(
                        Change(
                            op="deactivate",
                            entry_id=dup.entry_id,
                            from_entry_version_id=dup.entry_version_id,
                            to_entry_version_id=None,
                            reason="dedupe",
                        )
                    )
        if normalize:
            for v in current:
                if v.entry_id in deactivated:
                    continue
                c = v.content
                normalized = replace(
                    c,
                    sources=normalize_source_ids(c.sources),
                    artifacts=normalize_artifacts(c.artifacts),
                    tags=normalize_tags(c.tags),
                )
                if normalized.content_hash == v.entry_content_hash:
                    continue
                vid = EntryVersionId(self._new_id("ver_"))
                new_versions.append(
                    EntryVersion(
                        memory_id=v.memory_id,
                        entry_id=v.entry_id,
                        entry_version_id=vid,
                        version=v.version + 1,
                        previous_version_id=v.entry_version_id,
                        content=normalized,
                        entry_content_hash=normalized.content_hash,
                        created_in_revision=base.revision + 1,
                        provenance=Provenance(author=self._author, surface="workflow", created_at=now),
                    )
                )
                changes.append(
                    Change(
                        op="revise",
                        entry_id=v.entry_id,
                        from_entry_version_id=v.entry_version_id,
                        to_entry_version_id=vid,
                        reason="normalize",
                    )
                )
        if not changes:
            return base
        plan = WritePlan(
            memory_id=base.memory_id,
            base_revision=base.revision,
            changes=tuple(changes),
            new_versions=tuple(new_versions),
            author=self._author,
            surface="workflow",
            created_at=now,
        )
        return await self._commit(plan)

    async def _base(self, memory: MemoryLike | None) -> Revision | None:
        if memory is None:
            return None
        if isinstance(memory, str):
            raise InvalidInput(
                "writes take the exact Revision they are based on, not a bare memory id",
                hint="pass await service.head(memory_id)",
            )
        if not isinstance(memory, (Revision, ArtifactRef)):
            raise InvalidInput(f"memory must be a Revision or ArtifactRef, got {type(memory).__name__}")
        if isinstance(memory, Revision):
            return memory
        return await self.revision(memory.memory_id, memory.revision)

    async def _commit(self, plan: WritePlan) -> Revision:
        """The one write path: the policy (secrets, the write grant), vectors, then the unit of work."""
        refuse_secrets_in_plan(plan)
        if not self._policy.actor.trusted:
            if plan.bind_scope is not None and plan.base_revision == 0:
                await self._policy.require_named(plan.bind_scope, "write")
            else:
                await self._may(plan.memory_id, "write", hidden=f"no memory {plan.memory_id}")
        plan = await self._with_vectors(plan)
        deadline = time.monotonic() + self.migration_wait_s
        while True:
            try:
                async with self.backend.begin() as uow:
                    return await uow.commit(plan)
            except StoreMigratingError:
                # Trigger: a model migration (memstone reembed) holds writes.
                # Why: every write must land on the new profile's projection, not be lost or half-indexed.
                # Outcome: wait for the migration to finish, then commit (vectors are recomputed).
                if time.monotonic() > deadline:
                    raise
                await asyncio.sleep(0.2)
                plan = await self._with_vectors(replace(plan, vectors={}))

    async def _with_vectors(self, plan: WritePlan) -> WritePlan:
        """Embed, outside the transaction, every version this write projects (new, revised, reactivated)."""
        if self.indexer is None or self.backend.capabilities.embedding_profile is None:
            return plan
        projected = {v.entry_version_id: v for v in plan.new_versions}
        missing = tuple(
            c.to_entry_version_id
            for c in plan.changes
            if c.op == "reactivate" and c.to_entry_version_id is not None and c.to_entry_version_id not in projected
        )
        if missing:
            found = await self.backend.read(VersionsQuery(memory_id=plan.memory_id, version_ids=missing))
            projected.update({v.entry_version_id: v for v in cast(list[EntryVersion], found)})
        wanted = [
            projected[c.to_entry_version_id]
            for c in plan.changes
            if c.op != "deactivate" and c.to_entry_version_id in projected
        ]
        return replace(plan, vectors=await self.indexer.vectors_for(wanted))

    # ------------------------------------------------------------------ search
    async def search(
        self,
        query: str,
        *,
        memories: Sequence[MemoryLike | str] = (),
        scopes: Sequence[str] = (),
        limit: int = 8,
        mode: SearchMode = "auto",
        kinds: Sequence[str] = (),
        tags: Sequence[str] = (),
        important: bool | None = None,
        mandatory: bool | None = None,
        exact: bool = False,
        order: Order = "relevance",
        exclude_mandatory: bool = False,
        include_superseded: bool = False,
        precedence: bool = True,
    ) -> SearchResult:
        """Search the current heads of explicit Memories (or scopes) by ``fts``, ``vector``, ``hybrid`` or ``auto``.

        ``auto`` uses hybrid when a model matching the store's profile is loaded and every selected Memory's
        vector projection is complete, else FTS, and reports the mode it used. ``exact=True`` makes the
        vector channel scan exactly instead of using the quantized fast path (the reference it is checked by).

        Graphit options: ``order="priority"`` (mandatory → important → normal, then newest; a score never outranks
        a category), ``exclude_mandatory`` (the recall protocol's contextual pass), ``include_superseded`` (archived
        versions are searched too and collapse onto their entry; archive-only matches come back ``superseded``).
        With several tiers selected, ``precedence`` drops entries a more specific scope shadows and reports them in
        ``result.shadowed``. ``limit`` counts distinct entries after collapse and ordering.
        """
        if not isinstance(query, str):
            raise InvalidInput("query must be a string")
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
            raise InvalidInput(f"limit must be an integer from 1 to {MAX_LIMIT}, got {limit!r}")
        if mode not in ("fts", "vector", "hybrid", "auto"):
            raise InvalidInput(f"unknown search mode {mode!r}", hint="use fts, vector, hybrid or auto")
        if order not in ("relevance", "priority"):
            raise InvalidInput(f"unknown search order {order!r}", hint="use relevance or priority")
        if exclude_mandatory:
            if mandatory is True:
                raise InvalidInput("exclude_mandatory=True contradicts mandatory=True")
            mandatory = False
        if isinstance(scopes, str | bool) or isinstance(memories, str | bool):
            raise InvalidInput("scopes= and memories= take lists", hint="pass scopes=['memstone://…'] or memories=[…]")
        refs: dict[MemoryId, ArtifactRef] = {}
        for m in memories:
            ref = (await self.head(m)).ref if isinstance(m, str) else (m.ref if isinstance(m, Revision) else m)
            if ref.memory_id in refs and refs[ref.memory_id] != ref:
                raise InvalidInput(f"{ref.memory_id} is named at two different revisions")
            await self._may(ref.memory_id, "read", hidden=f"no memory {ref.memory_id}")
            refs[ref.memory_id] = ref
        for scope in scopes:
            bound = await self.resolve(scope)
            if bound is not None:
                refs.setdefault(bound.memory_id, bound.ref)
        if not refs:
            if mode in ("vector", "hybrid"):
                await self._resolve_mode(mode, ())  # an explicit mode the store cannot serve is refused, not empty
            if memories or scopes:
                return SearchResult(hits=(), mode="fts" if mode == "auto" else mode, requested_mode=mode, order=order)
            raise InvalidInput("search needs at least one memory or scope", hint="pass memories=[...] or scopes=[...]")
        ordered_refs = tuple(refs[k] for k in sorted(refs))
        precedence = precedence and await self._tiered(ordered_refs)
        used_mode, fallback = await self._resolve_mode(mode, ordered_refs)
        channels: tuple[Literal["fts", "vector"], ...] = {
            "fts": ("fts",),
            "vector": ("vector",),
            "hybrid": ("fts", "vector"),
        }[used_mode]  # type: ignore[assignment]
        query_vector = None
        weights: dict[str, float] = {}
        if "vector" in channels:
            assert self.indexer is not None
            query_vector = await self.indexer.query_vector(query)
            weights = self.indexer.calibration.weights()
        request = SearchRequest(
            query=query,
            memories=ordered_refs,
            limit=MAX_LIMIT if order == "priority" or include_superseded or precedence else limit,
            channels=channels,
            query_vector=query_vector,
            weights=weights,
            exact=exact,
            kinds=tuple(kinds),
            tags=normalize_tags(tags),
            important=important,
            mandatory=mandatory,
        )
        hits = await self.backend.search(request)
        hits, shadowed = await self._graphit_pass(
            query,
            hits,
            ordered_refs,
            limit=limit,
            order=order,
            include_superseded=include_superseded,
            precedence=precedence,
            kinds=request.kinds,
            tags=request.tags,
            important=important,
            mandatory=mandatory,
        )
        return SearchResult(
            hits=hits, mode=used_mode, requested_mode=mode, fallback_reason=fallback, order=order, shadowed=shadowed
        )

    async def _resolve_mode(self, mode: SearchMode, refs: tuple[ArtifactRef, ...]) -> tuple[SearchMode, str | None]:
        if mode == "fts":
            return "fts", None
        reason = await self._vector_unavailable(refs)
        if mode in ("vector", "hybrid"):
            if reason is not None:
                raise CapabilityNotSupportedError(
                    mode,
                    f"{mode} search is unavailable: {reason}",
                    hint="use mode='fts' or 'auto', or run `memstone embed --backfill` to complete the vectors",
                )
            return mode, None
        if reason is not None:
            return "fts", reason
        return "hybrid", None

    async def _vector_unavailable(self, refs: tuple[ArtifactRef, ...]) -> str | None:
        """Why vector search cannot run on these Memories now (None when it can)."""
        caps = self.backend.capabilities
        if self.indexer is None:
            return "no embedding model is configured"
        if not caps.vector or caps.embedding_profile is None:
            return "this store has no vector projection"
        if caps.embedding_profile.canonical() != self.indexer.profile.canonical():
            return f"the loaded model ({self.indexer.profile.profile_id}) is not the store's profile"
        status = cast(dict[str, bool], await self.backend.read(VectorStatusQuery(memories=refs)))
        incomplete = sorted(m for m, ok in status.items() if not ok)
        if incomplete:
            return f"the vector projection of {', '.join(incomplete)} is incomplete"
        return None

    # ------------------------------------------------------------------ vectors
    async def backfill(self, *, batch: int = 64, progress: Progress | None = None) -> int:
        """Embed every active entry that has no vector yet; resumable (a rerun picks up what is missing)."""
        if self.indexer is None:
            raise CapabilityNotSupportedError("vector", "backfill needs an embedding model")
        done = 0
        total = await self.backend.vector_backlog()
        while True:
            pending = await self.backend.missing_vectors(batch)
            if not pending:
                break
            vectors = await self.indexer.vectors_for(pending)
            if not vectors:
                raise CapabilityNotSupportedError(
                    "vector", f"the embedding model failed: {self.indexer.last_error}", hint="fix the model, rerun"
                )
            done += await self.backend.put_vectors(vectors)
            if progress is not None:
                progress(done, max(total, done))
        return done

    async def reembed(self, model: EmbeddingModel, *, batch: int = 64, progress: Progress | None = None) -> int:
        """Migrate the store to another embedding model: writes pause, every active head is re-embedded into
        staging, completeness is checked, then one transaction swaps the projection and the recorded profile.

        An interrupted migration leaves the store on its old profile. Returns how many entries were embedded.
        """
        indexer = VectorIndexer(model)
        total = sum(h.active_count for h in await self.memories())
        await self.backend.migration("start", profile=model.profile)
        done = 0
        try:
            while True:
                pending = cast(list[EntryVersion], await self.backend.migration("unstaged", limit=batch))
                if not pending:
                    break
                vectors = await indexer.vectors_for(pending)
                if len(vectors) != len(pending):
                    raise CapabilityNotSupportedError(
                        "vector", f"the new model failed: {indexer.last_error}", hint="the store keeps its old profile"
                    )
                await self.backend.stage_vectors(vectors)
                done += len(pending)
                if progress is not None:
                    progress(done, max(total, done))
            await self.backend.migration("finish", profile=model.profile)
        except BaseException:
            await self.backend.migration("abort")
            raise
        self.indexer = indexer
        return done

    # ------------------------------------------------------------------ maintenance
    async def verify(self) -> VerifyReport:
        """Recheck every hash, manifest and projection. Reports damage; repairs nothing."""
        return await self.backend.maintain("verify")

    async def rebuild_projections(self) -> VerifyReport:
        """Rebuild every projection from authority (refused when authority itself is damaged)."""
        return await self.backend.maintain("rebuild")

    async def aclose(self) -> None:
        await self.backend.aclose()


def _memory_id(memory: MemoryLike | str) -> MemoryId:
    if isinstance(memory, (Revision, ArtifactRef)):
        return memory.memory_id
    return MemoryId(check_id(memory, what="memory", prefix="mem_"))


def _entry_id(entry: EntryLike | EntryId) -> EntryId:
    if isinstance(entry, (EntryVersion, MemoryHit)):
        return entry.entry_id
    return EntryId(check_id(entry, what="entry", prefix="ent_"))


class _Unset:
    """The type of :data:`UNSET`: "use the store's recorded embedding profile (or the default)"."""

    def __repr__(self) -> str:
        return "UNSET"


UNSET = _Unset()


@asynccontextmanager
async def open_service(
    url: str | None = None,
    *,
    clock: Callable[[], str] = utc_now,
    new_id: Callable[[str], str] = new_ulid,
    author: str | None = None,
    surface: Surface = "api",
    closed_kinds: Iterable[str] | None = None,
    embedding: EmbeddingModel | str | _Unset | None = UNSET,
) -> AsyncIterator[MemoryService]:
    """Open a store by URL (default ``MEMSTONE_URL`` or ``~/.memstone/memstone.db``) and yield its service.

    >>> async with open_service("sqlite:///memories.db") as svc:   # doctest: +SKIP
    ...     rev = await svc.remember(entries=[EntryInput(kind="fact", text="We deploy with uv.")])
    """
    from ..backends import open_store

    backend = await open_store(url)
    try:
        model = await _choose_model(backend, embedding)
    except BaseException:
        await backend.aclose()
        raise
    service = MemoryService(
        backend,
        clock=clock,
        new_id=new_id,
        author=author,
        surface=surface,
        closed_kinds=frozenset(closed_kinds) if closed_kinds is not None else None,
        embedding=model,
    )
    try:
        yield service
    finally:
        await backend.aclose()


async def _choose_model(
    backend: MemoryBackend, embedding: EmbeddingModel | str | _Unset | None
) -> EmbeddingModel | None:
    """The model a service runs with: the store's recorded profile, the default for a new store, or none.

    A model (or profile name) that differs from the store's recorded profile is refused by name.
    """
    if embedding is None:
        await backend.configure_embedding(None, record=False)
        return None
    from .. import embedding as models  # only when a model may be needed: the hook path pays nothing

    if isinstance(embedding, _Unset):
        recorded = backend.capabilities.embedding_profile
        name = recorded.profile_id if recorded is not None else models.default_profile_name()
        ok, why = models.available(name, versions=False)
        if not ok or name.startswith("openai:"):
            # Trigger: the store's model is not installed here (or needs server settings).
            # Why: reads and writes must keep working; writes commit with FTS only.
            # Outcome: no model; auto search falls back to FTS and says why.
            log.warning("embedding model %s unavailable (%s); running without vectors", name, why)
            await backend.configure_embedding(None, record=False)
            return None
        model = models.load_model(name)
    elif isinstance(embedding, str):
        model = models.load_model(embedding)
    else:
        model = embedding
    await backend.configure_embedding(model.profile, record=True)
    return model
