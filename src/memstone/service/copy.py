"""Copy a whole store from one engine to another, history exact (issue 13, "Moving between engines").

``copy_store(source, target)`` works on the storage port only (``ports.MemoryBackend``), so it copies between any
two engines, a future one included: every Memory's Revisions are replayed in order with the same ids, versions,
reasons, authors, surfaces and times, so every entry content hash and every Revision hash comes out the same (the
target's own commit recomputes each hash and the copy checks it). It carries the evidence the history cites, the
scope bindings with their times, the kind policy, the embedding profile and the purge tombstones (a purged version
arrives purged, with its tombstone, in the same transaction), and the rest of the store bundle: principals with
their ids and token hashes, grants, the capture review queue, the settings and the maintenance records.

It is resumable: each Revision is one transaction, and a re-run first compares the target's Revisions with the
source's, skips those it holds and continues after them, so nothing is ever written twice. A target whose history
differs (another Memory under the same id, a Revision with another hash, a scope bound elsewhere) is refused
before anything is written, with a hint. Vectors travel as they are stored (the target records the source's
embedding profile, so nothing is embedded again); only what the source lacks is left to ``memstone embed``.
An organization's own embedding profile (``memstone reembed --org``) travels too: the target records it through
its own org model migration (which creates the vector table of that dimension), staged with the source's stored
vectors, and that org's vectors follow. A target whose org keeps another profile is refused before anything is
written; a target engine that keeps no org profiles gets the entries, and a note leaves those orgs' vectors to
``embed --backfill`` (the store's profile) there, never stored under the wrong profile.
The copy ends with ``verify`` of the target and a comparison of every head with the source.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ..auth.store import PrincipalHost
from ..domain.errors import Conflict, IntegrityError, InvalidInput, ProfileMismatchError
from ..domain.fields import plain_dict
from ..domain.ids import EntryVersionId, MemoryId, SourceId
from ..domain.model import ArtifactRef, EntryVersion, Revision, Source
from ..domain.purge import Tombstone
from ..domain.scopes import org_of_scope
from ..domain.stamp import stamp_of
from ..ports import (
    BundleRecordsHost,
    EmbeddingProfile,
    HeadQuery,
    KindsQuery,
    ManifestQuery,
    MemoriesQuery,
    MemoryBackend,
    RevisionsQuery,
    ScopeBinding,
    ScopeQuery,
    SourcesQuery,
    StoredVectorsHost,
    VersionsQuery,
    WritePlan,
)
from .exchange import carry_purges
from .settle import settle

CopyProgress = Callable[[str, int, int], None]  # (phase, done, total)
PAGE = 500  # Revisions read (and compared) per round trip


@dataclass(frozen=True, slots=True, kw_only=True)
class CopyReport:
    """What a copy did, and what the target's check found."""

    memories: int
    revisions: int
    revisions_written: int
    revisions_present: int
    sources_written: int
    tombstones: int
    purged_now: int
    principal_rows: int = 0  # principals, tokens and grants new or changed in the target
    record_rows: int = 0  # capture queue, settings and maintenance rows new or changed in the target
    vectors: int = 0  # entries whose vectors were carried (the target has the source's embedding profile)
    verify_ok: bool
    damage: tuple[str, ...] = ()
    seconds: float = 0.0
    notes: tuple[str, ...] = field(default_factory=tuple)

    def to_dict(self) -> dict[str, object]:
        return {**plain_dict(self), "seconds": round(self.seconds, 3)}


@dataclass(slots=True)
class _Memory:
    head: Revision
    present: int  # Revisions the target already holds (checked equal)
    next: int  # the next Revision to write
    scope: ScopeBinding | None
    page: list[Revision] = field(default_factory=list)


