"""The record surface of Graphit and Xema: bindings, identity by (scope, kind, slug), flags, slugs and aliases,
relations, catalogues, history you can use (version, diff, blame, revert) and the Markdown backup."""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Literal, TypedDict, Unpack

from ..domain.errors import (
    AlreadyExists,
    InvalidInput,
    NotFound,
    shown,
)
from ..domain.filters import EntryFilter
from ..domain.ids import EntryId, EntryVersionId, check_id
from ..domain.model import (
    ArtifactRef,
    EntryContent,
    EntryVersion,
    MemoryHit,
    Provenance,
    Relation,
    Revision,
)
from ..domain.records import (
    Record,
    order_records,
)
from ..domain.rules import (
    NextVersions,
    normalize_artifacts,
    normalize_reason,
    normalize_relation_kind,
    normalize_slug,
    normalize_source_ids,
    normalize_tags,
    normalize_text,
    parse_revision,
)
from ..domain.scopes import canonical_scope
from ..ports import (
    CatalogueQuery,
    SlugQuery,
    VersionsQuery,
)
from .core import (
    ServiceCore,
    _entry_id,
    flag_reason,
)
from .search import Search
from .writes import Writes, plan_of

if TYPE_CHECKING:  # the exchange and history load on first use: hooks never pay for them
    from ..domain.history import BlameField, EntryDiff
    from .exchange import ExportReport, ImportReport

_VERSION_REF = re.compile(r"(ent_[A-Za-z0-9]+)@(\d{1,19})")


class CatalogueFilters(TypedDict, total=False):
    """The filters ``important`` and ``mandatory`` pass on to ``list``."""

    scopes: Sequence[str]
    memories: Sequence[Revision | ArtifactRef | str]
    kinds: Sequence[str]
    tags: Sequence[str]
    limit: int | None


