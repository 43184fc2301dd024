"""The record surface of Graphit and Xema on top of the RFC core, as use cases of :class:`MemoryService`.

Scopes and bindings, flags, slugs and aliases, relations, catalogues, the Graphit search pass (priority order,
archived versions, precedence), the initial recall protocol, and history you can use (diff, revert, blame).
``MemoryService`` inherits these methods; they use only its public reads and its one write path (``_commit``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Literal, cast

from ..domain.errors import AlreadyExists, InvalidInput, NotFound
from ..domain.history import BlameField, EntryDiff, blame_fields, diff_versions
from ..domain.ids import EntryId, EntryVersionId, MemoryId, check_id
from ..domain.model import (
    ArtifactRef,
    Change,
    Citation,
    EntryContent,
    EntryState,
    EntryVersion,
    ManifestEntry,
    MemoryHit,
    Provenance,
    Relation,
    Revision,
    Shadowed,
)
from ..domain.records import (
    CrossLink,
    Omission,
    RecallBundle,
    Record,
    budget_note,
    cost,
    order_records,
    priority_sorted,
    recall_text,
)
from ..domain.rules import normalize_kind, normalize_relation_kind, normalize_slug, normalize_tags
from ..domain.scopes import SlugHolder, canonical_scope, parse_scope, shadowing
from ..domain.search import RRF_K, candidate_depth
from ..ports import (
    ArchiveQuery,
    CatalogueQuery,
    KindsQuery,
    LinksQuery,
    LiveSlugsQuery,
    ManifestQuery,
    SlugMatch,
    SlugQuery,
    VersionsQuery,
    WritePlan,
)

if TYPE_CHECKING:
    from .exchange import ExportReport, ImportReport
    from .facade import MemoryService

Order = Literal["relevance", "priority"]
_VERSION_REF = re.compile(r"^(ent_[A-Za-z0-9]+)@(\d+)$")
_UNKNOWN: tuple[bool, frozenset[str] | None] | None = None


def _memory_id(memory: Revision | ArtifactRef | str) -> MemoryId:
    if isinstance(memory, (Revision, ArtifactRef)):
        return memory.memory_id
    return MemoryId(check_id(memory, what="memory", prefix="mem_"))


def _entry_id(entry: EntryVersion | MemoryHit | Record | str) -> EntryId:
    if isinstance(entry, (EntryVersion, MemoryHit, Record)):
        return entry.entry_id
    return EntryId(check_id(entry, what="entry", prefix="ent_"))


def flag_reason(old: EntryContent, new: EntryContent) -> str | None:
    """``"flag"`` when a revision changes only the important/mandatory flags (Graphit: flagging is a version)."""
    if (old.important, old.mandatory) == (new.important, new.mandatory):
        return None
    same = replace(new, important=old.important, mandatory=old.mandatory)
    return "flag" if same == old else None


class RecordsMixin:
    """Scopes, records, catalogues, precedence, recall and history. Mixed into :class:`MemoryService`."""

    _kind_cache: tuple[bool, frozenset[str] | None] | None = _UNKNOWN
    _bound: dict[MemoryId, str] | None = None

    def _svc(self) -> MemoryService:
        return cast("MemoryService", self)

    # ------------------------------------------------------------------ kinds (closed-kind mode)
    async def kinds(self) -> frozenset[str] | None:
        """The store's closed kind set (``None``: open). Fixed when the store is created, by its first writer.

        A service opened with ``closed_kinds`` on a store that was created with another set (or open) is refused
        by name before anything is written.
        """
        svc = self._svc()
        if self._kind_cache is None:
            wanted = svc._closed_kinds
            recorded, stored = cast(tuple[bool, tuple[str, ...] | None], await svc.backend.read(KindsQuery()))
            if not recorded:
                async with svc.backend.begin() as uow:
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

    # ------------------------------------------------------------------ scopes
    async def bind(self, scope: str, memory: Revision | ArtifactRef | str) -> Revision:
        """Bind an unbound scope to an existing, unbound Memory (a binding is permanent). Returns its head.

        >>> await svc.bind("memstone://orgs/acme", rev)   # doctest: +SKIP
        """
        svc = self._svc()
        uri = canonical_scope(scope)
        await svc._policy.require_named(uri, "write")
        head = await svc.head(memory)
        await svc._may(head.memory_id, "write", hidden=f"no memory {head.memory_id}")
        async with svc.backend.begin() as uow:
            ok = await uow.bind(uri, head.memory_id, svc._clock())
        if not ok:
            current = await svc.resolve(uri)
            if current is not None:
                raise AlreadyExists(
                    f"scope {uri} is already bound to {current.memory_id}",
                    hint="a scope maps to exactly one Memory, and bindings are permanent",
                )
            other = (await self._scope_map()).get(head.memory_id)
            raise AlreadyExists(f"{head.memory_id} is already bound to {other}", hint="a Memory has one scope")
        return head

    async def _scope_map(self) -> dict[MemoryId, str]:
        found = {m: s for s, m in await self._svc()._bindings()}
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
        svc = self._svc()
        if isinstance(scopes, str) or isinstance(memories, str):
            raise InvalidInput("scopes= and memories= take lists, not one string")
        refs: dict[MemoryId, ArtifactRef] = {}
        for m in memories:
            ref = (await svc.head(m)).ref if isinstance(m, str) else (m.ref if isinstance(m, Revision) else m)
            if ref.memory_id in refs and refs[ref.memory_id] != ref:
                raise InvalidInput(f"{ref.memory_id} is named at two different revisions")
            await svc._may(ref.memory_id, "read", hidden=f"no memory {ref.memory_id}")
            refs[ref.memory_id] = ref
        for scope in scopes:
            bound = await svc.resolve(scope)
            if bound is not None:
                refs.setdefault(bound.memory_id, bound.ref)
        if not refs and not scopes and not memories:
            raise InvalidInput(f"{what} needs at least one memory or scope", hint="pass memories=[...] or scopes=[...]")
        return [refs[k] for k in sorted(refs)], await self._scope_map()

    async def _tiered(self, refs: Sequence[ArtifactRef]) -> bool:
        """Whether the selection spans more than one tier (so precedence can shadow anything)."""
        if len(refs) < 2:
            return False
        scope_of = await self._scopes_of([r.memory_id for r in refs])
        return len({parse_scope(scope_of[r.memory_id]).tier for r in refs if r.memory_id in scope_of}) > 1

    async def _shadows(
        self, refs: Sequence[ArtifactRef], scope_of: dict[MemoryId, str]
    ) -> dict[EntryId, tuple[SlugHolder, SlugHolder]]:
        """Precedence among the selected Memories: shadowed entry → (its holder, the most specific shadower)."""
        tiers = {parse_scope(scope_of[r.memory_id]).tier for r in refs if r.memory_id in scope_of}
        if len(tiers) < 2:
            return {}
        found = cast(
            list[tuple[MemoryId, EntryId, str, str]],
            await self._svc().backend.read(LiveSlugsQuery(memory_ids=tuple(r.memory_id for r in refs))),
        )
        holders = {
            eid: SlugHolder(
                scope=parse_scope(scope_of[mid]) if mid in scope_of else None, kind=kind, slug=slug, entry_id=eid
            )
            for mid, eid, kind, slug in found
        }
        return {eid: (holders[eid], winner) for eid, winner in shadowing(holders.values()).items()}

    # ------------------------------------------------------------------ records: identity, flags, slugs, relations
    async def lookup(
        self, where: str | Revision | ArtifactRef, *, kind: str, slug: str, include_inactive: bool = False
    ) -> Record:
        """Xema identity: the entry a (scope, kind, slug) names. An old slug redirects to the renamed entry.

        ``where`` is a scope URI or a Memory. A live holder of the slug wins; otherwise the entry that held it most
        recently (an alias left by a rename). Inactive entries are found only with ``include_inactive``.
        """
        svc = self._svc()
        clean_slug = normalize_slug(slug)
        assert clean_slug is not None
        if isinstance(where, str) and not where.startswith("mem_"):
            head = await svc.resolve(where)
            if head is None:
                raise NotFound(f"scope {canonical_scope(where)} has no Memory yet")
        else:
            head = await svc.head(where)
        matches = cast(
            list[SlugMatch],
            await svc.backend.read(SlugQuery(memory_ids=(head.memory_id,), kind=kind.strip(), slug=clean_slug)),
        )
        usable = [m for m in matches if include_inactive or m.state == "active"]
        live = [m for m in usable if m.live]
        pick = (live or sorted(usable, key=lambda m: (-m.held_in_revision, m.entry_id.encode("utf-8"))))[:1]
        if not pick:
            raise NotFound(
                f"no {'' if include_inactive else 'live '}{kind} entry with slug {clean_slug!r} in {head.memory_id}",
                hint="list the scope's records with `memstone list`",
            )
        (found,) = await self.records([pick[0].entry_id], memory=head)
        return found

    async def records(
        self, entries: Sequence[str | EntryVersion | MemoryHit], *, memory: Revision | ArtifactRef | None = None
    ) -> tuple[Record, ...]:
        """Entries as records (their version current at ``memory``, default their Memory's head)."""
        svc = self._svc()
        scope_of = await self._scope_map()
        out: list[Record] = []
        for entry in entries:
            eid = _entry_id(entry)
            version = await svc.get(eid, memory=memory)
            rev = await svc.revision(memory if memory is not None else version.memory_id)
            m = await self._manifest_entry(rev, eid)
            chain = cast(list[EntryVersion], await svc.backend.read(VersionsQuery(memory_id=None, entry_id=eid)))
            out.append(
                Record(
                    memory_ref=rev.ref,
                    version=version,
                    state=m.state,
                    created_at=chain[0].provenance.created_at,
                    scope=scope_of.get(rev.memory_id),
                )
            )
        return tuple(out)

    async def _manifest_entry(self, base: Revision, eid: EntryId) -> ManifestEntry:
        found = cast(
            dict[EntryId, ManifestEntry],
            await self._svc().backend.read(ManifestQuery(ref=base.ref, entry_ids=(eid,))),
        )
        if eid not in found:
            raise InvalidInput(f"entry {eid} is not in {base.memory_id}")
        return found[eid]

    async def _live_version(self, base: Revision, entry: str | EntryVersion | MemoryHit | Record) -> EntryVersion:
        eid = _entry_id(entry)
        m = await self._manifest_entry(base, eid)
        if m.state != "active":
            raise InvalidInput(f"entry {eid} is inactive", hint="reactivate it first, then change it")
        if isinstance(entry, (EntryVersion, MemoryHit, Record)) and entry.entry_version_id != m.entry_version_id:
            raise InvalidInput(
                f"stale entry: {entry.entry_version_id} is not the current version of {eid}",
                hint="read the entry again and change its current version",
            )
        (v,) = cast(
            list[EntryVersion],
            await self._svc().backend.read(VersionsQuery(memory_id=base.memory_id, version_ids=(m.entry_version_id,))),
        )
        return v

    async def _revise(
        self,
        base: Revision,
        revisions: Sequence[tuple[EntryVersion, EntryContent, str | None]],
        *,
        deactivate: Sequence[tuple[EntryId, EntryVersionId, str | None]] = (),
        surface: Literal["workflow"] | None = None,
    ) -> Revision:
        """Commit new versions of live entries (and deactivations) in one Revision; identical content is a no-op."""
        svc = self._svc()
        now = svc._clock()
        provenance = Provenance(author=svc._author, surface=surface or svc._surface, created_at=now)
        changes: list[Change] = []
        versions: list[EntryVersion] = []
        for prev, content, reason in revisions:
            if content.content_hash == prev.entry_content_hash:
                continue
            await self._check_kind(content.kind)
            vid = EntryVersionId(svc._new_id("ver_"))
            versions.append(
                EntryVersion(
                    memory_id=base.memory_id,
                    entry_id=prev.entry_id,
                    entry_version_id=vid,
                    version=prev.version + 1,
                    previous_version_id=prev.entry_version_id,
                    content=content,
                    entry_content_hash=content.content_hash,
                    created_in_revision=base.revision + 1,
                    provenance=provenance,
                )
            )
            changes.append(
                Change(
                    op="revise",
                    entry_id=prev.entry_id,
                    from_entry_version_id=prev.entry_version_id,
                    to_entry_version_id=vid,
                    reason=reason,
                )
            )
        for eid, vid, reason in deactivate:
            changes.append(
                Change(
                    op="deactivate", entry_id=eid, from_entry_version_id=vid, to_entry_version_id=None, reason=reason
                )
            )
        if not changes:
            return base
        plan = WritePlan(
            memory_id=base.memory_id,
            base_revision=base.revision,
            changes=tuple(changes),
            new_versions=tuple(versions),
            author=provenance.author,
            surface=provenance.surface,
            created_at=now,
        )
        return await svc._commit(plan)

    async def _base_of(self, memory: Revision | ArtifactRef) -> Revision:
        base = await self._svc()._base(memory)
        assert base is not None
        return base

    async def flag(
        self,
        memory: Revision | ArtifactRef,
        entry: str | EntryVersion | MemoryHit | Record,
        *,
        important: bool | None = None,
        mandatory: bool | None = None,
    ) -> Revision:
        """Set or clear ``important``/``mandatory`` (independently). A change is a new version, reason ``flag``.

        >>> rev = await svc.flag(head, "ent_…", mandatory=True)   # doctest: +SKIP
        """
        if important is None and mandatory is None:
            raise InvalidInput("flag needs important=… or mandatory=…")
        for name, value in (("important", important), ("mandatory", mandatory)):
            if value is not None and not isinstance(value, bool):
                raise InvalidInput(f"{name} must be true or false, got {value!r}")
        base = await self._base_of(memory)
        prev = await self._live_version(base, entry)
        c = prev.content
        new = replace(
            c,
            important=c.important if important is None else important,
            mandatory=c.mandatory if mandatory is None else mandatory,
        )
        return await self._revise(base, [(prev, new, "flag")])

    async def rename(
        self, memory: Revision | ArtifactRef, entry: str | EntryVersion | MemoryHit | Record, slug: str | None
    ) -> Revision:
        """Give an entry a new slug (``None`` clears it). Reads of the old slug keep redirecting to the entry."""
        base = await self._base_of(memory)
        prev = await self._live_version(base, entry)
        return await self._revise(base, [(prev, replace(prev.content, slug=normalize_slug(slug)), "rename")])

    async def relate(
        self,
        memory: Revision | ArtifactRef,
        source: str | EntryVersion | MemoryHit | Record,
        target: str | EntryVersion | MemoryHit | Record,
        kind: str = "relates-to",
        *,
        deactivate_target: bool = False,
    ) -> Revision:
        """Link ``source`` → ``target`` (``supersedes``, ``clarifies``, ``relates-to`` or any kebab-case kind).

        The relation is content: a new version of ``source`` (reason ``relate``). With ``kind="supersedes"`` and
        ``deactivate_target=True`` the target (in the same Memory) becomes inactive in the same Revision.
        """
        svc = self._svc()
        relation_kind = normalize_relation_kind(kind)
        if deactivate_target and relation_kind != "supersedes":
            raise InvalidInput("only a supersedes relation can deactivate its target", hint="use kind='supersedes'")
        base = await self._base_of(memory)
        prev = await self._live_version(base, source)
        target_id = _entry_id(target)
        if target_id == prev.entry_id:
            raise InvalidInput("an entry cannot relate to itself")
        target_version = await svc.get(target_id)  # NotFound when it does not exist anywhere in the store
        deactivate: list[tuple[EntryId, EntryVersionId, str | None]] = []
        if deactivate_target:
            if target_version.memory_id != base.memory_id:
                raise InvalidInput(
                    f"{target_id} is in {target_version.memory_id}, not {base.memory_id}",
                    hint="deactivate it with a forget in its own Memory",
                )
            m = await self._manifest_entry(base, target_id)
            if m.state == "active":
                deactivate.append((target_id, m.entry_version_id, "superseded"))
        relations = tuple(sorted({*prev.content.relations, Relation(kind=relation_kind, target=target_id)}))
        return await self._revise(
            base, [(prev, replace(prev.content, relations=relations), "relate")], deactivate=deactivate
        )

    async def unrelate(
        self,
        memory: Revision | ArtifactRef,
        source: str | EntryVersion | MemoryHit | Record,
        target: str | EntryVersion | MemoryHit | Record,
        kind: str = "relates-to",
    ) -> Revision:
        """Remove a relation (a new version of ``source``, reason ``unrelate``; absent relations are a no-op)."""
        base = await self._base_of(memory)
        prev = await self._live_version(base, source)
        gone = Relation(kind=normalize_relation_kind(kind), target=_entry_id(target))
        relations = tuple(r for r in prev.content.relations if r != gone)
        return await self._revise(base, [(prev, replace(prev.content, relations=relations), "unrelate")])

    # ------------------------------------------------------------------ history you can use
    async def version(self, ref: str | EntryVersion) -> EntryVersion:
        """An exact version: ``ver_…``, ``ent_…`` (its current version) or ``ent_…@N`` (version N of the entry)."""
        svc = self._svc()
        if isinstance(ref, EntryVersion):
            return ref
        if not isinstance(ref, str):
            raise InvalidInput(f"a version reference is a string, got {type(ref).__name__}")
        found = _VERSION_REF.match(ref)
        if found is None:
            return await svc.get(ref)
        eid, number = EntryId(check_id(found.group(1), what="entry", prefix="ent_")), int(found.group(2))
        chain = cast(list[EntryVersion], await svc.backend.read(VersionsQuery(memory_id=None, entry_id=eid)))
        for v in chain:
            if v.version == number:
                return v
        raise NotFound(f"entry {eid} has no version {number}", hint=f"it has versions 1..{len(chain)}")

    async def diff(self, first: str | EntryVersion, second: str | EntryVersion | None = None) -> EntryDiff:
        """Field-level differences between two versions of one entry (one version: against its predecessor)."""
        svc = self._svc()
        a = await self.version(first)
        if second is None:
            if a.previous_version_id is None:
                return diff_versions(a, a)
            b, a = a, await svc.get(a.previous_version_id)
        else:
            b = await self.version(second)
        return diff_versions(a, b)

    async def blame(self, entry: str | EntryVersion) -> tuple[BlameField, ...]:
        """Per field, which version, author, time and Revision last changed it (up to the version named)."""
        svc = self._svc()
        v = await self.version(entry)
        chain = cast(list[EntryVersion], await svc.backend.read(VersionsQuery(memory_id=None, entry_id=v.entry_id)))
        return blame_fields(chain, upto=v.entry_version_id)

    async def revert(
        self,
        memory: Revision | ArtifactRef,
        entry: str | EntryVersion | MemoryHit | Record,
        to: str | int | EntryVersion,
        *,
        reason: str = "revert",
    ) -> Revision:
        """Restore an old version's content as a new version (history only grows). The old version's evidence is
        kept together with the current version's (a revision never drops its predecessor's evidence)."""
        base = await self._base_of(memory)
        prev = await self._live_version(base, entry)
        old = await self.version(f"{prev.entry_id}@{to}" if isinstance(to, int) else to)
        if old.entry_id != prev.entry_id:
            raise InvalidInput(f"{old.entry_version_id} is a version of {old.entry_id}, not {prev.entry_id}")
        sources = tuple(sorted(set(old.content.sources) | set(prev.content.sources)))
        return await self._revise(base, [(prev, replace(old.content, sources=sources), reason)])

    # ------------------------------------------------------------------ Markdown both ways
    async def export_markdown(
        self,
        directory: str | os.PathLike[str],
        *,
        scopes: Sequence[str] = (),
        memories: Sequence[Revision | ArtifactRef | str] = (),
    ) -> ExportReport:
        """Write every Memory (or the selected ones) to ``directory`` in the Xema layout, one ledger per entry.

        >>> await svc.export_markdown("memory-export")   # doctest: +SKIP
        """
        from .exchange import export_markdown

        return await export_markdown(self._svc(), directory, scopes=scopes, memories=memories)

    async def import_markdown(self, directory: str | os.PathLike[str]) -> ImportReport:
        """Read an export back, replaying every Revision exactly; idempotent; refuses a tampered file by name."""
        from .exchange import import_markdown

        return await import_markdown(self._svc(), directory)

    # ------------------------------------------------------------------ citations
    def cite_record(self, record: Record) -> Citation:
        """The exact Handoff anchor of a catalogue record (memory ref + entry id + entry version id + hash)."""
        return Citation(
            memory_ref=record.memory_ref,
            entry_id=record.entry_id,
            entry_version_id=record.entry_version_id,
            entry_content_hash=record.version.entry_content_hash,
        )

    # ------------------------------------------------------------------ the Graphit search pass
    async def _graphit_pass(
        self,
        query: str,
        hits: Sequence[MemoryHit],
        refs: Sequence[ArtifactRef],
        *,
        limit: int,
        order: Order,
        include_superseded: bool,
        precedence: bool,
        kinds: tuple[str, ...],
        tags: tuple[str, ...],
        important: bool | None,
        mandatory: bool | None,
    ) -> tuple[tuple[MemoryHit, ...], tuple[Shadowed, ...]]:
        """Collapse archived matches onto their entries, apply precedence, order, then count ``limit`` hits."""
        svc = self._svc()
        if not hits and not include_superseded:
            return (), ()
        if include_superseded or (precedence and len(refs) > 1):
            scope_of = await self._scopes_of([r.memory_id for r in refs])
            out = [replace(h, scope=scope_of.get(h.memory_ref.memory_id)) for h in hits]
        else:
            # One Memory and no archive: no precedence can apply, and the backend already annotated each hit
            # with its scope in the search's read transaction, so no second round trip is needed.
            scope_of = {h.memory_ref.memory_id: h.scope for h in hits if h.scope is not None}
            out = list(hits)
        if include_superseded and refs:
            seen = {h.entry_id for h in out}
            archived = cast(
                list[tuple[EntryVersion, EntryVersion, ArtifactRef]],
                await svc.backend.read(
                    ArchiveQuery(
                        query=query,
                        memories=tuple(refs),
                        depth=candidate_depth(limit) * 4,
                        kinds=kinds,
                        tags=tags,
                        important=important,
                        mandatory=mandatory,
                    )
                ),
            )
            rank = 0
            for old, current, head in archived:
                if old.entry_id in seen:
                    continue  # the current version matched (or a better archived one did): older hits are dropped
                seen.add(old.entry_id)
                rank += 1
                c = current.content
                out.append(
                    MemoryHit(
                        memory_ref=ArtifactRef(memory_id=old.memory_id, revision=old.created_in_revision),
                        entry_id=old.entry_id,
                        entry_version_id=old.entry_version_id,
                        text=old.content.text,
                        score=1.0 / (RRF_K + rank),
                        matched_by=("fts",),
                        kind=c.kind,
                        title=old.content.title,
                        tags=c.tags,
                        important=c.important,
                        mandatory=c.mandatory,
                        entry_content_hash=old.entry_content_hash,
                        updated_at=current.provenance.created_at,
                        ranks={"archive": rank},
                        slug=c.slug,
                        scope=scope_of.get(head.memory_id),
                        superseded=True,
                        current_entry_version_id=current.entry_version_id,
                    )
                )
        shadowed: list[Shadowed] = []
        if precedence and len(refs) > 1:
            shadows = await self._shadows(refs, scope_of)
            kept = []
            for h in out:
                found = shadows.get(h.entry_id)
                if found is None:
                    kept.append(h)
                    continue
                holder, winner = found
                shadowed.append(
                    Shadowed(
                        memory_ref=h.memory_ref,
                        entry_id=h.entry_id,
                        kind=holder.kind,
                        slug=holder.slug,
                        scope=str(holder.scope),
                        shadowed_by=winner.entry_id,
                        shadowed_by_scope=str(winner.scope),
                    )
                )
            out = kept

        def ids(h: MemoryHit) -> tuple[bytes, bytes, bytes]:
            return (
                h.memory_ref.memory_id.encode("utf-8"),
                h.entry_id.encode("utf-8"),
                h.entry_version_id.encode("utf-8"),
            )

        if order == "priority":
            out = priority_sorted(
                out,
                category_of=lambda h: "mandatory" if h.mandatory else ("important" if h.important else "normal"),
                date_of=lambda h: h.updated_at,
                tiebreak=lambda h: (-h.score, *ids(h)),
            )
        else:
            out.sort(key=lambda h: (-h.score, *ids(h)))
        return tuple(out[:limit]), tuple(shadowed)

    # ------------------------------------------------------------------ the initial recall protocol
    async def recall(
        self,
        context: str | None = None,
        *,
        scopes: Sequence[str] = (),
        memories: Sequence[Revision | ArtifactRef | str] = (),
        budget_tokens: int | None = None,
        budget_chars: int | None = None,
        limit: int = 8,
        mode: Literal["fts", "vector", "hybrid", "auto"] = "auto",
        order: Order = "priority",
    ) -> RecallBundle:
        """Session start in one call: every mandatory memory in full, then the contextual search (excluding the
        mandatory ones), within a token or character budget, in a deterministic order, saying what was left out.

        >>> bundle = await svc.recall("editing the docs", scopes=[project, user], budget_tokens=2000)  # doctest: +SKIP
        """
        svc = self._svc()
        if budget_tokens is not None and budget_chars is not None:
            raise InvalidInput("give a token budget or a character budget, not both")
        budget = budget_tokens if budget_tokens is not None else budget_chars
        unit: Literal["tokens", "chars"] = "chars" if budget_chars is not None else "tokens"
        if budget is not None and (isinstance(budget, bool) or not isinstance(budget, int) or budget < 0):
            raise InvalidInput(f"a budget is a non-negative integer, got {budget!r}")
        if context is not None and not isinstance(context, str):
            raise InvalidInput("context must be a string")
        refs, _ = await self._select(scopes, memories, what="recall")
        omitted: list[Omission] = []
        used = 0

        def fits(text: str) -> tuple[bool, int]:
            spend = cost(text, unit)
            return budget is None or used + spend <= budget, spend

        loaded: list[Record] = []
        for record in await self.mandatory(memories=refs) if refs else ():
            if record.shadowed_by is not None:
                omitted.append(Omission(entry_id=record.entry_id, section="mandatory", reason="shadowed", cost=0))
                continue
            ok, spend = fits(recall_text(record.kind, record.title, record.text))
            if ok:
                loaded.append(record)
                used += spend
            else:
                omitted.append(Omission(entry_id=record.entry_id, section="mandatory", reason="budget", cost=spend))
        contextual: list[MemoryHit] = []
        used_mode = "none"
        if context is not None and context.strip() and refs:
            result = await svc.search(
                context, memories=refs, limit=limit, mode=mode, order=order, exclude_mandatory=True
            )
            used_mode = result.mode
            for hit in result.hits:
                ok, spend = fits(recall_text(hit.kind, hit.title, hit.text))
                if ok:
                    contextual.append(hit)
                    used += spend
                else:
                    omitted.append(Omission(entry_id=hit.entry_id, section="contextual", reason="budget", cost=spend))
            for s in result.shadowed:
                omitted.append(Omission(entry_id=s.entry_id, section="contextual", reason="shadowed", cost=0))
        links = await self._links([r.version for r in loaded], contextual, refs)
        return RecallBundle(
            mandatory=tuple(loaded),
            contextual=tuple(contextual),
            links=links,
            omitted=tuple(omitted),
            budget=budget,
            unit=unit,
            used=used,
            mode=used_mode,
            note=budget_note(omitted, budget, unit, used),
        )

    async def _links(
        self, versions: Sequence[EntryVersion], hits: Sequence[MemoryHit], refs: Sequence[ArtifactRef]
    ) -> tuple[CrossLink, ...]:
        """Cross-links of recalled entries: their outgoing relations and the live entries that point at them."""
        svc = self._svc()
        current = {v.entry_id: v for v in versions}
        wanted = [h.current_entry_version_id or h.entry_version_id for h in hits]
        if wanted:
            found = cast(
                list[EntryVersion], await svc.backend.read(VersionsQuery(memory_id=None, version_ids=tuple(wanted)))
            )
            current.update({v.entry_id: v for v in found})
        links: list[CrossLink] = []
        for v in current.values():
            for r in v.content.relations:
                other, state = await self._peek(r.target)
                links.append(
                    CrossLink(
                        direction="outgoing",
                        kind=r.kind,
                        source=v.entry_id,
                        target=r.target,
                        other_title=other.content.title if other else None,
                        other_kind=other.content.kind if other else None,
                        other_state=state,
                    )
                )
        if current and refs:
            incoming = cast(
                list[tuple[ArtifactRef, EntryVersion]],
                await svc.backend.read(
                    LinksQuery(memory_ids=tuple(r.memory_id for r in refs), targets=tuple(sorted(current)))
                ),
            )
            for _, v in incoming:
                for r in v.content.relations:
                    if r.target in current:
                        links.append(
                            CrossLink(
                                direction="incoming",
                                kind=r.kind,
                                source=v.entry_id,
                                target=r.target,
                                other_title=v.content.title,
                                other_kind=v.content.kind,
                                other_state="active",
                            )
                        )
        unique = {(x.direction, x.kind, x.source, x.target): x for x in links}
        return tuple(unique[k] for k in sorted(unique))

    async def _peek(self, entry_id: EntryId) -> tuple[EntryVersion | None, EntryState | Literal["missing"]]:
        svc = self._svc()
        try:
            v = await svc.get(entry_id)
        except NotFound:
            return None, "missing"
        head = await svc.head(v.memory_id)
        return v, (await self._manifest_entry(head, entry_id)).state

    # ------------------------------------------------------------------ catalogues
    async def important(
        self,
        *,
        scopes: Sequence[str] = (),
        memories: Sequence[Revision | ArtifactRef | str] = (),
        kinds: Sequence[str] = (),
        tags: Sequence[str] = (),
        mandatory: bool | None = None,
        limit: int | None = None,
    ) -> tuple[Record, ...]:
        """Live important records (curated reference material), category-first then newest first."""
        return await self.list(
            scopes=scopes, memories=memories, kinds=kinds, tags=tags, important=True, mandatory=mandatory, limit=limit
        )

    async def mandatory(
        self,
        *,
        scopes: Sequence[str] = (),
        memories: Sequence[Revision | ArtifactRef | str] = (),
        kinds: Sequence[str] = (),
        tags: Sequence[str] = (),
        important: bool | None = None,
        limit: int | None = None,
    ) -> tuple[Record, ...]:
        """Every live mandatory record, in full and unscored: what an agent loads unconditionally at session start."""
        return await self.list(
            scopes=scopes, memories=memories, kinds=kinds, tags=tags, important=important, mandatory=True, limit=limit
        )

    async def list(
        self,
        *,
        scopes: Sequence[str] = (),
        memories: Sequence[Revision | ArtifactRef | str] = (),
        kinds: Sequence[str] = (),
        tags: Sequence[str] = (),
        important: bool | None = None,
        mandatory: bool | None = None,
        limit: int | None = None,
        include_inactive: bool = False,
        precedence: bool = True,
    ) -> tuple[Record, ...]:
        """The catalogue: live records (of the heads, or of the exact Revisions named), filtered by kind, tags and
        flags, ordered mandatory → important → normal, then ``updated_at`` descending.

        Across tiers, a record shadowed by a more specific scope (same kind and slug) stays in the list with
        ``shadowed_by`` set. A Revision older than the head reads the Memory as it was then (point in time).

        >>> await svc.list(scopes=["memstone://orgs/acme"], kinds=["lesson"])  # doctest: +SKIP
        """
        svc = self._svc()
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
            raise InvalidInput(f"limit must be a positive integer, got {limit!r}")
        for name, value in (("important", important), ("mandatory", mandatory)):
            if value is not None and not isinstance(value, bool):
                raise InvalidInput(f"{name} must be true, false or None, got {value!r}")
        if isinstance(kinds, str) or isinstance(tags, str):
            raise InvalidInput("kinds= and tags= take lists, not one string")
        refs, scope_of = await self._select(scopes, memories, what="a catalogue")
        if not refs:
            return ()
        found = cast(
            list[Record],
            await svc.backend.read(
                CatalogueQuery(
                    memories=tuple(refs),
                    kinds=tuple(k.strip() for k in kinds),
                    tags=normalize_tags(tags),
                    important=important,
                    mandatory=mandatory,
                    include_inactive=include_inactive,
                )
            ),
        )
        heads = {r.memory_id: (await svc.head(r.memory_id)).revision == r.revision for r in refs}
        shadows = await self._shadows([r for r in refs if heads[r.memory_id]], scope_of) if precedence else {}
        records = []
        for r in found:
            shadow = shadows.get(r.entry_id) if r.state == "active" else None
            records.append(
                replace(
                    r,
                    scope=scope_of.get(r.memory_ref.memory_id),
                    shadowed_by=shadow[1].entry_id if shadow else None,
                    shadowed_by_scope=str(shadow[1].scope) if shadow else None,
                )
            )
        ordered = order_records(records)
        return tuple(ordered[:limit] if limit is not None else ordered)


def _describe(policy: frozenset[str] | None) -> str:
    return "an open kind set" if policy is None else f"the closed kind set {', '.join(sorted(policy))}"


__all__ = ["Order", "RecordsMixin", "flag_reason"]