async def copy_store(
    source: MemoryBackend,
    target: MemoryBackend,
    *,
    progress: CopyProgress | None = None,
    verify: bool = True,
    progress_interval_s: float = 1.0,
) -> CopyReport:
    """Copy every Memory of ``source`` into ``target`` (see the module docstring); returns what it did.

    ``progress(phase, done, total)`` is called at most every ``progress_interval_s`` while Revisions are written.
    """
    started = time.monotonic()
    say = progress or (lambda phase, done, total: None)
    notes: list[str] = []
    heads = sorted(await source.read(MemoriesQuery()), key=lambda h: h.memory_id)
    bindings = {b.memory_id: b for b in await source.read(ScopeQuery())}
    tombstones = await source.tombstones()
    purged = {t.entry_version_id: t for t in tombstones}
    total = sum(h.revision for h in heads)

    # 1. Everything is compared before anything is written.
    memories: dict[MemoryId, _Memory] = {}
    for n, head in enumerate(heads, 1):
        present = await _present(source, target, head)
        memories[head.memory_id] = _Memory(head, present, present + 1, bindings.get(head.memory_id))
        say("compare", n, len(heads))
    target_bindings = {b.scope: b for b in await target.read(ScopeQuery())}
    for mem in memories.values():
        if mem.scope is None:
            continue
        there = target_bindings.get(mem.scope.scope)
        if there is not None and there.memory_id != mem.scope.memory_id:
            raise Conflict(
                f"scope {mem.scope.scope} is bound to {there.memory_id} in the target, not {mem.scope.memory_id}",
                hint="copy into an empty store, or one an earlier copy of this source started",
            )
    orgs = await _org_profiles(source, target)
    await _copy_kinds(source, target)
    profile = source.state.embedding_profile
    if profile is not None:
        await target.configure_embedding(profile, record=True)
    if target.capabilities.org_embedding:
        for org, own in sorted(orgs.items()):
            await _record_org_profile(source, target, org, own, notes)

    # 2. Evidence first (idempotent), then the Revisions, Memory by Memory as far as their citations allow.
    sources_written = await _copy_sources(source, target, heads, say)
    present = sum(m.present for m in memories.values())
    written = versions = 0
    shown = time.monotonic()
    while True:
        progressed = False
        for mid in sorted(memories):
            mem = memories[mid]
            while mem.next <= mem.head.revision:
                rev = await _revision(source, mem)
                plan = await _plan(source, rev, purged, mem)
                if not _deps_met(plan, memories):
                    break
                async with target.begin() as uow:
                    got = await uow.commit(plan)
                    if rev.revision == 1 and mem.scope is not None and plan.bind_scope is None:
                        await uow.bind(mem.scope.scope, mid, mem.scope.created_at)
                if got.content_hash != rev.content_hash:
                    raise IntegrityError(f"revision {rev.revision} of {mid} did not reproduce its hash in the target")
                mem.next += 1
                written += 1
                versions += len(plan.new_versions)
                progressed = True
                if time.monotonic() - shown >= progress_interval_s or mem.next > mem.head.revision:
                    say("revisions", present + written, total)
                    shown = time.monotonic()
        if all(m.next > m.head.revision for m in memories.values()):
            break
        if not progressed:
            raise IntegrityError("the source cites Revisions it does not hold (artifact references)")
    for mem in memories.values():  # a copy interrupted between a Revision 1 and its binding
        if mem.scope is not None and mem.scope.scope not in target_bindings:
            async with target.begin() as uow:
                await uow.bind(mem.scope.scope, mem.head.memory_id, mem.scope.created_at)
    purged_now = await carry_purges(target, tombstones)
    principal_rows, record_rows = await _copy_bundle(source, target, _origin(heads), notes)
    vectors = await _copy_vectors(source, target, heads, bindings, orgs, notes) if profile or orgs else 0
    await settle(target, versions + vectors, say)  # the target's tables were written in bulk

    # 3. The check: the target verifies, and every head is the source's.
    damage: list[str] = []
    ok = True
    if verify:
        say("verify", 0, 1)
        report = await target.maintain("verify")
        ok, damage = report.ok, [*report.authority_damage, *report.projection_damage]
        say("verify", 1, 1)
    for head in heads:
        final = await target.read(HeadQuery(memory_id=head.memory_id))
        if final is None or final.content_hash != head.content_hash:
            ok = False
            damage.append(f"head of {head.memory_id} differs from the source's")
    return CopyReport(
        memories=len(heads), revisions=total, revisions_written=written, revisions_present=present,
        sources_written=sources_written, tombstones=len(tombstones), purged_now=purged_now, verify_ok=ok,
        principal_rows=principal_rows, record_rows=record_rows, vectors=vectors,
        damage=tuple(damage), seconds=time.monotonic() - started, notes=tuple(notes),
    )  # fmt: skip


