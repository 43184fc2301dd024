"""StoreCore: the ``MemoryBackend`` every SQL engine gets, built by composition over an :class:`Engine`.

It owns what must not be written twice: the unit of work and the write plan's application (through the domain's
``apply_plan``), canonical and predecessor validation, search-hit re-checks against the authoritative manifest,
verification and rebuilds, the vector projection's bookkeeping and the model migration. The components live beside
it (``search.py``, ``vectors.py``, ``migration.py``, ``records.py``, ``verify.py``); the engine supplies DDL,
transactions, its full-text dialect and its vector codec (``engine.py`` documents the interface and the isolation
contract).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from functools import cached_property, partial
from typing import TYPE_CHECKING, Literal, TypeVar, cast

from ...context_query import NeighboursQuery
from ...domain.errors import (
    ArtifactNotFoundError,
    CapabilityNotSupportedError,
    InvalidCitationError,
    InvalidInput,
    RevisionConflictError,
)
from ...domain.filters import EntryFilter
from ...domain.ids import EntryId, EntryVersionId, MemoryId
from ...domain.manifest import EMPTY_ROOT
from ...domain.model import (
    ArtifactRef,
    EntryVersion,
    ManifestEntry,
    Revision,
    RevisionChanges,
    Source,
    VerifyReport,
)
from ...domain.plan import apply_plan, check_version_hash, projection_text
from ...domain.purge import Tombstone
from ...ports import (
    RECORD_QUERIES,
    BundleRows,
    Capabilities,
    ContentQuery,
    EmbeddingProfile,
    HeadQuery,
    ManifestQuery,
    MemoriesQuery,
    Query,
    RevisionQuery,
    ScopeQuery,
    SearchPage,
    SearchRequest,
    SourcesQuery,
    StoreState,
    VectorStatusQuery,
    VersionsQuery,
    WritePlan,
)
from .capture_store import CaptureRecords
from .engine import Engine, StaleStart, snapshot_of
from .maintenance_port import maintenance_method
from .migration import ModelMigration
from .parts import StoreParts
from .purge import PurgePart, insert_tombstones
from .records import RecordsPart
from .search import SearchPart
from .vectors import VectorCandidate, VectorPart
from .verify import Maintenance

if TYPE_CHECKING:
    from .maintenance import MaintenanceRecords
    from .principals import SqlPrincipalStore

T = TypeVar("T")


class StoreCore:
    """The store over one engine. Engines build it as ``StoreCore(engine)`` and ``await core.open()``."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.parts = StoreParts(engine)
        self._vectors = VectorPart(self.parts, self._head_matches_sync)
        self._migration = ModelMigration(self.parts, self._vectors)
        self._records = RecordsPart(self.parts)
        self._search = SearchPart(self.parts, self._vectors)
        self._maintenance = Maintenance(self.parts, self._vectors, self._records)
        self.capture_records = CaptureRecords(engine)
        self._purge = PurgePart(self.parts)
        if self._purge.codec is not None:
            self.parts.purged_hashes = self._purge.purged_hashes_sync
        self._closed = False

    # ------------------------------------------------------------------ what the store is
    @property
    def capabilities(self) -> Capabilities:
        return self.engine.capabilities

    @property
    def state(self) -> StoreState:
        """What this store holds now: the embedding profile recorded in it (as configured at open)."""
        return StoreState(
            embedding_profile=self.parts.recorded_profile,
            schema_version=self.engine.schema_version,
            applied_migrations=self.parts.applied_migrations,
            org_profiles=dict(self.parts.org_profiles),
        )

    def principal_store(self, *, read_only: bool = False, owned: bool = False) -> SqlPrincipalStore:
        """The store's principals, tokens and grants (access control), in this engine's ``auth_*`` tables.
        ``owned``: closing the principal store closes this backend (a caller that opened the store for it)."""
        from .principals import SqlPrincipalStore  # only the servers and `memstone token` load access control

        return SqlPrincipalStore(self.engine, read_only=read_only, on_close=self.aclose if owned else None)

    def capture_store(self) -> CaptureRecords:
        """The capture review queue and the store's settings, in this engine's tables."""
        return self.capture_records

    async def bundle_rows(self) -> BundleRows:
        """The capture queue, settings and maintenance records as rows (``memstone copy``; sql/bundle_rows.py)."""

        from .bundle_rows import read_rows

        def read() -> BundleRows:
            with self.engine.read_txn():
                return read_rows(self.engine)

        return await self._run(read)

    async def put_bundle_rows(self, rows: BundleRows, *, origin: str | None = None) -> int:
        from .bundle_rows import write_rows

        def write() -> int:
            with self.engine.write_txn():
                return write_rows(self.engine, rows, origin)

        return await self._run(write)

    @property
    def vector_profile(self) -> EmbeddingProfile | None:
        return self.parts.vector_profile

    @property
    def migration_lease_s(self) -> float:
        return self.parts.migration_lease_s

    @migration_lease_s.setter
    def migration_lease_s(self, seconds: float) -> None:
        self.parts.migration_lease_s = seconds

    # ------------------------------------------------------------------ lifecycle and execution
    async def open(self) -> StoreCore:
        await self.engine.run(self._open_sync)
        return self

    def _open_sync(self) -> None:
        self.parts.applied_migrations = self.engine.open_sync(self)
        with self.engine.read_txn():
            self.parts.recorded_profile = self._vectors.recorded()
            self.parts.org_profiles = self._vectors.routes.org_profiles()

    def rebuild_archive(self) -> None:
        """A data migration's step: fill the archive projection from authority (inside its write transaction)."""
        self._records.rebuild()

    async def _run(self, fn: Callable[..., T], *args: object) -> T:
        if self._closed:
            raise InvalidInput("this store is closed")
        return await self.engine.run(fn, *args)

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        await self.engine.aclose()

    # ------------------------------------------------------------------ unit of work
    @asynccontextmanager
    async def begin(self) -> AsyncIterator[_UnitOfWork]:
        yield _UnitOfWork(self)

    def _commit_sync(self, plan: WritePlan) -> Revision:
        hinted: list[bool] = []  # one round trip where the engine can guard the write's start (``guarded_start``)
        try:
            return self._commit_once(plan, hinted)
        except StaleStart:
            pass  # nothing was written: read the start and write again
        except RevisionConflictError:
            if not hinted:
                raise
            # The head moved (nothing was written); the write read no head, so its retry reads it and says where.
        return self._commit_once(plan, None)

    def _commit_once(self, plan: WritePlan, hinted: list[bool] | None) -> Revision:
        after_commit: list[Callable[[], None]] = []
        with self.engine.conflict(plan.memory_id, plan.base_revision), self.engine.write_txn():
            self.engine.lock("meta:migration", shared=True)
            self.engine.lock(f"memory:{plan.memory_id}")
            if plan.bind_scope is not None:
                self.engine.lock(f"scope:{plan.bind_scope}")
            revision = self._apply_plan_sync(plan, after_commit, hinted)
        for update in after_commit:  # caches change only after COMMIT: a rolled-back write leaves them as they were
            update()
        self.parts.rows.cache_revision(revision)  # the next write's base, read back from here
        return revision

    def _apply_plan_sync(
        self, plan: WritePlan, after_commit: list[Callable[[], None]], hinted: list[bool] | None
    ) -> Revision:
        p, memory_id, routes = self.parts, plan.memory_id, self._vectors.routes
        start = routes.guarded_start(plan) if hinted is not None else None  # guarded after the locks: no trip
        live = None
        if start is None:
            live = p.rows.versions_by_hash_ahead(memory_id, plan.unless_live) if plan.unless_live else None
            start = routes.write_start(memory_id)  # one statement (with ``live``), after the locks
        elif hinted is not None:
            hinted.append(True)
        self._migration.check_not_migrating(lambda: routes.org_of(memory_id, plan.bind_scope), start.marker)
        head = p.rows.head_at(memory_id, start.head)
        if plan.base_revision == 0:
            if head is not None:
                raise RevisionConflictError(memory_id, expected=0, actual=head.revision)
            base_root = EMPTY_ROOT
        else:
            if head is None:
                raise ArtifactNotFoundError(f"no memory {memory_id}")
            if head.revision != plan.base_revision:
                raise RevisionConflictError(memory_id, expected=plan.base_revision, actual=head.revision)
            base_root = head.manifest_root
        if live is not None:
            p.refuse_live(live(), base_root)  # read after the locks: no other write changes it before this commits
        applied = apply_plan(plan, base_root, p.manifests, p.rows.version_number)
        self._check_evidence(plan)
        revision = applied.revision
        new_revision = revision.revision
        p.rows.insert_revision(revision, applied.content)
        p.rows.insert_nodes(applied.nodes)
        after_commit.append(partial(p.remember_written, plan.new_versions, p.rows.insert_versions(plan.new_versions)))
        self._check_tombstones(plan)
        if not p.rows.cas_head(memory_id, plan.base_revision, new_revision):
            raise RevisionConflictError(memory_id, expected=plan.base_revision)
        if plan.bind_scope is not None and not p.rows.bind_scope(plan.bind_scope, memory_id, plan.created_at):
            winner = p.rows.scopes(plan.bind_scope)
            raise RevisionConflictError(winner[0].memory_id if winner else memory_id, expected=0, actual=None)
        new_versions: dict[str, EntryVersion] = {v.entry_version_id: v for v in plan.new_versions}
        reactivated = [op.entry_version_id for op in applied.projection if op.reactivated and op.entry_version_id]
        loaded = {v.entry_version_id: v for v in p.rows.versions(memory_id, reactivated)} if reactivated else {}
        vectors_complete = True
        route = routes.route(memory_id, plan.bind_scope, start.profiles)  # the org's own profile+table, or the store's
        moved_to = self._vectors.moved() if plan.vectors and route.org is None else None
        profile_moved = moved_to is not None
        if plan.vectors and not profile_moved and (route.org is not None or plan.vector_profile is not None):
            self._vectors.check_route(route, plan.vector_profile or p.vector_profile)  # refused: nothing is stored
        for op in applied.projection:
            if op.op == "put":
                assert op.entry_version_id is not None
                if op.reactivated:
                    version = loaded[op.entry_version_id]
                    check_version_hash(version)
                else:
                    version = new_versions[op.entry_version_id]
                p.proj.put_head(new_revision, version, projection_text(version))
                # A revised entry's old vectors are stale: they are removed in this same transaction.
                self._vectors.drop(memory_id, op.entry_id, route, start.tables)
                vectors = None if profile_moved else plan.vectors.get(version.entry_version_id)
                if vectors and route.org is not None:
                    self._vectors.store(version, vectors, route)
                elif vectors and p.vector_profile is not None:
                    self._vectors.store(version, vectors)
                else:
                    vectors_complete = False
            else:
                p.proj.drop_head(memory_id, op.entry_id)
                self._vectors.drop(memory_id, op.entry_id, route, start.tables)
        if profile_moved:
            # Trigger: another process migrated the store to a new embedding profile after this one opened it.
            # Why: this write's vectors come from the old model; storing them would fail (or mix profiles) and
            #      the write would be lost with them.
            # Outcome: the write commits without vectors (backfill embeds them with the new model) and this
            #      backend stops writing vectors of a profile the store no longer has.
            after_commit.append(partial(self._vectors.adopt_moved, moved_to))
        elif vectors_complete and p.complete_cache.get((memory_id, plan.base_revision)) is True:
            after_commit.append(partial(p.complete_cache.__setitem__, (memory_id, new_revision), True))
        self._records.after_plan(memory_id, revision.changes, new_versions, loaded)  # archive + slug checks
        return revision

    def _check_tombstones(self, plan: WritePlan) -> None:
        """A purged version arrives only with its tombstone, and a tombstone only with its purged version."""
        purged = {v.entry_version_id: v for v in plan.new_versions if v.content.purged_hash is not None}
        named = {t.entry_version_id: t for t in plan.tombstones}
        for vid, v in purged.items():
            t = named.get(vid)
            if t is None or (t.memory_id, t.entry_id, t.version, t.entry_content_hash) != (
                v.memory_id,
                v.entry_id,
                v.version,
                v.entry_content_hash,
            ):
                raise InvalidInput(f"version {vid} is purged but its tombstone is missing or does not match it")
        stray = sorted(set(named) - set(purged))
        if stray:
            raise InvalidInput(f"tombstone of {stray[0]} names no purged version of this Revision")
        if plan.tombstones:
            if self._purge.codec is None:
                raise CapabilityNotSupportedError("purge", "this engine cannot hold purged versions")
            insert_tombstones(self.engine.conn, plan.tombstones)

    def _check_evidence(self, plan: WritePlan) -> None:
        wanted = set(plan.sources)
        for v in plan.new_versions:
            wanted.update(v.content.sources)
        if wanted:
            found = {s.source_id for s in self.parts.rows.sources(sorted(wanted))}
            missing = sorted(wanted - found)
            if missing:
                raise InvalidInput(
                    f"unknown source(s): {', '.join(missing)}", hint="persist evidence with record_source first"
                )
        refs = set(plan.artifacts)
        for v in plan.new_versions:
            refs.update(v.content.artifacts)
        for ref in sorted(refs):
            if self.parts.rows.revision(ref.memory_id, ref.revision) is None:
                raise InvalidInput(f"artifact {ref} does not exist")

    def _bind_sync(self, scope: str, memory_id: MemoryId, created_at: str) -> bool:
        with self.engine.write_txn():
            bound = self._records.bind_sync(scope, memory_id, created_at)
            if bound:
                self._vectors.bound(memory_id, scope)
            return bound

    def _head_matches_sync(self, cand: VectorCandidate, filters: EntryFilter) -> bool:
        """Whether a vector candidate's head projection row passes the search's kind, tag and flag filters."""
        return self.parts.proj.head_matches(cand.memory_id, cand.entry_id, filters)

    # ------------------------------------------------------------------ reads
    async def read(self, query: Query[T]) -> T:
        # Each query class names its result type; the dispatch below returns exactly that type for it (the
        # conformance suite checks every query's result), so the one cast of the read path lives here.
        if isinstance(query, RECORD_QUERIES):
            return cast(T, await self._run(self._records.read_sync, query))
        return cast(T, await self._run(self._read_sync, query))

    def _read_sync(self, query: Query[object]) -> object:
        p = self.parts
        once = isinstance(query, ContentQuery)  # its first statement reads all it needs of what may change
        with getattr(self.engine, "read_once", self.engine.read_txn)() if once else self.engine.read_txn():
            match query:
                case HeadQuery(memory_id=mid):
                    return p.rows.head(mid)
                case RevisionQuery(ref=ref):
                    return p.rows.revision(ref.memory_id, ref.revision)
                case ManifestQuery(ref=ref, entry_ids=ids):
                    rev = p.rows.revision(ref.memory_id, ref.revision)
                    if rev is None:
                        raise ArtifactNotFoundError(f"no revision {ref}")
                    if ids is None:
                        return {e.entry_id: e for e in p.manifests.iter_entries(rev.manifest_root)}
                    out: dict[EntryId, ManifestEntry] = {}
                    for eid in ids:
                        found = p.manifests.lookup(rev.manifest_root, eid)
                        if found is not None:
                            out[eid] = found
                    return out
                case VersionsQuery(memory_id=mid, version_ids=vids, entry_id=eid):
                    if eid is not None:
                        return p.rows.entry_versions(mid, eid)
                    return p.rows.versions(mid, list(vids))
                case ContentQuery(memory_id=mid, content_hashes=hashes):
                    number, matched = p.rows.head_versions_by_hash(mid, hashes)  # one statement
                    head = p.rows.head_at(mid, number) if matched else None
                    return p.live(matched, head.manifest_root) if head else []
                case MemoriesQuery():
                    return p.rows.heads()
                case SourcesQuery(source_ids=sids):
                    return p.rows.sources(list(sids))
                case ScopeQuery(scope=scope):
                    return p.rows.scopes(scope)
                case VectorStatusQuery(memories=refs):
                    if refs and snapshot_of(self.engine.conn) is not None:
                        p.rows.head(refs[0].memory_id)  # a kept read's first head brings the routing rows along
                    orgs = self._vectors.routes.org_profiles()  # read once for every Memory asked about
                    return {ref.memory_id: self._vectors.complete(ref.memory_id, orgs) for ref in refs}
                case NeighboursQuery():
                    return self._search.neighbours_sync(query)
        raise InvalidInput(f"unknown read query {query!r}")

    async def put_source(self, source: Source) -> Source:
        def put() -> Source:
            with self.engine.write_txn():
                self.engine.lock(f"source:{source.source_id}")
                existing = self.parts.rows.sources([source.source_id])
                if existing:
                    return existing[0]
                self.parts.rows.put_source(source)
                return source

        return await self._run(put)

    async def changes(self, memory: ArtifactRef, since_revision: int | None) -> tuple[RevisionChanges, ...]:
        def read() -> tuple[RevisionChanges, ...]:
            with self.engine.read_txn():
                target = self.parts.rows.revision(memory.memory_id, memory.revision)
                if target is None:
                    raise ArtifactNotFoundError(f"no revision {memory}")
                if since_revision is None:
                    first = memory.revision
                else:
                    if isinstance(since_revision, bool) or not isinstance(since_revision, int) or since_revision < 0:
                        raise InvalidInput(f"since_revision must be a non-negative integer, got {since_revision!r}")
                    if since_revision > memory.revision:
                        raise InvalidInput(
                            f"since_revision {since_revision} is after the target revision {memory.revision}"
                        )
                    first = since_revision + 1
                revs = self.parts.rows.revisions(memory.memory_id, first, memory.revision)
                return tuple(RevisionChanges(memory_ref=r.ref, changes=r.changes) for r in revs)

        return await self._run(read)

    async def expand(self, anchors: Sequence[tuple[ArtifactRef, EntryId, EntryVersionId]]) -> tuple[EntryVersion, ...]:
        def read() -> tuple[EntryVersion, ...]:
            p = self.parts
            out = []
            with self.engine.read_txn():
                for ref, eid, vid in anchors:
                    rev = p.rows.revision(ref.memory_id, ref.revision)
                    if rev is None:
                        raise ArtifactNotFoundError(f"no revision {ref}")
                    m = p.manifests.lookup(rev.manifest_root, eid)
                    if m is None or m.entry_version_id != vid:
                        raise InvalidCitationError(f"{ref} has no entry {eid} at version {vid}")
                    versions = p.rows.versions(ref.memory_id, [vid])
                    if not versions or versions[0].entry_id != eid:
                        raise InvalidCitationError(f"version {vid} of entry {eid} is not stored")
                    v = versions[0]
                    if v.content.content_hash != m.entry_content_hash or v.entry_content_hash != m.entry_content_hash:
                        raise InvalidCitationError(f"version {vid} does not match the hash its Revision committed to")
                    out.append(v)
            return tuple(out)

        return await self._run(read)

    # ------------------------------------------------------------------ search and maintenance
    async def search(self, request: SearchRequest) -> SearchPage:
        if self._closed:
            raise InvalidInput("this store is closed")
        if "vector" in request.channels:
            return await self.engine.run(self._search.search_sync, request)
        return await self.engine.run_short(self._search.search_sync, request)

    async def purge_versions(self, tombstones: Sequence[Tombstone]) -> bool:
        """Erase the content of these versions everywhere, keeping their tombstones (backends/sql/purge.py);
        False when the engine could not yet rewrite every file that held the bytes. With none, only that rewrite
        runs again (a re-run of a purge whose rewrite failed partway)."""
        if self._purge.codec is None:
            raise CapabilityNotSupportedError("purge", "this engine cannot purge")
        return await self._run(self._purge.purge_sync, tuple(tombstones))

    async def tombstones(self, entry_id: EntryId | None = None) -> tuple[Tombstone, ...]:
        if self._purge.codec is None:
            return ()
        return await self._run(self._purge.tombstones_sync, entry_id)

    async def maintain(self, task: Literal["verify", "rebuild"]) -> VerifyReport:
        if task == "verify":
            return await self._run(self._maintenance.verify_sync)
        return await self._run(self._maintenance.rebuild_sync)

    # ------------------------------------------------------------------ vectors and the model migration
    async def configure_embedding(self, profile: EmbeddingProfile | None, *, record: bool) -> EmbeddingProfile | None:
        """Check ``profile`` against the store's recorded one (recording it when none is and ``record``).

        Returns the store's profile. A different profile raises ProfileMismatchError naming both.
        """
        return await self._run(self._vectors.configure_sync, profile, record)

    async def missing_vectors(
        self, limit: int, *, org: str | None = None, memory_id: MemoryId | None = None
    ) -> list[EntryVersion]:
        """Current versions of active entries that lack a vector for their profile: of ``org``'s Memories, or
        (None) of the Memories on the store's profile; of that selection, only ``memory_id``'s when given."""
        return await self._run(self._vectors.missing_sync, limit, org, memory_id)

    async def vector_backlog(self, *, org: str | None = None, memory_id: MemoryId | None = None) -> int:
        """How many active entries of that selection (see ``missing_vectors``) lack a vector."""
        return await self._run(self._vectors.backlog_sync, org, memory_id)

    async def put_vectors(
        self,
        batch: Mapping[EntryVersionId, tuple[tuple[float, ...], ...]],
        *,
        profile: EmbeddingProfile | None = None,
    ) -> int:
        """Store vectors of ``profile`` (None: the store's) for entry versions that are still current and active;
        returns how many were stored. Refused (ProfileMismatchError) for a Memory whose org has another profile."""
        return await self._run(self._vectors.put_sync, batch, self._migration.check_not_migrating, profile)

    async def org_profiles(self) -> dict[str, EmbeddingProfile]:
        """The organizations' own embedding profiles, read now (``state.org_profiles`` follows)."""

        def read() -> dict[str, EmbeddingProfile]:
            with getattr(self.engine, "read_once", self.engine.read_txn)():  # one statement: its own snapshot
                found = self._vectors.routes.org_profiles()
            self.parts.org_profiles = found
            return dict(found)

        return await self._run(read)

    async def stored_vectors(
        self, version_ids: Sequence[EntryVersionId], *, org: str | None = None
    ) -> dict[EntryVersionId, tuple[tuple[float, ...], ...]] | None:
        """Stored vectors of these versions under the recorded profile, or ``org``'s own (``memstone copy``;
        None: unreadable)."""
        return await self._run(self._vectors.stored_sync, tuple(version_ids), org)

    async def start_migration(self, profile: EmbeddingProfile, *, org: str | None = None) -> None:
        """Pause writes (of ``org``'s Memories only, with an org) and begin staging vectors of ``profile``."""
        await self._run(self._migration.start_sync, profile, org)

    async def unstaged_versions(self, limit: int) -> list[EntryVersion]:
        """Up to ``limit`` current active versions that have no staged vector yet."""
        return await self._run(self._migration.unstaged_sync, limit)

    async def stage_vectors(self, batch: Mapping[EntryVersionId, tuple[tuple[float, ...], ...]]) -> None:
        """Stage vectors of the new profile (renewing the migration's lease); InvalidInput, nothing staged, when
        the batch names a version that is not the current version of an active entry or is purged (ports)."""
        await self._run(self._migration.stage_sync, batch)

    async def finish_migration(self, profile: EmbeddingProfile) -> None:
        """Swap the vector projection and the recorded profile to the staged ones, in one transaction."""
        await self._run(self._migration.finish_sync, profile)

    async def abort_migration(self) -> None:
        """Drop the staged vectors and resume writes on the old profile."""
        await self._run(self._migration.abort_sync)

    # ------------------------------------------------------------------ governed maintenance (ports.MaintenanceStore)
    @cached_property
    def _maintenance_records(self) -> MaintenanceRecords:
        from .maintenance import MaintenanceRecords  # built on first use: a hook never loads the maintenance types

        return MaintenanceRecords(self.engine)

    lease_maintenance = maintenance_method(lambda m: m.lease)
    release_maintenance = maintenance_method(lambda m: m.release)
    maintenance_ledger = maintenance_method(lambda m: m.ledger)
    save_maintenance = maintenance_method(lambda m: m.save)
    maintenance_runs = maintenance_method(lambda m: m.runs)
    maintenance_proposals = maintenance_method(lambda m: m.proposals)
    record_maintenance_event = maintenance_method(lambda m: m.record_event)
    maintenance_events = maintenance_method(lambda m: m.events)
    save_daemon_health = maintenance_method(lambda m: m.save_daemon)
    daemon_health = maintenance_method(lambda m: m.daemons)

    async def storage_upkeep(self) -> dict[str, object]:
        """Optimize the full-text index, checkpoint and vacuum (the engine's ``upkeep`` part; see upkeep.py)."""
        from .upkeep import run_upkeep

        return await self.engine.run(run_upkeep, self.engine)


class _UnitOfWork:
    def __init__(self, core: StoreCore) -> None:
        self._core = core

    async def commit(self, plan: WritePlan) -> Revision:
        return await self._core._run(self._core._commit_sync, plan)

    async def bind(self, scope: str, memory_id: MemoryId, created_at: str) -> bool:
        return await self._core._run(self._core._bind_sync, scope, memory_id, created_at)

    async def record_kinds(self, kinds: tuple[str, ...] | None) -> tuple[str, ...] | None:
        return await self._core._run(self._core._records.record_kinds_sync, kinds)

    async def rollback(self) -> None:
        # Every commit runs in one database transaction that rolls back on any error, so nothing is pending.
        return None


__all__ = ["StoreCore"]
