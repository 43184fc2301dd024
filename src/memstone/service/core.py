"""The service core: the open backend, the clock and ids, the model, the actor's policy, the caches, exact reads,
scopes, the kind policy and the one write path (``_commit``). Every component of the service is built on it.
"""

from __future__ import annotations

import asyncio
import copy
import datetime as _dt
import logging
import random
import time
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import replace
from typing import Literal, TypeVar

from ..domain.canonical import SOURCE_CONTENT_TAG, tagged_sha256
from ..domain.errors import (
    ArtifactNotFoundError,
    InvalidCitationError,
    InvalidInput,
    NotFound,
    ProfileMismatchError,
    RevisionConflictError,
    StaleEntryError,
    StoreMigratingError,
)
from ..domain.ids import EntryId, EntryVersionId, MemoryId, SourceId, check_id, new_ulid
from ..domain.model import (
    ArtifactRef,
    Citation,
    EntryContent,
    EntryVersion,
    HistoryItem,
    ManifestEntry,
    MemoryHit,
    Revision,
    RevisionChanges,
    Source,
    Surface,
    VerifyReport,
    VersionStatus,
)
from ..domain.records import (
    Record,
)
from ..domain.render import render_markdown
from ..domain.rules import (
    check_ref,
    check_revision,
    normalize_kind,
    normalize_source_ids,
    normalize_tags,
    normalize_text,
)
from ..domain.scopes import canonical_scope
from ..indexing import VectorIndexer
from ..ports import (
    CandidatePipeline,
    EmbeddingModel,
    HeadQuery,
    KindsQuery,
    ManifestQuery,
    MemoriesQuery,
    MemoryBackend,
    RevisionQuery,
    RevisionsQuery,
    ScopeQuery,
    SourcesQuery,
    VersionsQuery,
    WritePlan,
)
from .policy import Actor, Policy, UserOrg, refuse_secrets, refuse_secrets_in_plan
from .routes import EmbeddingRoutes

MemoryLike = Revision | ArtifactRef
EntryLike = EntryVersion | MemoryHit | Record | str
RememberMode = Literal["append", "extract", "auto"]
Order = Literal["relevance", "priority"]
MAX_LIMIT = 1000
WRITE_RETRIES = 64  # the one retry policy: attempts of a write that re-reads the head after a lost race
T = TypeVar("T")
log = logging.getLogger("memstone.service")


def utc_now() -> str:
    """The default clock: ISO-8601 UTC with milliseconds."""
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _memory_id(memory: MemoryLike | str) -> MemoryId:
    if isinstance(memory, Revision):
        return memory.memory_id
    if isinstance(memory, ArtifactRef):  # a caller's: its fields are checked like any id (tests/fuzz)
        return check_ref(memory, "memory").memory_id
    return MemoryId(check_id(memory, what="memory", prefix="mem_"))


def _entry_id(entry: EntryLike | EntryId) -> EntryId:
    if isinstance(entry, (EntryVersion, MemoryHit, Record)):
        return entry.entry_id
    return EntryId(check_id(entry, what="entry", prefix="ent_"))


def flag_reason(old: EntryContent, new: EntryContent) -> str | None:
    """``"flag"`` when a revision changes only the important/mandatory flags (Graphit: flagging is a version)."""
    if (old.important, old.mandatory) == (new.important, new.mandatory):
        return None
    same = replace(new, important=old.important, mandatory=old.mandatory)
    return "flag" if same == old else None