async def copy_urls(
    source_url: str, target_url: str, *, progress: CopyProgress | None = None, verify: bool = True
) -> tuple[CopyReport, bool]:
    """Open both stores by URL (the source never created), copy, and verify the source too when ``verify``;
    returns the report and whether the source verified. What ``memstone copy`` runs."""
    from .facade import open_service

    if source_url == target_url:
        raise InvalidInput("the source and the target are the same store", hint="name another target")
    async with open_service(source_url, embedding=None, create=False) as src:
        async with open_service(target_url, embedding=None, create=True) as dst:
            report = await copy_store(src.backend, dst.backend, progress=progress, verify=verify)
        source_ok = (await src.backend.maintain("verify")).ok if verify else True
    return report, source_ok


async def _present(source: MemoryBackend, target: MemoryBackend, head: Revision) -> int:
    """How many of ``head``'s Revisions the target holds, each checked equal; refuses a different history."""
    there = await target.read(HeadQuery(memory_id=head.memory_id))
    if there is None:
        return 0
    hint = "copy into an empty store, or one an earlier copy of this source started"
    if there.revision > head.revision:
        raise Conflict(
            f"{head.memory_id} has {there.revision} Revisions in the target, more than the source's {head.revision}",
            hint=hint,
        )
    for first in range(1, there.revision + 1, PAGE):
        last = min(first + PAGE - 1, there.revision)
        mine = await source.read(RevisionsQuery(memory_id=head.memory_id, first=first, last=last))
        theirs = await target.read(RevisionsQuery(memory_id=head.memory_id, first=first, last=last))
        for a, b in zip(mine, theirs, strict=True):
            if a.content_hash != b.content_hash:
                raise Conflict(
                    f"{head.memory_id} in the target differs from the source at revision {a.revision}", hint=hint
                )
    return there.revision


async def _revision(source: MemoryBackend, mem: _Memory) -> Revision:
    if not mem.page or mem.page[0].revision != mem.next:
        last = min(mem.next + PAGE - 1, mem.head.revision)
        mem.page = await source.read(RevisionsQuery(memory_id=mem.head.memory_id, first=mem.next, last=last))
    return mem.page[0]


async def _plan(
    source: MemoryBackend, rev: Revision, purged: dict[EntryVersionId, Tombstone], mem: _Memory
) -> WritePlan:
    mem.page.pop(0)
    new_ids = tuple(
        c.to_entry_version_id for c in rev.changes if c.op in ("add", "revise") and c.to_entry_version_id is not None
    )
    versions = await source.read(VersionsQuery(memory_id=rev.memory_id, version_ids=new_ids))
    if len(versions) != len(new_ids):
        raise IntegrityError(f"revision {rev.revision} of {rev.memory_id} names a version the source does not hold")
    binding = mem.scope
    bind_now = binding is not None and rev.revision == 1 and binding.created_at == rev.created_at
    return WritePlan(
        memory_id=rev.memory_id,
        base_revision=rev.revision - 1,
        changes=rev.changes,
        new_versions=tuple(versions),
        **stamp_of(rev),
        bind_scope=binding.scope if bind_now and binding is not None else None,
        tombstones=tuple(purged[v.entry_version_id] for v in versions if v.entry_version_id in purged),
    )


def _deps_met(plan: WritePlan, memories: dict[MemoryId, _Memory]) -> bool:
    refs: set[ArtifactRef] = set(plan.artifacts)
    for v in plan.new_versions:
        refs.update(v.content.artifacts)
    for ref in refs:
        other = memories.get(ref.memory_id)
        if ref.memory_id != plan.memory_id and other is not None and other.next <= ref.revision:
            return False
    return True