class Records:
    """Scopes, identity, flags, slugs, relations, catalogues and history tools."""

    def __init__(self, core: ServiceCore, writes: Writes, search: Search) -> None:
        self._core = core
        self._writes = writes
        self._search = search

    async def bind(self, scope: str, memory: Revision | ArtifactRef | str) -> Revision:
        """Bind an unbound scope to an existing, unbound Memory (a binding is permanent). Returns its head.

        >>> await svc.bind("memstone://orgs/acme", rev)   # doctest: +SKIP
        """
        uri = canonical_scope(scope)
        await self._core.policy.require_named(uri, "write")
        head = await self._core.head(memory)
        await self._core._may(head.memory_id, "write", hidden=f"no memory {head.memory_id}")
        async with self._core.backend.begin() as uow:
            ok = await uow.bind(uri, head.memory_id, self._core._clock())
        if not ok:
            current = await self._core.resolve(uri)
            if current is not None:
                raise AlreadyExists(
                    f"scope {uri} is already bound to {current.memory_id}",
                    hint="a scope maps to exactly one Memory, and bindings are permanent",
                )
            other = (await self._core._scope_map()).get(head.memory_id)
            raise AlreadyExists(f"{head.memory_id} is already bound to {other}", hint="a Memory has one scope")
        return head

    async def lookup(
        self, where: str | Revision | ArtifactRef, *, kind: str, slug: str, include_inactive: bool = False
    ) -> Record:
        """Xema identity: the entry a (scope, kind, slug) names. An old slug redirects to the renamed entry.

        ``where`` is a scope URI or a Memory. A live holder of the slug wins; otherwise the entry that held it most
        recently (an alias left by a rename). Inactive entries are found only with ``include_inactive``.
        """
        clean_slug = normalize_slug(slug)
        assert clean_slug is not None
        if isinstance(where, str) and not where.startswith("mem_"):
            head = await self._core.resolve(where)
            if head is None:
                raise NotFound(f"scope {canonical_scope(where)} has no Memory yet")
        else:
            head = await self._core.head(where)
        matches = await self._core.backend.read(
            SlugQuery(memory_ids=(head.memory_id,), kind=kind.strip().lower(), slug=clean_slug)
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
        scope_of = await self._core._scope_map()
        out: list[Record] = []
        for entry in entries:
            eid = _entry_id(entry)
            version = await self._core.get(eid, memory=memory)
            rev = await self._core.revision(memory if memory is not None else version.memory_id)
            m = await self._core._manifest_entry(rev, eid)
            chain = await self._core.backend.read(VersionsQuery(memory_id=None, entry_id=eid))
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

    async def _live_version(self, base: Revision, entry: str | EntryVersion | MemoryHit | Record) -> EntryVersion:
        eid = _entry_id(entry)
        m = await self._core._manifest_entry(base, eid)
        if m.state != "active":
            raise InvalidInput(f"entry {eid} is inactive", hint="reactivate it first, then change it")
        if isinstance(entry, (EntryVersion, MemoryHit, Record)) and entry.entry_version_id != m.entry_version_id:
            raise InvalidInput(
                f"stale entry: {entry.entry_version_id} is not the current version of {eid}",
                hint="read the entry again and change its current version",
            )
        (v,) = await self._core.backend.read(VersionsQuery(memory_id=base.memory_id, version_ids=(m.entry_version_id,)))
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
        now = self._core._clock()
        provenance = Provenance(author=self._core._author, surface=surface or self._core._surface, created_at=now)
        batch = NextVersions(
            memory_id=base.memory_id, revision=base.revision + 1, provenance=provenance, new_id=self._core._new_id
        )
        for prev, content, reason in revisions:
            if content.content_hash == prev.entry_content_hash:
                continue
            await self._core._check_kind(content.kind)
            batch.add(content, prev=prev, reason=reason)
        for eid, vid, reason in deactivate:
            batch.deactivate(eid, vid, reason)
        if not batch.changes:
            return base
        plan = plan_of(batch)
        return await self._core._commit(plan)

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
                raise InvalidInput(f"{name} must be true or false, got {shown(value)}")
        base = await self._core._base_of(memory)
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
        base = await self._core._base_of(memory)
        prev = await self._live_version(base, entry)
        return await self._revise(base, [(prev, replace(prev.content, slug=normalize_slug(slug)), "rename")])

    async def merge(
        self,
        memory: Revision | ArtifactRef,
        survivor: str | EntryVersion | MemoryHit | Record,
        absorbed: Sequence[str | EntryVersion | MemoryHit | Record],
        *,
        text: str | None = None,
        reason: str = "merge",
    ) -> Revision:
        """Fold ``absorbed`` entries into ``survivor`` in one Revision; history keeps every word of each.

        The survivor gets ``text`` (default: its own), inherits ``important`` and ``mandatory`` independently from
        what it absorbs, and keeps the union of tags, sources, artifacts and relations, plus a ``supersedes``
        relation to each absorbed entry; the absorbed entries become inactive (reason ``merged into ent_…``).

        >>> rev = await svc.merge(head, "ent_keep", ["ent_restated"], reason="maintenance: duplicate")  # doctest: +SKIP
        """
        base = await self._core._base_of(memory)
        keep = await self._live_version(base, survivor)
        if not absorbed:
            raise InvalidInput("merge needs at least one entry to absorb")
        gone = [await self._live_version(base, e) for e in absorbed]
        if len({g.entry_id for g in gone} | {keep.entry_id}) != len(gone) + 1:
            raise InvalidInput("merge names an entry twice (or the survivor among the absorbed)")
        c = keep.content
        parts = [c, *(g.content for g in gone)]
        relations = {r for p in parts for r in p.relations if r.target not in {g.entry_id for g in gone}}
        relations |= {Relation(kind="supersedes", target=g.entry_id) for g in gone}
        new = replace(
            c,
            text=c.text if text is None else normalize_text(text, what="merged text"),
            important=any(p.important for p in parts),
            mandatory=any(p.mandatory for p in parts),
            tags=normalize_tags([t for p in parts for t in p.tags]),
            sources=normalize_source_ids([s for p in parts for s in p.sources]),
            artifacts=normalize_artifacts([a for p in parts for a in p.artifacts]),
            relations=tuple(sorted(relations)),
        )
        why = normalize_reason(reason) or "merge"
        deactivate = [(g.entry_id, g.entry_version_id, f"merged into {keep.entry_id}") for g in gone]
        return await self._revise(base, [(keep, new, why)], deactivate=deactivate)

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
        relation_kind = normalize_relation_kind(kind)
        if deactivate_target and relation_kind != "supersedes":
            raise InvalidInput("only a supersedes relation can deactivate its target", hint="use kind='supersedes'")
        base = await self._core._base_of(memory)
        prev = await self._live_version(base, source)
        target_id = _entry_id(target)
        if target_id == prev.entry_id:
            raise InvalidInput("an entry cannot relate to itself")
        target_version = await self._core.get(target_id)  # NotFound when it does not exist anywhere in the store
        deactivate: list[tuple[EntryId, EntryVersionId, str | None]] = []
        if deactivate_target:
            if target_version.memory_id != base.memory_id:
                raise InvalidInput(
                    f"{target_id} is in {target_version.memory_id}, not {base.memory_id}",
                    hint="deactivate it with a forget in its own Memory",
                )
            m = await self._core._manifest_entry(base, target_id)
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
        base = await self._core._base_of(memory)
        prev = await self._live_version(base, source)
        gone = Relation(kind=normalize_relation_kind(kind), target=_entry_id(target))
        relations = tuple(r for r in prev.content.relations if r != gone)
        return await self._revise(base, [(prev, replace(prev.content, relations=relations), "unrelate")])

    async def version(self, ref: str | EntryVersion) -> EntryVersion:
        """An exact version: ``ver_…``, ``ent_…`` (its current version) or ``ent_…@N`` (version N of the entry)."""
        if isinstance(ref, EntryVersion):
            return ref
        if not isinstance(ref, str):
            raise InvalidInput(f"a version reference is a string, got {type(ref).__name__}")
        found = _VERSION_REF.fullmatch(ref)
        if found is None:
            return await self._core.get(ref)
        eid, number = (
            EntryId(check_id(found.group(1), what="entry", prefix="ent_")),
            parse_revision(found.group(2), "version"),
        )
        chain = await self._core.backend.read(VersionsQuery(memory_id=None, entry_id=eid))
        for v in chain:
            if v.version == number:
                return v
        raise NotFound(f"entry {eid} has no version {number}", hint=f"it has versions 1..{len(chain)}")

    async def diff(self, first: str | EntryVersion, second: str | EntryVersion | None = None) -> EntryDiff:
        """Field-level differences between two versions of one entry (one version: against its predecessor)."""
        from ..domain.history import diff_versions

        a = await self.version(first)
        if second is None:
            if a.previous_version_id is None:
                return diff_versions(a, a)
            b, a = a, await self._core.get(a.previous_version_id)
        else:
            b = await self.version(second)
        return diff_versions(a, b)

    async def blame(self, entry: str | EntryVersion) -> tuple[BlameField, ...]:
        """Per field, which version, author, time and Revision last changed it (up to the version named)."""
        from ..domain.history import blame_fields

        v = await self.version(entry)
        chain = await self._core.backend.read(VersionsQuery(memory_id=None, entry_id=v.entry_id))
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
        base = await self._core._base_of(memory)
        prev = await self._live_version(base, entry)
        old = await self.version(f"{prev.entry_id}@{to}" if isinstance(to, int) else to)
        if old.entry_id != prev.entry_id:
            raise InvalidInput(f"{old.entry_version_id} is a version of {old.entry_id}, not {prev.entry_id}")
        sources = tuple(sorted(set(old.content.sources) | set(prev.content.sources)))
        return await self._revise(base, [(prev, replace(old.content, sources=sources), reason)])

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

        return await export_markdown(self._core, directory, scopes=scopes, memories=memories)

    async def import_markdown(self, directory: str | os.PathLike[str]) -> ImportReport:
        """Read an export back, replaying every Revision exactly; idempotent; refuses a tampered file by name."""
        from .exchange import import_markdown

        return await import_markdown(self._core, directory)

    async def important(
        self, *, mandatory: bool | None = None, **filters: Unpack[CatalogueFilters]
    ) -> tuple[Record, ...]:
        """Live important records (curated reference material), category-first then newest first.

        ``filters``: ``scopes``, ``memories``, ``kinds``, ``tags`` and ``limit``, as :meth:`list` takes them.

        >>> await svc.important(scopes=["memstone://orgs/acme"])  # doctest: +SKIP
        """
        return await self.list(**filters, important=True, mandatory=mandatory)

    async def mandatory(
        self, *, important: bool | None = None, **filters: Unpack[CatalogueFilters]
    ) -> tuple[Record, ...]:
        """Every live mandatory record, in full and unscored: what an agent loads unconditionally at session start.

        ``filters``: ``scopes``, ``memories``, ``kinds``, ``tags`` and ``limit``, as :meth:`list` takes them.

        >>> await svc.mandatory(scopes=["memstone://orgs/acme/projects/web"])  # doctest: +SKIP
        """
        return await self.list(**filters, important=important, mandatory=True)

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
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
            raise InvalidInput(f"limit must be a positive integer, got {shown(limit)}")
        filters = EntryFilter.of(kinds=kinds, tags=tags, important=important, mandatory=mandatory)
        refs, scope_of = await self._core._select(scopes, memories, what="a catalogue")
        if not refs:
            return ()
        found = await self._core.backend.read(
            CatalogueQuery(
                memories=tuple(refs),
                filters=filters,
                include_inactive=include_inactive,
            )
        )
        heads = {r.memory_id: (await self._core.head(r.memory_id)).revision == r.revision for r in refs}
        shadows = await self._search._shadows([r for r in refs if heads[r.memory_id]], scope_of) if precedence else {}
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


__all__ = ["Records", "flag_reason"]