class ServiceCore:
    """What every component shares: the backend, clock, ids, model, policy and caches; reads and the write path."""

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
        candidates: CandidatePipeline | None = None,
    ) -> None:
        self.backend = backend
        self.candidates = candidates
        self._clock = clock
        self._new_id = new_id
        self._author = author
        self._surface: Surface = surface
        self._closed_kinds = closed_kinds
        self.indexer = VectorIndexer(embedding) if embedding is not None else None
        self.routes = EmbeddingRoutes()  # the models of organizations with their own embedding profile
        self.migration_wait_s = 600.0
        self.policy = Policy(Actor.local(author=author, surface=surface))  # the grant rule of this core's actor
        self._kind_cache: tuple[bool, frozenset[str] | None] | None = None
        self._bound: dict[MemoryId, str] | None = None

    def acting(self, actor: Actor, *, user_org: UserOrg | None = None) -> ServiceCore:
        """A core over the same backend, model and caches that acts as ``actor``."""
        view = copy.copy(self)
        view._author = actor.author
        view._surface = actor.surface
        view.policy = Policy(actor, user_org=user_org)
        return view

    @property
    def actor(self) -> Actor:
        return self.policy.actor

    async def retrying(self, attempt: Callable[[], Awaitable[T]]) -> T:
        """Run ``attempt`` (which re-reads the head it writes on) until it does not lose a race.

        Trigger: a RevisionConflictError that is not a StaleEntryError — another writer moved the Memory's head
        between this attempt's read and its commit. Why: the write names no base the caller chose, and each lost
        race follows another writer's success, so retrying makes progress; a short random pause breaks lockstep
        among many writers. Outcome: up to ``WRITE_RETRIES`` attempts, then the conflict is raised. A change to the
        very entry an optimistic update read (StaleEntryError) is never retried.
        """
        for n in range(WRITE_RETRIES):
            try:
                return await attempt()
            except StaleEntryError:
                raise
            except RevisionConflictError:
                if n == WRITE_RETRIES - 1:
                    raise
                await asyncio.sleep(random.uniform(0, 0.002 * min(n + 1, 10)))
        raise AssertionError("unreachable")

    async def scope_of(self, memory_id: MemoryId) -> str | None:
        """The scope a Memory is bound to (None: unbound). Bindings are permanent."""
        return (await self._scopes_of([memory_id])).get(memory_id)

    async def _may(self, memory_id: MemoryId, need: Literal["read", "write"], *, hidden: str) -> None:
        """The grant rule for a Memory found by id (NotFound ``hidden`` when the actor cannot read it)."""
        if self.policy.actor.trusted:
            return
        scope = (await self._scopes_of([memory_id])).get(memory_id)
        await self.policy.require_bound(scope, need, hidden=hidden)

    async def head(self, memory: MemoryLike | str) -> Revision:
        """The current Revision of a Memory."""
        memory_id = _memory_id(memory)
        head = await self.backend.read(HeadQuery(memory_id=memory_id))
        if head is None:
            raise ArtifactNotFoundError(f"no memory {memory_id}", hint="list memories with `memstone memories`")
        await self._may(memory_id, "read", hidden=f"no memory {memory_id}")
        return head

    async def revision(self, memory: MemoryLike | str, revision: int | None = None) -> Revision:
        """An exact Revision (default: the one ``memory`` names, or the head)."""
        memory_id = _memory_id(memory)
        number = revision if revision is not None else getattr(memory, "revision", None)
        if number is None:
            return await self.head(memory_id)
        number = check_revision(number)
        found = await self.backend.read(RevisionQuery(ref=ArtifactRef(memory_id=memory_id, revision=number)))
        if found is None:
            raise ArtifactNotFoundError(f"no revision {number} of {memory_id}")
        await self._may(memory_id, "read", hidden=f"no memory {memory_id}")
        return found

    async def memories(self) -> tuple[Revision, ...]:
        """The head Revision of every Memory in the store (that the actor may read)."""
        heads = await self.backend.read(MemoriesQuery())
        if self.policy.actor.trusted:
            return tuple(heads)
        scope_of = await self._scopes_of([h.memory_id for h in heads])
        return tuple([h for h in heads if await self.policy.readable(scope_of.get(h.memory_id))])

    async def manifest(self, memory: MemoryLike | str) -> dict[EntryId, ManifestEntry]:
        """The whole manifest of a Revision (default: the head): entry → version, hash, state."""
        rev = await self.revision(memory)
        return dict(await self.backend.read(ManifestQuery(ref=rev.ref)))

    async def entries(self, memory: MemoryLike | str, *, include_inactive: bool = False) -> list[EntryVersion]:
        """The current version of every (active) entry of a Revision, in entry id order."""
        rev = await self.revision(memory)
        manifest = await self.manifest(rev)
        wanted = [m for m in manifest.values() if include_inactive or m.state == "active"]
        wanted.sort(key=lambda m: m.entry_id.encode("utf-8"))
        out: list[EntryVersion] = []
        for i in range(0, len(wanted), 500):
            ids = tuple(m.entry_version_id for m in wanted[i : i + 500])
            out.extend(await self.backend.read(VersionsQuery(memory_id=rev.memory_id, version_ids=ids)))
        return out

    async def get(self, entry: EntryLike, *, memory: MemoryLike | str | None = None) -> EntryVersion:
        """An entry's version: the one current at ``memory`` (default: its head), or the exact version given."""
        if isinstance(entry, str) and entry.startswith("ver_"):
            found = await self.backend.read(VersionsQuery(memory_id=None, version_ids=(EntryVersionId(entry),)))
            if not found:
                raise NotFound(f"no entry version {entry}")
            await self._may(found[0].memory_id, "read", hidden=f"no entry version {entry}")
            return found[0]
        entry_id = _entry_id(entry)
        versions = await self.backend.read(VersionsQuery(memory_id=None, entry_id=entry_id))
        if not versions:
            raise NotFound(f"no entry {entry_id}", hint="search or list entries to find an id")
        await self._may(versions[0].memory_id, "read", hidden=f"no entry {entry_id}")
        rev = await self.revision(memory if memory is not None else versions[0].memory_id)
        manifest = await self.backend.read(ManifestQuery(ref=rev.ref, entry_ids=(entry_id,)))
        m = manifest.get(entry_id)
        if m is None:
            raise NotFound(f"entry {entry_id} is not in {rev.ref}")
        for v in versions:
            if v.entry_version_id == m.entry_version_id:
                return v
        # Trigger: another writer revised the entry between the two reads above (the head is newer than the
        # version list). Why: the head's version exists — it was committed before the head that names it.
        # Outcome: read that exact version; only a version the head names but authority lacks is missing.
        found = await self.backend.read(VersionsQuery(memory_id=rev.memory_id, version_ids=(m.entry_version_id,)))
        if found:
            return found[0]
        raise NotFound(f"version {m.entry_version_id} of {entry_id} is missing")

    async def history(self, entry: EntryLike, *, reasons: bool = False) -> tuple[HistoryItem, ...]:
        """Every version of an entry, oldest first, with previous/next links and current/superseded/deleted;
        ``reasons=True`` also reads why each version was written (its Revision's Change)."""
        entry_id = _entry_id(entry)
        versions = await self.backend.read(VersionsQuery(memory_id=None, entry_id=entry_id))
        if not versions:
            raise NotFound(f"no entry {entry_id}")
        await self._may(versions[0].memory_id, "read", hidden=f"no entry {entry_id}")
        head = await self.head(versions[0].memory_id)
        manifest = await self.backend.read(ManifestQuery(ref=head.ref, entry_ids=(entry_id,)))
        if entry_id in manifest and manifest[entry_id].entry_version_id not in {v.entry_version_id for v in versions}:
            # Revised between the two reads: read the chain again, now at least as new as the head.
            versions = await self.backend.read(VersionsQuery(memory_id=None, entry_id=entry_id))
        state = manifest[entry_id].state if entry_id in manifest else "inactive"
        from ..domain.history import revision_runs, version_reasons  # history reads only: not on a hook's path

        why: dict[EntryVersionId, str | None] = {}
        for mid, first, last in revision_runs(versions) if reasons else ():  # a range read per run, not per version
            why |= version_reasons(await self.backend.read(RevisionsQuery(memory_id=mid, first=first, last=last)))
        purged = any(v.content.purged_hash is not None for v in versions)  # read tombstones only when there are
        tombs = {t.entry_version_id: t for t in await self.backend.tombstones(entry_id)} if purged else {}
        out = []
        for i, v in enumerate(versions):
            nxt = versions[i + 1].entry_version_id if i + 1 < len(versions) else None
            if nxt is not None:
                status: VersionStatus = "superseded"
            else:
                status = "current" if state == "active" else "deleted"
            out.append(
                HistoryItem(
                    version=v,
                    previous_version_id=v.previous_version_id,
                    next_version_id=nxt,
                    status=status,
                    reason=why.get(v.entry_version_id),
                    purge=tombs.get(v.entry_version_id),
                )
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
        if not isinstance(citation, Citation):
            raise InvalidInput(f"verify_citation takes a Citation, got {type(citation).__name__}")
        check_ref(citation.memory_ref)  # found by tests/fuzz: unchecked fields reached the engine
        check_id(citation.entry_id, what="entry", prefix="ent_")
        check_id(citation.entry_version_id, what="entry version", prefix="ver_")
        if citation.entry_content_hash is not None and not isinstance(citation.entry_content_hash, str):
            raise InvalidInput("entry_content_hash must be a string or None")
        await self._may(citation.memory_ref.memory_id, "read", hidden=f"no memory {citation.memory_ref.memory_id}")
        (version,) = await self.backend.expand([(citation.memory_ref, citation.entry_id, citation.entry_version_id)])
        if citation.entry_content_hash is not None and citation.entry_content_hash != version.entry_content_hash:
            raise InvalidCitationError(f"citation hash does not match version {citation.entry_version_id}")
        return version

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
        return tuple(await self.backend.read(SourcesQuery(source_ids=tuple(normalize_source_ids(ids)))))

    async def resolve(self, scope: str) -> Revision | None:
        """The head of the Memory bound to a scope URI, or None when the scope is unbound."""
        bound = await self.bound(scope)
        return None if bound is None else await self.head(bound)

    async def bound(self, scope: str) -> MemoryId | None:
        """The Memory bound to a scope URI (its head not read), or None when the scope is unbound."""
        uri = canonical_scope(scope)
        await self.policy.require_named(uri, "read")
        found = await self.backend.read(ScopeQuery(scope=uri))
        if not found:
            return None
        memory_id = MemoryId(found[0][1])
        await self._may(memory_id, "read", hidden=f"no memory {memory_id}")
        return memory_id

    async def scopes(self) -> tuple[tuple[str, MemoryId], ...]:
        """Every scope binding the actor may read: (scope URI, memory id)."""
        found = await self._bindings()
        if self.policy.actor.trusted:
            return found
        return tuple([(s, m) for s, m in found if await self.policy.readable(s)])

    async def _bindings(self) -> tuple[tuple[str, MemoryId], ...]:
        found = await self.backend.read(ScopeQuery(scope=None))
        return tuple((s, m) for s, m, _ in found)

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

    async def _commit(self, plan: WritePlan, *, rebase: bool = False) -> Revision:
        """The one write path: the policy (secrets, the write grant), vectors, then the unit of work.

        ``rebase=True`` is a per-entry compare-and-swap: when the head moved but no entry this plan changes did,
        the plan is moved onto the new head and committed (see :meth:`_rebased`); otherwise the conflict stands.
        """
        refuse_secrets_in_plan(plan)
        if not self.policy.actor.trusted:
            if plan.bind_scope is not None and plan.base_revision == 0:
                await self.policy.require_named(plan.bind_scope, "write")
            else:
                await self._may(plan.memory_id, "write", hidden=f"no memory {plan.memory_id}")
        plan = await self._with_vectors(plan)
        deadline = time.monotonic() + self.migration_wait_s
        rebases = refreshed = 0
        while True:
            try:
                async with self.backend.begin() as uow:
                    return await uow.commit(plan)
            except ProfileMismatchError:
                # Trigger: the Memory's org recorded another embedding profile since this process last looked.
                # Why: the backend refused the vectors (nothing was stored); the write itself is still good.
                # Outcome: read the orgs' profiles again and embed with the right model, once.
                if refreshed or not plan.vectors:
                    raise
                refreshed += 1
                await self.backend.org_profiles()
                plan = await self._with_vectors(replace(plan, vectors={}))
            except RevisionConflictError:
                if not rebase or plan.base_revision == 0 or rebases >= WRITE_RETRIES:
                    raise
                rebases += 1
                plan = await self._rebased(plan)
            except StoreMigratingError:
                # Trigger: a model migration (memstone reembed) holds writes.
                # Why: every write must land on the new profile's projection, not be lost or half-indexed.
                # Outcome: wait for the migration to finish, then commit (vectors are recomputed).
                if time.monotonic() > deadline:
                    raise
                await asyncio.sleep(0.2)
                plan = await self._with_vectors(replace(plan, vectors={}))

    async def _rebased(self, plan: WritePlan) -> WritePlan:
        """``plan`` moved onto the Memory's current head, if every entry it changes is as the plan found it.

        Trigger: another writer committed to the same Memory between this plan's read and its commit. Why: a
        write to other entries of the Memory does not make this one stale (HTTP PATCH and MCP update promise a
        per-entry check); re-reading everything would let a busy Memory starve the write. Outcome: the same
        versions, on the new head; a change to one of its entries raises RevisionConflictError.
        """
        head = await self.backend.read(HeadQuery(memory_id=plan.memory_id))
        if head is None:
            raise RevisionConflictError(plan.memory_id, expected=plan.base_revision)
        ids = tuple(c.entry_id for c in plan.changes)
        now = await self.backend.read(ManifestQuery(ref=head.ref, entry_ids=ids))
        for c in plan.changes:
            m = now.get(c.entry_id)
            fine = {
                "add": m is None,
                "revise": m is not None and m.state == "active" and m.entry_version_id == c.from_entry_version_id,
                "deactivate": m is not None and m.state == "active" and m.entry_version_id == c.from_entry_version_id,
                "reactivate": m is not None and m.state == "inactive" and m.entry_version_id == c.to_entry_version_id,
            }[c.op]
            if not fine:
                raise RevisionConflictError(plan.memory_id, expected=plan.base_revision, actual=head.revision)
        versions = tuple(replace(v, created_in_revision=head.revision + 1) for v in plan.new_versions)
        return replace(plan, base_revision=head.revision, new_versions=versions)

    async def _with_vectors(self, plan: WritePlan) -> WritePlan:
        """Embed, outside the transaction, every version this write projects, with its route's model (routes.py)."""
        return await self.routes.with_vectors(self, plan)

    async def verify(self) -> VerifyReport:
        """Recheck every hash, manifest and projection. Reports damage; repairs nothing."""
        return await self.backend.maintain("verify")

    async def rebuild_projections(self) -> VerifyReport:
        """Rebuild every projection from authority (refused when authority itself is damaged)."""
        return await self.backend.maintain("rebuild")

    async def aclose(self) -> None:
        await self.backend.aclose()

    async def kinds(self) -> frozenset[str] | None:
        """The store's closed kind set (``None``: open). Fixed when the store is created, by its first writer.

        A service opened with ``closed_kinds`` on a store that was created with another set (or open) is refused
        by name before anything is written.
        """
        if self._kind_cache is None:
            wanted = self._closed_kinds
            recorded, stored = await self.backend.read(KindsQuery())
            if not recorded:
                async with self.backend.begin() as uow:
                    stored = await uow.record_kinds(tuple(sorted(wanted)) if wanted is not None else None)
            policy = frozenset(stored) if stored is not None else None
            if wanted is not None and policy != frozenset(wanted):
                raise InvalidInput(
                    f"this store was created with {_describe(policy)}, not the closed set {', '.join(sorted(wanted))}",
                    hint="a store's kind set is fixed at creation; open it without closed_kinds, or use a new store",
                )
            self._kind_cache = (True, policy)
        return self._kind_cache[1]

    async def _check_kind(self, kind: str) -> str:
        return normalize_kind(kind, closed_kinds=await self.kinds())

    async def _scope_map(self) -> dict[MemoryId, str]:
        found = {m: s for s, m in await self._bindings()}
        self._bound = dict(found)
        return found

    async def _scopes_of(self, memory_ids: Sequence[MemoryId]) -> dict[MemoryId, str]:
        """Scope of each Memory that has one. Bindings are permanent, so known ones are cached; an unknown
        Memory (perhaps bound since) re-reads the bindings."""
        if self._bound is None or any(m not in self._bound for m in memory_ids):
            await self._scope_map()
        assert self._bound is not None
        return {m: self._bound[m] for m in memory_ids if m in self._bound}

    async def _select(
        self, scopes: Sequence[str], memories: Sequence[Revision | ArtifactRef | str], *, what: str
    ) -> tuple[list[ArtifactRef], dict[MemoryId, str]]:
        """The exact Revisions named by ``memories`` (a bare id means its head) and ``scopes`` (their heads)."""
        if isinstance(scopes, str) or isinstance(memories, str):
            raise InvalidInput("scopes= and memories= take lists, not one string")
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
        if not refs and not scopes and not memories:
            raise InvalidInput(f"{what} needs at least one memory or scope", hint="pass memories=[...] or scopes=[...]")
        return [refs[k] for k in sorted(refs)], await self._scope_map()

    async def _manifest_entry(self, base: Revision, eid: EntryId) -> ManifestEntry:
        found = await self.backend.read(ManifestQuery(ref=base.ref, entry_ids=(eid,)))
        if eid not in found:
            raise InvalidInput(f"entry {eid} is not in {base.memory_id}")
        return found[eid]

    async def _base_of(self, memory: Revision | ArtifactRef) -> Revision:
        base = await self._base(memory)
        if base is None:  # found by bench/bench_fuzz.py: forget(None, …) was an AssertionError
            raise InvalidInput("name the Memory to change", hint="pass its head: await service.head(memory_id)")
        return base

    def cite_record(self, record: Record) -> Citation:
        """The exact Handoff anchor of a catalogue record (memory ref + entry id + entry version id + hash)."""
        return Citation(
            memory_ref=record.memory_ref,
            entry_id=record.entry_id,
            entry_version_id=record.entry_version_id,
            entry_content_hash=record.version.entry_content_hash,
        )


def _describe(policy: frozenset[str] | None) -> str:
    return "an open kind set" if policy is None else f"the closed kind set {', '.join(sorted(policy))}"


__all__ = [
    "EntryLike",
    "HistoryItem",
    "MemoryLike",
    "ServiceCore",
    "flag_reason",
    "utc_now",
]