def _origin(heads: Sequence[Revision]) -> str:
    """The source's name in the target's copy ledger: its oldest Memory id (ids are time-ordered ULIDs and a
    Memory is never deleted, so it names the store for its life; a store without a Memory is ``empty``)."""
    return min((h.memory_id for h in heads), default="empty")


async def _copy_bundle(source: MemoryBackend, target: MemoryBackend, origin: str, notes: list[str]) -> tuple[int, int]:
    """The rest of the store bundle: principals with their ids and token hashes (a token issued on the source
    authenticates on the target), grants, the capture queue, the settings and the maintenance records. A grant or
    record row an earlier copy from this source wrote and the source has deleted since is deleted in the target
    (``backends/sql/copy_ledger.py``), so a rerun converges; the target's own rows stay."""
    principal_rows = record_rows = 0
    if isinstance(source, PrincipalHost) and isinstance(target, PrincipalHost):
        records = await source.principal_store(read_only=True).records()
        principal_rows = await target.principal_store().insert_records(records, origin=origin)
    else:
        notes.append("principals, tokens and grants not copied: one of the two engines keeps none")
    if isinstance(source, BundleRecordsHost) and isinstance(target, BundleRecordsHost):
        record_rows = await target.put_bundle_rows(await source.bundle_rows(), origin=origin)
    else:
        notes.append("capture queue, settings and maintenance records not copied: one of the two engines keeps none")
    return principal_rows, record_rows


async def _org_profiles(source: MemoryBackend, target: MemoryBackend) -> dict[str, EmbeddingProfile]:
    """The source's organizations with a profile of their own; refuses, before anything is written, a target where
    one of them keeps another profile (its vectors could be stored under neither)."""
    orgs = await source.org_profiles()
    there = await target.org_profiles() if orgs else {}
    for org, own in sorted(orgs.items()):
        other = there.get(org)
        if other is not None and other.canonical() != own.canonical():
            raise ProfileMismatchError(
                f"organization {org}'s embedding profile in the target is {other.profile_id} ({other.dimension}-d), "
                f"not the source's {own.profile_id} ({own.dimension}-d)",
                hint=f"migrate it in the target first (memstone --url TARGET reembed --org {org} --profile "
                f"{own.profile_id}), or copy into a store where {org} has no profile of its own",
            )
    return orgs


async def _record_org_profile(
    source: MemoryBackend, target: MemoryBackend, org: str, profile: EmbeddingProfile, notes: list[str]
) -> None:
    """Record ``org``'s own profile in the target (absent there) by the target's own org model migration, which
    creates the vector table of its dimension, staged with the source's stored vectors of the org's Memories the
    target already holds (none in a fresh target). A source that lacks one of them leaves the org on the target's
    store profile, with a note; the migration is aborted and nothing of it stays."""
    if org in await target.org_profiles():
        return
    await target.start_migration(profile, org=org)
    try:
        while pending := await target.unstaged_versions(PAGE):
            ids = [v.entry_version_id for v in pending]
            found = await source.stored_vectors(ids, org=org) if isinstance(source, StoredVectorsHost) else None
            if found is None or any(i not in found for i in ids):
                await target.abort_migration()
                notes.append(
                    f"organization {org}'s embedding profile {profile.profile_id} was not recorded in the target: "
                    f"the source lacks vectors of entries the target holds; run `memstone --url TARGET reembed "
                    f"--org {org} --profile {profile.profile_id}` there"
                )
                return
            await target.stage_vectors({i: found[i] for i in ids})
        await target.finish_migration(profile)
    except BaseException:
        await target.abort_migration()
        raise


