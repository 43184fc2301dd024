"""Writes: ``remember`` (add and revise), ``update`` (one entry, with its retry), ``forget``/``reactivate`` and
``organize``. Each plans its write completely outside the transaction and commits it through the core."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from functools import partial
from typing import TypedDict, Unpack

from ..domain.errors import (
    CapabilityNotSupportedError,
    EntryInactiveError,
    InvalidInput,
    LiveDuplicateError,
    RevisionConflictError,
    StaleEntryError,
    shown,
)
from ..domain.ids import EntryId, EntryVersionId, MemoryId, SourceId
from ..domain.model import (
    ArtifactRef,
    Change,
    EntryContent,
    EntryInput,
    EntryPatch,
    EntryState,
    EntryVersion,
    ManifestEntry,
    MemoryHit,
    Provenance,
    RememberOutcome,
    Revision,
    Source,
    Surface,
    UpdateResult,
)
from ..domain.rules import (
    NextVersions,
    build_content,
    entry_inputs,
    items_of,
    normalize_artifacts,
    normalize_reason,
    normalize_source_ids,
    normalize_tags,
)
from ..domain.scopes import canonical_scope
from ..ports import (
    ContentQuery,
    ManifestQuery,
    VersionsQuery,
    WritePlan,
)
from .core import (
    EntryLike,
    MemoryLike,
    RememberMode,
    ServiceCore,
    _entry_id,
    flag_reason,
)


class RememberOptions(TypedDict, total=False):
    """The keyword arguments of ``remember`` (and ``remember_outcome``)."""

    entries: Sequence[EntryInput]
    sources: Sequence[Source | str]
    artifacts: Sequence[ArtifactRef]
    mode: RememberMode
    scope: str | None
    author: str | None
    surface: Surface | None
    rebase: bool


def plan_of(
    batch: NextVersions,
    *,
    sources: tuple[SourceId, ...] = (),
    artifacts: tuple[ArtifactRef, ...] = (),
    bind_scope: str | None = None,
) -> WritePlan:
    """The write plan of ``batch``: its changes and versions on the Revision before it, under its provenance."""
    p = batch.provenance
    return WritePlan(
        memory_id=batch.memory_id,
        base_revision=batch.revision - 1,
        changes=tuple(batch.changes),
        new_versions=tuple(batch.versions),
        sources=sources,
        artifacts=artifacts,
        author=p.author,
        surface=p.surface,
        created_at=p.created_at,
        bind_scope=bind_scope,
    )


class Writes:
    """Add, revise, update, forget, reactivate and organize entries."""

    def __init__(self, core: ServiceCore) -> None:
        self._core = core

    async def remember(self, memory: MemoryLike | None = None, **options: Unpack[RememberOptions]) -> Revision | None:
        """Add or revise entries. ``memory=None`` creates a new Memory (or, with ``scope``, the scope's Memory).

        Options: ``entries``, ``sources``, ``artifacts``, ``mode`` (append, extract, auto), ``scope``, ``author``,
        ``surface`` and ``rebase``, as :meth:`remember_outcome` takes them. Returns the new Revision; the current
        one when nothing changed; None when nothing worth saving was given to a new Memory. A stale ``memory``
        raises RevisionConflictError. :meth:`remember_outcome` says also which entries it added, and which live
        entries already said what was given.

        >>> rev = await svc.remember(scope=uri, entries=[EntryInput(kind="fact", text="…")])  # doctest: +SKIP
        """
        return (await self.remember_outcome(memory, **options)).revision

    async def remember_outcome(
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
        rebase: bool = False,
        _checked: bool = False,
    ) -> RememberOutcome:
        """:meth:`remember`, returning what it did: the entries added or revised, and on a no-op the live entries
        that already hold the content (``existing``), so a front end can point to them.

        ``rebase=True`` checks per entry instead of per Memory: if ``memory`` is no longer the head but none of the
        entries this call revises has changed since, the write is applied on the current head.

        A stale ``memory`` raises RevisionConflictError. A write addressed by ``scope`` alone applies to the scope's
        current head and retries when another writer got there first.

        >>> done = await svc.remember_outcome(scope=uri, entries=[EntryInput(kind="fact", text="…")])  # doctest: +SKIP
        >>> done.status, done.added, done.existing                                                      # doctest: +SKIP
        ('unchanged', (), ('ent_01J…',))
        """
        entries = entry_inputs(entries)
        # The same call again as a plain append (the extract pipeline's entries, a scope write's retry).
        append = partial(
            self.remember_outcome, sources=sources, artifacts=artifacts, mode="append", author=author, surface=surface
        )
        if mode not in ("append", "extract", "auto"):
            raise InvalidInput(f"unknown remember mode {shown(mode)}", hint="use append, extract or auto")
        if author is not None and not isinstance(author, str):  # found by tests/fuzz: a dict reached SQLite
            raise InvalidInput(f"author must be a string, got {type(author).__name__}")
        if mode == "auto":
            mode = "append" if entries else "extract"
        if mode == "extract":
            if entries:
                raise InvalidInput("extract takes evidence, not entries")
            if not sources and not artifacts:
                raise InvalidInput("nothing to remember: give entries, or sources/artifacts to extract from")
            pipeline = self._core.candidates
            if pipeline is None:
                raise CapabilityNotSupportedError(
                    "extract", "no candidate pipeline is configured", hint="pass explicit entries with mode='append'"
                )
            # Trigger: evidence without entries. Why: the pipeline's output is untrusted; it must pass the same
            # validation, secret refusal and grants as any caller's entries. Outcome: an ordinary append.
            evidence = await self._core.sources([s if isinstance(s, str) else s.source_id for s in sources])
            if memory is None and scope is not None:
                memory = await self._core.resolve(canonical_scope(scope))
            base_now = await self._core._base(memory)
            live = await self._core.entries(base_now) if base_now is not None else []
            proposed = list(await pipeline.candidates(evidence, live))
            if not proposed:
                return RememberOutcome(status="unchanged", revision=base_now)
            return await append(memory, entries=proposed, scope=scope)
        if not entries:
            raise InvalidInput("append needs at least one entry")
        closed = await self._core.kinds()
        op_sources = normalize_source_ids(sources)
        op_artifacts = normalize_artifacts(artifacts)
        if scope is not None:
            scope = canonical_scope(scope)
        given, from_scope = memory, memory is None and scope is not None
        if memory is None and scope is not None:
            bound = await self._core.resolve(scope)
            if bound is not None:
                memory = bound
        base = await self._core._base(memory)
        memory_id = base.memory_id if base is not None else MemoryId(self._core._new_id("mem_"))
        base_revision = base.revision if base is not None else 0
        new_revision = base_revision + 1
        now = self._core._clock()
        provenance = Provenance(
            author=author or self._core._author, surface=surface or self._core._surface, created_at=now
        )

        revise_ids = [_entry_id(e.entry) for e in entries if e.entry is not None]
        if len(set(revise_ids)) != len(revise_ids):
            raise InvalidInput("one remember call cannot change the same entry twice")
        current: dict[EntryId, ManifestEntry] = {}
        previous: dict[EntryVersionId, EntryVersion] = {}
        if revise_ids:
            if base is None:
                raise InvalidInput("a new Memory has no entries to revise")
            current = await self._core.backend.read(
                ManifestQuery(ref=base.ref, entry_ids=tuple(EntryId(i) for i in revise_ids))
            )
            ver_ids = tuple(m.entry_version_id for m in current.values())
            for v in await self._core.backend.read(VersionsQuery(memory_id=memory_id, version_ids=ver_ids)):
                previous[v.entry_version_id] = v

        batch = NextVersions(
            memory_id=memory_id, revision=new_revision, provenance=provenance, new_id=self._core._new_id
        )
        existing: list[EntryId] = []  # live entries that already hold what an entry gives
        pending_new: dict[str, EntryContent] = {}
        new_items: list[tuple[str, EntryInput]] = []  # each new entry's content hash, built once
        for item in entries:
            if item.entry is None:
                content = build_content(item, op_sources=op_sources, closed_kinds=closed)
                pending_new.setdefault(content.content_hash, content)  # only the first identical new entry
                new_items.append((content.content_hash, item))
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
                existing.append(eid)
                continue  # identical content is a no-op
            reason = normalize_reason(item.reason) or flag_reason(prev.content, content)
            batch.add(content, prev=prev, reason=reason)
        # On a server engine without a model to run first, the commit checks that no new entry is live at the base,
        # in its own transaction (``WritePlan.unless_live``): one job and one round trip fewer; when one is, this
        # call runs again with the check first (``_checked``), as it always does with a model (nothing embedded in
        # vain) and on SQLite (where a job costs no round trip).
        in_commit = bool(pending_new) and base is not None and not _checked and self._core.indexer is None
        in_commit = in_commit and self._core.backend.capabilities.check_in_commit
        if pending_new and base is not None and not in_commit:
            found = await self._core.backend.read(ContentQuery(memory_id=memory_id, content_hashes=tuple(pending_new)))
            for v, state in found:
                if state == "active" and pending_new.pop(v.entry_content_hash, None) is not None:
                    existing.append(v.entry_id)  # exact duplicate of a live entry
        reasons: dict[str, str | None] = {}
        for content_hash, item in new_items:
            reasons.setdefault(content_hash, normalize_reason(item.reason))
        for content_hash, content in pending_new.items():
            batch.add(content, prev=None, reason=reasons.get(content_hash))
        if not batch.changes:
            if (
                base is not None
                and not from_scope
                and base.revision != (await self._core.head(base.memory_id)).revision
            ):
                # Trigger: a replay whose content is already there, against an explicit base that is no longer
                # the head. Why: the RFC answers a stale base with RevisionConflictError, no-op or not; returning
                # the stale Revision would tell the caller its base is current. Outcome: re-read and retry.
                raise RevisionConflictError(base.memory_id, expected=base.revision)
            # a no-op writes nothing (None for a new Memory)
            return RememberOutcome(status="unchanged", revision=base, existing=tuple(existing))
        plan = plan_of(batch, sources=op_sources, artifacts=op_artifacts, bind_scope=scope if base is None else None)
        if in_commit:
            plan = replace(plan, unless_live=tuple(pending_new))
        try:
            return RememberOutcome.committed(await self._core._commit(plan, rebase=rebase), existing=existing)
        except LiveDuplicateError:
            # Trigger: a new entry is live at the base (``unless_live``). Outcome: nothing was written; the same
            # call again, with the check first, which keeps that entry out (or makes the call a no-op).
            return await append(given, entries=entries, scope=scope, rebase=rebase, _checked=True)
        except RevisionConflictError:
            if from_scope:
                # Trigger: another writer committed to the scope's Memory first (or won the binding race).
                # Why: a scope write names no base Revision, so both writes must be kept, in the one Memory the
                #      scope is bound to; each retry follows another writer's success, so it terminates.
                # Outcome: retry against the scope's current head.
                return await append(None, entries=entries, scope=scope)
            raise

    async def update(
        self, entry: EntryLike, patch: EntryPatch, *, expected_version: int | str | None = None
    ) -> UpdateResult:
        """Revise one entry at its Memory's current head; fields the patch leaves ``None`` keep their value.

        ``expected_version`` (the version number or ``ver_…`` id you read) makes it optimistic: a change to this
        entry since then raises StaleEntryError and writes nothing. A lost race with a write to *another* entry
        of the same Memory is retried (the core's one retry policy, ``ServiceCore.retrying``). The default reason
        is ``flag`` when only the flags change, else ``update``.

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
            raise InvalidInput(
                f"expected_version must be a version number or a ver_… id, got {shown(expected_version)}"
            )
        entry_id = EntryId(_entry_id(entry))

        async def attempt() -> UpdateResult:
            found = await self._core.get(entry_id)
            head = await self._core.head(found.memory_id)
            current = await self._core.get(entry_id, memory=head)
            if expected_version is not None and expected_version not in (current.version, current.entry_version_id):
                raise StaleEntryError(
                    entry_id, memory_id=current.memory_id, expected=expected_version, actual=current.version
                )
            item = patch.applied_to(current)
            if item.reason is None:
                proposed = build_content(item, op_sources=(), inherited_sources=current.content.sources)
                item = replace(item, reason=flag_reason(current.content, proposed) or "update")
            rev = await self.remember(head, entries=[item], rebase=True)  # per-entry compare-and-swap
            assert rev is not None
            if rev.revision == head.revision:
                return UpdateResult(status="unchanged", revision=rev, previous=current, current=current)
            now = await self._core.get(entry_id, memory=rev)
            return UpdateResult(status="updated", revision=rev, previous=current, current=now)

        return await self._core.retrying(attempt)

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
        target: EntryState,
    ) -> Revision:
        entries = items_of(entries, "entries")
        if not entries:
            raise InvalidInput("name at least one entry")
        base = await self._core._base(memory)
        if base is None:  # found by bench/bench_fuzz.py: forget(None, …) was an AssertionError
            raise InvalidInput("name the Memory to change", hint="pass its head: await service.head(memory_id)")
        why = normalize_reason(reason)
        ids = [EntryId(_entry_id(e)) for e in entries]
        if len(set(ids)) != len(ids):
            raise InvalidInput("an entry is named twice")
        manifest = await self._core.backend.read(ManifestQuery(ref=base.ref, entry_ids=tuple(ids)))
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
                found = await self._core.backend.read(
                    VersionsQuery(memory_id=base.memory_id, version_ids=(m.entry_version_id,))
                )
                if found and found[0].content.purged_hash is not None:
                    raise InvalidInput(f"entry {eid} was purged; it cannot be reactivated", hint="write it anew")
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
        now = self._core._clock()
        plan = WritePlan(
            memory_id=base.memory_id,
            base_revision=base.revision,
            changes=tuple(changes),
            new_versions=(),
            author=self._core._author,
            surface=self._core._surface,
            created_at=now,
        )
        return await self._core._commit(plan)

    async def organize(self, memory: MemoryLike, *, dedupe: bool = True, normalize: bool = True) -> Revision:
        """Exact deduplication (keep the smallest entry id) and reference normalization, in one Revision."""
        base = await self._core._base(memory)
        if base is None:  # found by bench/bench_fuzz.py: forget(None, …) was an AssertionError
            raise InvalidInput("name the Memory to change", hint="pass its head: await service.head(memory_id)")
        current = await self._core.entries(base)
        now = self._core._clock()
        batch = NextVersions(
            memory_id=base.memory_id,
            revision=base.revision + 1,
            provenance=Provenance(author=self._core._author, surface="workflow", created_at=now),
            new_id=self._core._new_id,
        )
        deactivated: set[str] = set()
        if dedupe:
            by_hash: dict[str, list[EntryVersion]] = {}
            for v in current:
                by_hash.setdefault(v.entry_content_hash, []).append(v)
            for group in by_hash.values():
                group.sort(key=lambda v: v.entry_id.encode("utf-8"))
                for dup in group[1:]:
                    deactivated.add(dup.entry_id)
                    batch.deactivate(dup.entry_id, dup.entry_version_id, "dedupe")
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
                batch.add(normalized, prev=v, reason="normalize")
        if not batch.changes:
            return base
        return await self._core._commit(plan_of(batch))


__all__ = ["Writes"]