async def _copy_vectors(
    source: MemoryBackend,
    target: MemoryBackend,
    heads: Sequence[Revision],
    bindings: dict[MemoryId, ScopeBinding],
    orgs: dict[str, EmbeddingProfile],
    notes: list[str],
) -> int:
    """The vectors of every active head entry, read back from the source on the Memory's route (its org's own
    profile, or the store's) and stored as they are when the target's route for that Memory has the same profile
    (nothing is embedded again, and a vector the target already holds equal is not written again); others are left
    to backfill, with a note."""
    there = await target.org_profiles()
    left: dict[str, int] = {}
    carried = 0
    if isinstance(source, StoredVectorsHost):
        for head in heads:
            bound = bindings.get(head.memory_id)
            org = org_of_scope(bound.scope) if bound is not None else None
            src_org, dst_org = (org if org in orgs else None), (org if org in there else None)
            have = orgs[src_org] if src_org else source.state.embedding_profile
            want = there[dst_org] if dst_org else target.state.embedding_profile
            manifest = await source.read(ManifestQuery(ref=head.ref))
            ids = [m.entry_version_id for m in manifest.values() if m.state == "active"]
            if have is None or want is None or have.canonical() != want.canonical():
                if org is not None and ids:
                    left[org] = left.get(org, 0) + len(ids)
                continue
            for i in range(0, len(ids), PAGE):
                found = await source.stored_vectors(ids[i : i + PAGE], org=src_org)
                if found is None:
                    break
                if found and isinstance(target, StoredVectorsHost):
                    held = await target.stored_vectors(list(found), org=dst_org) or {}
                    found = {vid: vectors for vid, vectors in found.items() if held.get(vid) != vectors}
                if found:
                    carried += await target.put_vectors(found, profile=want if dst_org else None)
    for org, count in sorted(left.items()):
        if org in there:
            where = f"`memstone embed --backfill --org {org}` there (its own profile in the target)"
        else:
            where = f"`memstone embed --backfill` there (the target's store profile) or a later `reembed --org {org}`"
        own = orgs.get(org)
        why = (
            f"its own profile {own.profile_id} ({own.dimension}-d) is not one the target keeps for it"
            if own is not None
            else "its profile in the target is not the source's"
        )
        notes.append(f"{count} entries of organization {org}: vectors not carried, {why}; left for {where}")
    missing = await target.vector_backlog() + sum([await target.vector_backlog(org=o) for o in sorted(there)])
    if missing:
        notes.append(f"{missing} entries have no vector in the target: run `memstone embed --backfill` there")
    return carried


async def _copy_kinds(source: MemoryBackend, target: MemoryBackend) -> None:
    policy = await source.read(KindsQuery())
    if not policy.recorded:
        return
    async with target.begin() as uow:
        now = await uow.record_kinds(policy.kinds)
    if now != policy.kinds:
        raise Conflict(
            f"the target's kind policy {now!r} is not the source's {policy.kinds!r}",
            hint="copy into an empty store",
        )


async def _copy_sources(
    source: MemoryBackend, target: MemoryBackend, heads: Sequence[Revision], say: CopyProgress
) -> int:
    """Every source the history cites (the same set an export writes); returns how many were new in the target."""
    wanted: set[SourceId] = set()
    for head in heads:
        for first in range(1, head.revision + 1, PAGE):
            last = min(first + PAGE - 1, head.revision)
            revs = await source.read(RevisionsQuery(memory_id=head.memory_id, first=first, last=last))
            ids = tuple(
                c.to_entry_version_id for r in revs for c in r.changes if c.to_entry_version_id and c.op != "reactivate"
            )
            wanted.update(s for r in revs for s in r.sources)
            versions: list[EntryVersion] = await source.read(VersionsQuery(memory_id=head.memory_id, version_ids=ids))
            wanted.update(s for v in versions for s in v.content.sources)
    ordered = sorted(wanted)
    written = 0
    for i in range(0, len(ordered), PAGE):
        chunk = tuple(ordered[i : i + PAGE])
        have = {s.source_id for s in await target.read(SourcesQuery(source_ids=chunk))}
        found: list[Source] = await source.read(SourcesQuery(source_ids=chunk))
        for s in found:
            stored = await target.put_source(s)
            if stored.content_hash != s.content_hash:
                raise Conflict(
                    f"source {s.source_id} exists in the target with other content", hint="copy into an empty store"
                )
            written += s.source_id not in have
        say("sources", min(i + PAGE, len(ordered)), len(ordered))
    return written


__all__ = ["CopyProgress", "CopyReport", "copy_store", "copy_urls"]
