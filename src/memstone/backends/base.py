"""DatabaseMemoryBackend: the shared skeleton every SQL adapter extends (the RFC's database SPI).

It owns what must not be written twice: async serialization (one worker thread per store), the unit of work,
canonical and predecessor validation, manifest construction, revision hashing, search-hit filtering against
the authoritative manifest, verification and rebuilds. A concrete adapter supplies only synchronous
primitives: transactions, DDL, CRUD, head compare-and-swap and its search dialect.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import threading
import time
import uuid
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager, asynccontextmanager
from dataclasses import dataclass, replace
from functools import partial
from typing import Literal, NamedTuple, TypeVar, cast

from ..domain.analyzer import informative_terms, query_terms
from ..domain.canonical import (
    EMBEDDING_CONTENT_TAG,
    REVISION_CONTENT_TAG,
    canonical_bytes,
    canonical_json,
    tagged_sha256,
)
from ..domain.errors import (
    ArtifactNotFoundError,
    CapabilityNotSupportedError,
    IntegrityError,
    InvalidInput,
    MemstoneError,
    ProfileMismatchError,
    RevisionConflictError,
    StoreMigratingError,
)
from ..domain.ids import EntryId, EntryVersionId, MemoryId
from ..domain.manifest import EMPTY_ROOT, ManifestReader
from ..domain.model import (
    ArtifactRef,
    EntryContent,
    EntryVersion,
    ManifestEntry,
    MemoryHit,
    Revision,
    RevisionChanges,
    Source,
    VerifyReport,
    revision_content,
)
from ..domain.plan import apply_plan, check_version_hash, projection_text
from ..domain.rules import check_vector
from ..domain.search import (
    FTS_COVERAGE_POWER,
    Candidate,
    Fused,
    admit_dense,
    candidate_depth,
    convex_fuse,
    fts_required_terms,
    l2_to_cosine,
    matched_share_in,
    rrf_fuse,
)
from ..ports import (
    RECORD_QUERIES,
    Capabilities,
    ContentQuery,
    EmbeddingProfile,
    HeadQuery,
    LiveVersion,
    ManifestQuery,
    MemoriesQuery,
    Query,
    RevisionQuery,
    ScopeBinding,
    ScopeQuery,
    SearchPage,
    SearchRequest,
    SourcesQuery,
    StoreState,
    VectorStatusQuery,
    VersionsQuery,
    WritePlan,
)
from .records import RecordsBackendMixin

T = TypeVar("T")
_CHANNELS: tuple[Literal["fts", "vector"], ...] = ("fts", "vector")


class HeadRow(NamedTuple):
    """A projection row: an active entry of a Memory's current head, as the adapter stores it."""

    memory_id: MemoryId
    entry_id: EntryId
    entry_version_id: EntryVersionId
    entry_content_hash: str
    searchable_text: str
    bm25: float = 0.0  # the engine's relevance of a full-text candidate (higher is better), 0 elsewhere


class HitRow(NamedTuple):
    """What a search hit shows of an entry version, read from its authoritative (append-only) version row.

    It carries the whole hashed content, so the search re-checks the bytes it serves against the hash the
    head's manifest committed to (RFC "Search and reads", condition 3).
    """

    entry_id: EntryId
    entry_version_id: EntryVersionId
    content: EntryContent
    entry_content_hash: str
    created_at: str

    @classmethod
    def of(cls, v: EntryVersion) -> HitRow:
        return cls(v.entry_id, v.entry_version_id, v.content, v.entry_content_hash, v.provenance.created_at)


@dataclass(frozen=True, slots=True)
class VectorRow:
    """Metadata of one stored vector window, binding it to an exact entry version and profile."""

    memory_id: MemoryId
    entry_id: EntryId
    entry_version_id: EntryVersionId
    chunk: int
    chunk_count: int
    entry_content_hash: str
    embedding_content_hash: str
    profile_id: str


@dataclass(frozen=True, slots=True)
class VectorCandidate:
    memory_id: MemoryId
    entry_id: EntryId
    entry_version_id: EntryVersionId
    distance: float


class DatabaseMemoryBackend(RecordsBackendMixin, ABC):
    """Shared domain logic over synchronous adapter primitives. Subclasses implement the ``_*_sync`` methods."""

    vector_min_cosine: float = 0.2

    def __init__(self) -> None:
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix=type(self).__name__)
        self._lock = threading.Lock()  # held by whichever thread is using the connection
        self._manifests = ManifestReader(self._load_node_sync, load_many=self._load_nodes_sync)
        self._closed = False
        self.vector_profile: EmbeddingProfile | None = None  # the profile writes and searches use now
        self._recorded_profile: EmbeddingProfile | None = None  # the store's, as of the last COMMIT seen
        self.applied_migrations: tuple[int, ...] = ()  # the schema migrations the last open applied
        self._complete_cache: dict[tuple[str, int], bool] = {}
        self._complete_generation = ""
        self._verified: dict[str, tuple[EntryContent, str]] = {}  # version id -> content verified, its hash
        self._lease_holder = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:12]}"

    # ------------------------------------------------------------------ adapter primitives
    @property
    @abstractmethod
    def capabilities(self) -> Capabilities: ...

    @property
    def state(self) -> StoreState:
        """What this store holds now: the embedding profile recorded in it (as configured at open)."""
        return StoreState(
            embedding_profile=self._recorded_profile,
            schema_version=self._schema_version(),
            applied_migrations=self.applied_migrations,
        )

    @abstractmethod
    def _schema_version(self) -> int:
        """The schema version of the open store."""

    @abstractmethod
    def _write_txn(self) -> AbstractContextManager[None]:
        """An exclusive write transaction (SQLite: BEGIN IMMEDIATE)."""

    @abstractmethod
    def _read_txn(self) -> AbstractContextManager[None]:
        """A read transaction with one consistent snapshot."""

    @abstractmethod
    def _head_sync(self, memory_id: MemoryId) -> Revision | None: ...

    @abstractmethod
    def _revision_sync(self, memory_id: MemoryId, revision: int) -> Revision | None: ...

    @abstractmethod
    def _revisions_sync(self, memory_id: MemoryId, first: int, last: int) -> list[Revision]: ...

    @abstractmethod
    def _raw_revisions_sync(self) -> Iterator[tuple[Revision, str]]:
        """Every stored Revision with its stored canonical content text, for verification."""

    @abstractmethod
    def _heads_sync(self) -> list[Revision]: ...

    @abstractmethod
    def _load_node_sync(self, node_hash: str) -> bytes: ...

    def _load_nodes_sync(self, node_hashes: Sequence[str]) -> Mapping[str, bytes]:
        """Several manifest nodes in one round trip (adapters override; this default loads them one by one)."""
        return {h: self._load_node_sync(h) for h in node_hashes}

    @abstractmethod
    def _insert_revision_sync(self, revision: Revision, content: str) -> None: ...

    @abstractmethod
    def _insert_nodes_sync(self, nodes: Mapping[str, bytes]) -> None: ...

    @abstractmethod
    def _insert_versions_sync(self, versions: Sequence[EntryVersion]) -> None: ...

    @abstractmethod
    def _cas_head_sync(self, memory_id: MemoryId, base: int, new: int) -> bool:
        """Move the head from ``base`` to ``new`` (``base == 0`` inserts it). False when the head moved."""

    @abstractmethod
    def _versions_sync(self, memory_id: MemoryId | None, version_ids: Sequence[str]) -> list[EntryVersion]: ...

    @abstractmethod
    def _entry_versions_sync(self, memory_id: MemoryId | None, entry_id: EntryId) -> list[EntryVersion]: ...

    def _hit_rows_sync(self, memory_id: MemoryId, version_ids: Sequence[str]) -> list[HitRow]:
        """The hit fields of some versions of one Memory (adapters may read just these columns)."""
        return [HitRow.of(v) for v in self._versions_sync(memory_id, version_ids)]

    @abstractmethod
    def _iter_versions_sync(self) -> Iterator[EntryVersion]: ...

    @abstractmethod
    def _versions_by_hash_sync(self, memory_id: MemoryId, hashes: Sequence[str]) -> list[EntryVersion]: ...

    @abstractmethod
    def _sources_sync(self, source_ids: Sequence[str]) -> list[Source]: ...

    @abstractmethod
    def _put_source_sync(self, source: Source) -> None: ...

    @abstractmethod
    def _scope_sync(self, scope: str | None) -> list[ScopeBinding]: ...

    @abstractmethod
    def _bind_scope_sync(self, scope: str, memory_id: MemoryId, created_at: str) -> bool:
        """Bind a scope; False when another Memory already holds it."""

    @abstractmethod
    def _put_projection_sync(self, revision: int, version: EntryVersion, text: str) -> None: ...

    @abstractmethod
    def _drop_projection_sync(self, memory_id: MemoryId, entry_id: EntryId) -> None: ...

    @abstractmethod
    def _head_rows_sync(self, memory_id: MemoryId | None) -> Iterator[HeadRow]: ...

    @abstractmethod
    def _clear_projections_sync(self) -> None: ...

    @abstractmethod
    def _fts_check_sync(self) -> list[str]:
        """Damage found by the engine's own full-text index check."""

    @abstractmethod
    def _fts_candidates_sync(
        self, memory_ids: Sequence[str], terms: Sequence[str], depth: int, request: SearchRequest, with_text: bool
    ) -> list[HeadRow]:
        """Top ``depth`` rows matching any of ``terms`` by the engine's ranking (text only when asked)."""

    # Vector primitives. A backend without a vector engine keeps these defaults and reports vector=False.
    def _vector_profile_sync(self) -> EmbeddingProfile | None:
        """The embedding profile recorded in the store, if any."""
        return None

    def _record_vector_profile_sync(self, profile: EmbeddingProfile) -> None:
        raise CapabilityNotSupportedError("vector", "this backend has no vector projection")

    def _put_vectors_sync(self, row: VectorRow, vectors: tuple[tuple[float, ...], ...]) -> None:
        raise CapabilityNotSupportedError("vector", "this backend has no vector projection")

    def _drop_vectors_sync(self, memory_id: MemoryId, entry_id: EntryId) -> None:
        return None

    def _vector_knn_sync(
        self, memory_ids: Sequence[str], vector: tuple[float, ...], k: int, *, exact: bool
    ) -> list[VectorCandidate]:
        """Nearest vector windows (one row per window), nearest first."""
        raise CapabilityNotSupportedError("vector", "this backend has no vector projection")

    def _vector_incomplete_sync(self, memory_id: MemoryId, profile_id: str, limit: int) -> list[HeadRow]:
        """Active head rows of a Memory with no complete vector projection for ``profile_id``."""
        return []

    def _vector_rows_sync(self) -> Iterator[VectorRow]:
        return iter(())

    def _replace_vector_tables_sync(self, profile: EmbeddingProfile) -> None:
        """Drop every vector and recreate the vector tables for ``profile`` (a migration step)."""
        raise CapabilityNotSupportedError("vector", "this backend has no vector projection")

    @abstractmethod
    def _close_sync(self) -> None: ...

    # ------------------------------------------------------------------ async serialization
    async def _run(self, fn: Callable[..., T], *args: object) -> T:
        if self._closed:
            raise InvalidInput("this store is closed")
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, partial(self._locked, fn, *args))

    def _locked(self, fn: Callable[..., T], *args: object) -> T:
        with self._lock:
            return fn(*args)

    async def _run_short(self, fn: Callable[..., T], *args: object) -> T:
        """A short read-only job: on the caller's thread when the store is idle (no thread hand-off), else queued.

        Only for bounded reads (an FTS search reads at most its candidate depth): it briefly holds the event loop.
        """
        if self._closed:
            raise InvalidInput("this store is closed")
        if self._lock.acquire(blocking=False):
            try:
                return fn(*args)
            finally:
                self._lock.release()
        return await self._run(fn, *args)

    async def aclose(self) -> None:
        if self._closed:
            return
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(self._executor, partial(self._locked, self._close_sync))
        self._closed = True
        self._executor.shutdown(wait=True)

    # ------------------------------------------------------------------ unit of work
    @asynccontextmanager
    async def begin(self) -> AsyncIterator[_UnitOfWork]:
        uow = _UnitOfWork(self)
        yield uow

    def _commit_sync(self, plan: WritePlan) -> Revision:
        after_commit: list[Callable[[], None]] = []
        with self._write_txn():
            revision = self._apply_plan_sync(plan, after_commit)
        for update in after_commit:  # caches change only after COMMIT: a rolled-back write leaves them as they were
            update()
        return revision

    def _apply_plan_sync(self, plan: WritePlan, after_commit: list[Callable[[], None]]) -> Revision:
        memory_id = plan.memory_id
        self._check_not_migrating_sync()
        head = self._head_sync(memory_id)
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
        applied = apply_plan(plan, base_root, self._manifests, self._version_number_sync)
        self._check_evidence(plan)
        revision = applied.revision
        new_revision = revision.revision
        self._insert_revision_sync(revision, applied.content)
        self._insert_nodes_sync(applied.nodes)
        self._insert_versions_sync(plan.new_versions)
        if not self._cas_head_sync(memory_id, plan.base_revision, new_revision):
            raise RevisionConflictError(memory_id, expected=plan.base_revision)
        if plan.bind_scope is not None and not self._bind_scope_sync(plan.bind_scope, memory_id, plan.created_at):
            winner = self._scope_sync(plan.bind_scope)
            raise RevisionConflictError(winner[0].memory_id if winner else memory_id, expected=0, actual=None)
        new_versions: dict[str, EntryVersion] = {v.entry_version_id: v for v in plan.new_versions}
        reactivated = [op.entry_version_id for op in applied.projection if op.reactivated and op.entry_version_id]
        loaded = {v.entry_version_id: v for v in self._versions_sync(memory_id, reactivated)} if reactivated else {}
        vectors_complete = True
        moved_to = self._moved_profile_sync() if plan.vectors else None
        profile_moved = moved_to is not None
        for op in applied.projection:
            if op.op == "put":
                assert op.entry_version_id is not None
                if op.reactivated:
                    version = loaded[op.entry_version_id]
                    check_version_hash(version)
                else:
                    version = new_versions[op.entry_version_id]
                self._put_projection_sync(new_revision, version, projection_text(version))
                # A revised entry's old vectors are stale: they are removed in this same transaction.
                self._drop_vectors_sync(memory_id, op.entry_id)
                vectors = None if profile_moved else plan.vectors.get(version.entry_version_id)
                if vectors and self.vector_profile is not None:
                    self._store_vectors_sync(version, vectors)
                else:
                    vectors_complete = False
            else:
                self._drop_projection_sync(memory_id, op.entry_id)
                self._drop_vectors_sync(memory_id, op.entry_id)
        if profile_moved:
            # Trigger: another process migrated the store to a new embedding profile after this one opened it.
            # Why: this write's vectors come from the old model; storing them would fail (or mix profiles) and
            #      the write would be lost with them.
            # Outcome: the write commits without vectors (backfill embeds them with the new model) and this
            #      backend stops writing vectors of a profile the store no longer has.
            after_commit.append(partial(self._adopt_moved_profile, moved_to))
        elif vectors_complete and self._complete_cache.get((memory_id, plan.base_revision)) is True:
            after_commit.append(partial(self._complete_cache.__setitem__, (memory_id, new_revision), True))
        self._records_after_plan_sync(memory_id, revision.changes, new_versions, loaded)  # archive + slug checks
        return revision

    def _moved_profile_sync(self) -> tuple[EmbeddingProfile | None] | None:
        """``(recorded,)`` when the store's recorded profile is no longer the one this backend writes, else None."""
        if self.vector_profile is None:
            return None
        recorded = self._vector_profile_sync()
        if recorded is not None and recorded.canonical() == self.vector_profile.canonical():
            return None
        return (recorded,)

    def _adopt_moved_profile(self, moved_to: tuple[EmbeddingProfile | None] | None) -> None:
        self._recorded_profile = moved_to[0] if moved_to else None
        self.vector_profile = None  # this process's model is not the store's any more: no vectors from it
        self._complete_cache.clear()

    def _version_number_sync(self, version_id: EntryVersionId) -> int | None:
        found = self._versions_sync(None, [version_id])
        return found[0].version if found else None

    # ------------------------------------------------------------------ vectors
    def _embedding_hash(self, entry_content_hash: str) -> str:
        assert self.vector_profile is not None
        payload = canonical_bytes(self.vector_profile.canonical()) + b"\0" + entry_content_hash.encode("ascii")
        return tagged_sha256(EMBEDDING_CONTENT_TAG, payload)

    def _store_vectors_sync(self, version: EntryVersion, vectors: tuple[tuple[float, ...], ...]) -> None:
        """Validate vectors against the fixed profile (inside the transaction) and store them."""
        profile = self.vector_profile
        assert profile is not None
        if not vectors:
            raise InvalidInput("an entry's vector projection needs at least one vector")
        for vec in vectors:
            check_vector(vec, dimension=profile.dimension)
        for chunk, vec in enumerate(vectors):
            row = VectorRow(
                memory_id=version.memory_id,
                entry_id=version.entry_id,
                entry_version_id=version.entry_version_id,
                chunk=chunk,
                chunk_count=len(vectors),
                entry_content_hash=version.entry_content_hash,
                embedding_content_hash=self._embedding_hash(version.entry_content_hash),
                profile_id=profile.profile_id,
            )
            self._put_vectors_sync(row, (vec,))

    def _vector_complete_sync(self, memory_id: MemoryId) -> bool:
        """Whether every active head entry has a vector projection for the store's profile (cached by head)."""
        profile = self.vector_profile
        if profile is None:
            return False
        head = self._head_sync(memory_id)
        if head is None:
            return False
        key = (memory_id, head.revision)
        generation = self._vector_generation_sync()
        if generation != self._complete_generation:
            self._complete_cache.clear()
            self._complete_generation = generation
        cached = self._complete_cache.get(key)
        if cached is None:
            cached = not self._vector_incomplete_sync(memory_id, profile.profile_id, 1)
            if len(self._complete_cache) > 4096:
                self._complete_cache.clear()
            self._complete_cache[key] = cached
        return cached

    def _vector_generation_sync(self) -> str:
        """A token that changes whenever vectors change outside ordinary writes (backfill, migration)."""
        return ""

    def _bump_vector_generation_sync(self) -> None:
        return None

    async def configure_embedding(self, profile: EmbeddingProfile | None, *, record: bool) -> EmbeddingProfile | None:
        """Check ``profile`` against the store's recorded one (recording it when none is and ``record``).

        Returns the store's profile. A different profile raises ProfileMismatchError naming both.
        """

        def run() -> EmbeddingProfile | None:
            recorded = self._vector_profile_sync()
            if profile is None:
                self.vector_profile = None
                return recorded
            if recorded is None:
                if not record:
                    self.vector_profile = None
                    return None
                with self._write_txn():
                    recorded = self._vector_profile_sync()
                    if recorded is None:
                        self._record_vector_profile_sync(profile)
                        recorded = profile
                self._recorded_profile = recorded  # caches change only after COMMIT
            if recorded.canonical() != profile.canonical():
                raise ProfileMismatchError(
                    f"this store's embedding profile is {recorded.profile_id} ({recorded.model}, "
                    f"{recorded.dimension}-d), not {profile.profile_id} ({profile.model}, {profile.dimension}-d)",
                    hint=f"open it with its own model, or migrate: memstone reembed --profile {profile.profile_id}",
                )
            self.vector_profile = recorded
            return recorded

        return await self._run(run)

    def _vector_begin_sync(
        self, memory_ids: Sequence[str], vector: tuple[float, ...], k: int, *, exact: bool
    ) -> Callable[[], list[VectorCandidate]] | None:
        """Start the vector scan of a hybrid search so it can overlap the FTS statement; None runs it later.

        Adapters whose scan runs outside the database connection (SQLite's in-process index) return a callable
        that finishes it: the search calls it after its FTS channel, on the same thread.
        """
        return None

    def _checked_vector(self, vector: tuple[float, ...]) -> None:
        profile = self.vector_profile
        if profile is None:
            raise CapabilityNotSupportedError("vector", "no embedding profile is configured for this store")
        check_vector(vector, dimension=profile.dimension)

    def _vector_candidates_sync(
        self,
        memory_ids: Sequence[str],
        vector: tuple[float, ...],
        depth: int,
        request: SearchRequest,
        begun: Callable[[], list[VectorCandidate]] | None = None,
    ) -> list[VectorCandidate]:
        """Per-entry nearest candidates (max similarity over an entry's windows), nearest first."""
        self._checked_vector(vector)
        windows = (
            begun()
            if begun is not None
            else self._vector_knn_sync(memory_ids, vector, _window_depth(depth), exact=request.exact)
        )
        best: dict[tuple[str, str], VectorCandidate] = {}
        for w in windows:
            key = (w.memory_id, w.entry_id)
            if key not in best or w.distance < best[key].distance:
                best[key] = w
        ordered = sorted(best.values(), key=lambda c: (c.distance, c.memory_id, c.entry_id))
        if request.kinds or request.tags or request.important is not None or request.mandatory is not None:
            ordered = [c for c in ordered if self._head_matches_sync(c, request)]
        return ordered[:depth]

    @abstractmethod
    def _head_matches_sync(self, cand: VectorCandidate, request: SearchRequest) -> bool:
        """Whether a vector candidate's head projection row passes the request's kind, tag and flag filters.

        No default: an engine that answered True here would serve filtered-out entries on the vector channel.
        """

    async def missing_vectors(self, limit: int) -> list[EntryVersion]:
        """Current versions of active entries (across Memories) that lack a vector for the store's profile."""

        def run() -> list[EntryVersion]:
            profile = self.vector_profile
            if profile is None:
                raise CapabilityNotSupportedError("vector", "no embedding profile is configured for this store")
            out: list[EntryVersion] = []
            with self._read_txn():
                for head in self._heads_sync():
                    rows = self._vector_incomplete_sync(head.memory_id, profile.profile_id, limit - len(out))
                    if rows:
                        out.extend(self._versions_sync(head.memory_id, [r.entry_version_id for r in rows]))
                    if len(out) >= limit:
                        break
            return out

        return await self._run(run)

    async def vector_backlog(self) -> int:
        """How many active entries (across Memories) lack a vector for the store's profile."""

        def run() -> int:
            profile = self.vector_profile
            if profile is None:
                return 0
            with self._read_txn():
                return sum(
                    len(self._vector_incomplete_sync(h.memory_id, profile.profile_id, 10**9))
                    for h in self._heads_sync()
                )

        return await self._run(run)

    async def put_vectors(self, batch: Mapping[EntryVersionId, tuple[tuple[float, ...], ...]]) -> int:
        """Store vectors for entry versions that are still current and active; returns how many were stored."""

        def run() -> int:
            stored = 0
            with self._write_txn():
                self._check_not_migrating_sync()
                for vid, vectors in batch.items():
                    found = self._versions_sync(None, [vid])
                    if not found:
                        continue
                    v = found[0]
                    head = self._head_sync(v.memory_id)
                    m = self._manifests.lookup(head.manifest_root, v.entry_id) if head else None
                    if m is None or m.state != "active" or m.entry_version_id != vid:
                        continue  # superseded while it was being embedded: never write a stale vector
                    check_version_hash(v)
                    self._drop_vectors_sync(v.memory_id, v.entry_id)
                    self._store_vectors_sync(v, vectors)
                    stored += 1
                self._bump_vector_generation_sync()
            return stored

        return await self._run(run)

    # ------------------------------------------------------------------ model migration (memstone reembed)
    # Writes pause (StoreMigratingError) while every active head is embedded with the new model into a staging
    # table; one final transaction swaps the vector projection and the recorded profile. Until that commit the
    # store serves the old profile, so an interrupted migration leaves it usable as it was.
    def _migration_sync(self) -> dict[str, object] | None:
        return None

    def _set_migration_sync(self, value: dict[str, object] | None) -> None:
        raise CapabilityNotSupportedError("vector", "this backend has no vector projection")

    def _unstaged_sync(self, limit: int) -> list[tuple[MemoryId, EntryVersionId]]:
        return []

    def _stage_sync(self, version: EntryVersion, vectors: tuple[tuple[float, ...], ...]) -> None:
        raise CapabilityNotSupportedError("vector", "this backend has no vector projection")

    def _staged_sync(self) -> Iterator[tuple[EntryVersionId, tuple[tuple[float, ...], ...]]]:
        return iter(())

    # The migration holds a lease in the meta table: its holder and an expiry it renews with every staged batch.
    # Liveness is the lease, not a process id, so it means the same on every machine sharing a server engine.
    migration_lease_s: float = 120.0

    def _check_not_migrating_sync(self) -> None:
        state = self._migration_sync()
        if state is None:
            return
        expires = state.get("expires_at")
        if not isinstance(expires, int | float) or expires < time.time():
            # Trigger: a migration's lease ran out (its process died or hung), or a marker without a lease.
            # Why: the old profile's projection was never touched, so the store is consistent as it was.
            # Outcome: clear the stale marker and its staging rows; writes continue on the old profile.
            self._set_migration_sync(None)
            return
        raise StoreMigratingError(
            f"writes are paused: the store is migrating to embedding profile {state.get('profile_id')}",
            hint="retry shortly; the migration resumes writes when it finishes",
        )

    def _renew_lease_sync(self, profile_id: str) -> None:
        """Take or renew the migration lease (inside a write transaction); refused while another holder has it."""
        state = self._migration_sync()
        if state is not None and state.get("holder") != self._lease_holder:
            self._check_not_migrating_sync()  # clears an expired lease, else raises: another migration runs
            state = None
        if state is not None and state.get("profile_id") != profile_id:
            raise StoreMigratingError(f"the store is migrating to {state.get('profile_id')}, not {profile_id}")
        self._set_migration_sync(
            {
                "profile_id": profile_id,
                "holder": self._lease_holder,
                "expires_at": time.time() + self.migration_lease_s,
            }
        )

    def _hold_lease_sync(self) -> str:
        """The profile id of the migration this backend holds; StoreMigratingError when the lease was lost."""
        state = self._migration_sync()
        if state is None or state.get("holder") != self._lease_holder:
            raise StoreMigratingError(
                "this migration lost its lease (it ran out and was cleared, or another migration took over)",
                hint="run memstone reembed again; the store kept its old profile",
            )
        return str(state.get("profile_id"))

    async def start_migration(self, profile: EmbeddingProfile) -> None:
        """Pause writes and begin staging vectors of ``profile`` (refused while another migration runs)."""

        def run() -> None:
            with self._write_txn():
                state = self._migration_sync()
                if state is not None and state.get("holder") == self._lease_holder:
                    raise StoreMigratingError("this store already runs a migration")
                self._renew_lease_sync(profile.profile_id)

        await self._run(run)

    async def unstaged_versions(self, limit: int) -> list[EntryVersion]:
        """Up to ``limit`` current active versions that have no staged vector yet."""

        def run() -> list[EntryVersion]:
            with self._read_txn():
                out: list[EntryVersion] = []
                for mid, vid in self._unstaged_sync(limit):
                    out.extend(self._versions_sync(mid, [vid]))
                return out

        return await self._run(run)

    async def finish_migration(self, profile: EmbeddingProfile) -> None:
        """Swap the vector projection and the recorded profile to the staged ones, in one transaction."""

        def run() -> None:
            old = self.vector_profile
            self.vector_profile = profile  # the staged vectors are stored (and hashed) under the new profile
            try:
                with self._write_txn():
                    if self._hold_lease_sync() != profile.profile_id:
                        raise StoreMigratingError(f"this store is not migrating to {profile.profile_id}")
                    if self._unstaged_sync(1):
                        raise InvalidInput("some active entries are not embedded with the new model yet")
                    staged = dict(self._staged_sync())
                    self._replace_vector_tables_sync(profile)
                    for head in self._heads_sync():
                        for e in self._manifests.iter_entries(head.manifest_root):
                            if e.state != "active":
                                continue
                            (v,) = self._versions_sync(head.memory_id, [e.entry_version_id])
                            check_version_hash(v)
                            self._store_vectors_sync(v, staged[v.entry_version_id])
                    self._set_migration_sync(None)
            except BaseException:
                self.vector_profile = old  # caches change only after COMMIT: a failed swap keeps the old profile
                raise
            self._recorded_profile = profile
            self._complete_cache.clear()

        await self._run(run)

    async def abort_migration(self) -> None:
        """Drop the staged vectors and resume writes on the old profile."""

        def run() -> None:
            with self._write_txn():
                state = self._migration_sync()
                if state is not None and state.get("holder") == self._lease_holder:
                    self._set_migration_sync(None)  # never another holder's migration

        await self._run(run)

    async def stage_vectors(self, batch: Mapping[EntryVersionId, tuple[tuple[float, ...], ...]]) -> None:
        """Stage vectors of the new profile (renewing the migration's lease)."""

        def run() -> None:
            with self._write_txn():
                self._renew_lease_sync(self._hold_lease_sync())
                for vid, vectors in batch.items():
                    (v,) = self._versions_sync(None, [vid])
                    self._stage_sync(v, vectors)

        await self._run(run)

    def _bytes_match(self, version_id: str, content: EntryContent, expected_hash: str) -> bool:
        """Whether ``content`` hashes to ``expected_hash``.

        Remembers the content it verified per version id and compares field by field next time (a fraction of a
        canonical-JSON hash): a row changed since is unequal to what was verified, so it is re-hashed and fails.
        """
        known = self._verified.get(version_id)
        if known is not None and known[1] == expected_hash and known[0] == content:
            return True
        if content.content_hash != expected_hash:
            return False
        if len(self._verified) > 100_000:
            self._verified.clear()
        self._verified[version_id] = (content, expected_hash)
        return True

    def _check_evidence(self, plan: WritePlan) -> None:
        wanted = set(plan.sources)
        for v in plan.new_versions:
            wanted.update(v.content.sources)
        if wanted:
            found = {s.source_id for s in self._sources_sync(sorted(wanted))}
            missing = sorted(wanted - found)
            if missing:
                raise InvalidInput(
                    f"unknown source(s): {', '.join(missing)}", hint="persist evidence with record_source first"
                )
        refs = set(plan.artifacts)
        for v in plan.new_versions:
            refs.update(v.content.artifacts)
        for ref in sorted(refs):
            if self._revision_sync(ref.memory_id, ref.revision) is None:
                raise InvalidInput(f"artifact {ref} does not exist")

    # ------------------------------------------------------------------ reads
    async def read(self, query: Query[T]) -> T:
        # Each query class names its result type; the dispatch below returns exactly that type for it (the
        # conformance suite checks every query's result), so the one cast of the read path lives here.
        if isinstance(query, RECORD_QUERIES):
            return cast(T, await self._run(self._records_read_sync, query))
        return cast(T, await self._run(self._read_sync, query))

    def _read_sync(self, query: Query[object]) -> object:
        with self._read_txn():
            match query:
                case HeadQuery(memory_id=mid):
                    return self._head_sync(mid)
                case RevisionQuery(ref=ref):
                    return self._revision_sync(ref.memory_id, ref.revision)
                case ManifestQuery(ref=ref, entry_ids=ids):
                    rev = self._revision_sync(ref.memory_id, ref.revision)
                    if rev is None:
                        raise ArtifactNotFoundError(f"no revision {ref}")
                    if ids is None:
                        return {e.entry_id: e for e in self._manifests.iter_entries(rev.manifest_root)}
                    out: dict[EntryId, ManifestEntry] = {}
                    for eid in ids:
                        found = self._manifests.lookup(rev.manifest_root, eid)
                        if found is not None:
                            out[eid] = found
                    return out
                case VersionsQuery(memory_id=mid, version_ids=vids, entry_id=eid):
                    if eid is not None:
                        return self._entry_versions_sync(mid, eid)
                    return self._versions_sync(mid, list(vids))
                case ContentQuery(memory_id=mid, content_hashes=hashes):
                    head = self._head_sync(mid)
                    if head is None:
                        return []
                    live = []
                    for v in self._versions_by_hash_sync(mid, hashes):
                        m = self._manifests.lookup(head.manifest_root, v.entry_id)
                        if m is not None and m.entry_version_id == v.entry_version_id:
                            live.append(LiveVersion(v, m.state))
                    return live
                case MemoriesQuery():
                    return self._heads_sync()
                case SourcesQuery(source_ids=sids):
                    return self._sources_sync(list(sids))
                case ScopeQuery(scope=scope):
                    return self._scope_sync(scope)
                case VectorStatusQuery(memories=refs):
                    return {ref.memory_id: self._vector_complete_sync(ref.memory_id) for ref in refs}
        raise InvalidInput(f"unknown read query {query!r}")

    async def put_source(self, source: Source) -> Source:
        def put() -> Source:
            with self._write_txn():
                existing = self._sources_sync([source.source_id])
                if existing:
                    return existing[0]
                self._put_source_sync(source)
                return source

        return await self._run(put)

    async def changes(self, memory: ArtifactRef, since_revision: int | None) -> tuple[RevisionChanges, ...]:
        def read() -> tuple[RevisionChanges, ...]:
            with self._read_txn():
                target = self._revision_sync(memory.memory_id, memory.revision)
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
                revs = self._revisions_sync(memory.memory_id, first, memory.revision)
                return tuple(RevisionChanges(memory_ref=r.ref, changes=r.changes) for r in revs)

        return await self._run(read)

    async def expand(self, anchors: Sequence[tuple[ArtifactRef, EntryId, EntryVersionId]]) -> tuple[EntryVersion, ...]:
        def read() -> tuple[EntryVersion, ...]:
            out = []
            with self._read_txn():
                for ref, eid, vid in anchors:
                    rev = self._revision_sync(ref.memory_id, ref.revision)
                    if rev is None:
                        raise ArtifactNotFoundError(f"no revision {ref}")
                    m = self._manifests.lookup(rev.manifest_root, eid)
                    if m is None or m.entry_version_id != vid:
                        from ..domain.errors import InvalidCitationError

                        raise InvalidCitationError(f"{ref} has no entry {eid} at version {vid}")
                    versions = self._versions_sync(ref.memory_id, [vid])
                    if not versions or versions[0].entry_id != eid:
                        from ..domain.errors import InvalidCitationError

                        raise InvalidCitationError(f"version {vid} of entry {eid} is not stored")
                    v = versions[0]
                    if v.content.content_hash != m.entry_content_hash or v.entry_content_hash != m.entry_content_hash:
                        from ..domain.errors import InvalidCitationError

                        raise InvalidCitationError(f"version {vid} does not match the hash its Revision committed to")
                    out.append(v)
            return tuple(out)

        return await self._run(read)

    # ------------------------------------------------------------------ search
    async def search(self, request: SearchRequest) -> SearchPage:
        if "vector" in request.channels:
            return await self._run(self._search_sync, request)
        return await self._run_short(self._search_sync, request)

    def _search_heads_sync(self, request: SearchRequest) -> dict[str, Revision]:
        """The head Revision of every Memory searched, read inside the search's own read transaction.

        ``request.memories`` must still be current; ``request.heads`` are taken at whatever their head is now,
        so a writer committing between the caller's resolve and this read never fails the search (issue 12).
        """
        heads: dict[str, Revision] = {}
        for ref in request.memories:
            head = self._head_sync(ref.memory_id)
            if head is None:
                raise ArtifactNotFoundError(f"no memory {ref.memory_id}")
            if head.revision != ref.revision:
                raise CapabilityNotSupportedError(
                    "non-head-search",
                    f"{ref} is not the current head of {ref.memory_id} (head is revision {head.revision})",
                    hint="search takes current heads only; read the head and search it",
                )
            heads[ref.memory_id] = head
        for mid in request.heads:
            if mid in heads:
                continue
            head = self._head_sync(mid)
            if head is None:
                raise ArtifactNotFoundError(f"no memory {mid}")
            heads[mid] = head
        return heads

    def _search_sync(self, request: SearchRequest) -> SearchPage:
        with self._read_txn():
            heads = self._search_heads_sync(request)
            memory_ids = sorted(heads)
            depth = candidate_depth(request.limit)
            begun = None
            if "fts" in request.channels and "vector" in request.channels and request.query_vector is not None:
                # Hybrid: the vector scan runs while the FTS statement does (both release the GIL).
                self._checked_vector(request.query_vector)
                begun = self._vector_begin_sync(
                    memory_ids, request.query_vector, _window_depth(depth), exact=request.exact
                )
            fts: list[tuple[Candidate, float, float]] | None = None
            if "fts" in request.channels:
                terms = query_terms(request.query)
                informative = informative_terms(terms)
                required = fts_required_terms(terms) / max(1, len(informative))
                fts = []
                if informative:
                    # Only informative terms reach MATCH; each row's matched share is both its admission (the
                    # RFC's coverage) and its per-candidate confidence in the fusion.
                    for row in self._fts_candidates_sync(memory_ids, informative, depth, request, True):
                        share = matched_share_in(informative, row.searchable_text)
                        if share >= required - 1e-9:
                            fts.append((Candidate(row.memory_id, row.entry_id, row.entry_version_id), row.bm25, share))
            vec: list[tuple[Candidate, float]] | None = None
            floor = request.weights.get("vector_min_cosine", self.vector_min_cosine)
            if "vector" in request.channels:
                if request.query_vector is None:
                    raise InvalidInput("vector search needs a query vector")
                vec = admit_dense(
                    [
                        (Candidate(vc.memory_id, vc.entry_id, vc.entry_version_id), l2_to_cosine(vc.distance))
                        for vc in self._vector_candidates_sync(memory_ids, request.query_vector, depth, request, begun)
                    ],
                    floor=floor,
                    min_top=request.weights.get("vector_min_top", -1.0),
                )
            fused = self._fuse(request, fts, vec, floor)
            hits: list[MemoryHit] = []
            start = 0
            while start < len(fused) and len(hits) < request.limit:
                batch = fused[start : start + request.limit]
                start += len(batch)
                by_memory: dict[str, list[str]] = {}
                for cand, *_ in batch:
                    by_memory.setdefault(cand.memory_id, []).append(cand.entry_version_id)
                loaded: dict[str, HitRow] = {
                    row.entry_version_id: row
                    for mid, vids in by_memory.items()
                    for row in self._hit_rows_sync(MemoryId(mid), vids)
                }
                manifest: dict[tuple[str, str], ManifestEntry] = {}
                for mid in by_memory:
                    wanted = [cand.entry_id for cand, *_ in batch if cand.memory_id == mid]
                    for eid, entry in self._manifests.lookup_many(heads[mid].manifest_root, wanted).items():
                        manifest[(mid, eid)] = entry
                for cand, score, ranks, parts in batch:
                    m = manifest.get((cand.memory_id, cand.entry_id))
                    hit_row = loaded.get(cand.entry_version_id)
                    # A projection row that disagrees with the authoritative manifest never reaches a caller: the
                    # head's manifest must hold this exact version, active, and the bytes served must hash to the
                    # hash it committed to. A tampered version row is skipped here; `verify` reports it.
                    if m is None or m.state != "active" or m.entry_version_id != cand.entry_version_id:
                        continue
                    if (
                        hit_row is None
                        or hit_row.entry_id != cand.entry_id
                        or hit_row.entry_content_hash != m.entry_content_hash
                        or not self._bytes_match(cand.entry_version_id, hit_row.content, m.entry_content_hash)
                    ):
                        continue
                    hits.append(self._hit(heads[cand.memory_id], hit_row, score, ranks, parts))
                    if len(hits) >= request.limit:
                        break
            if hits:
                # Annotate each hit with its Memory's scope here, in the search's own read transaction.
                bound = {b.memory_id: b.scope for b in self._scope_sync(None)}
                if bound:
                    hits = [replace(h, scope=bound.get(h.memory_ref.memory_id)) for h in hits]
            return SearchPage(hits=tuple(hits), heads=tuple(heads[mid].ref for mid in memory_ids))

    @staticmethod
    def _fuse(
        request: SearchRequest,
        fts: list[tuple[Candidate, float, float]] | None,
        vec: list[tuple[Candidate, float]] | None,
        floor: float,
    ) -> list[Fused]:
        """The request's fusion over the admitted channel lists (domain/search.py holds both rules)."""
        if request.fusion == "rrf":
            channels = {"fts": [c for c, *_ in fts or ()], "vector": [c for c, _ in vec or ()]}
            chosen: dict[str, Sequence[Candidate]] = {k: v for k, v in channels.items() if k in request.channels}
            return [Fused(c, score, ranks, {"fusion": score}) for c, score, ranks in rrf_fuse(chosen)]
        w = request.weights
        hybrid = fts is not None and vec is not None
        return convex_fuse(
            fts,
            vec,
            vector_share=(
                w.get("share_low", 0.5),
                w.get("share_high", 0.5),
                w.get("share_pivot", 0.5),
                w.get("share_width", 0.05),
            ),
            coverage_power=w.get("coverage_power", FTS_COVERAGE_POWER) if hybrid else FTS_COVERAGE_POWER,
            cosine_floor=floor,
        )

    @staticmethod
    def _hit(head: Revision, row: HitRow, score: float, ranks: dict[str, int], parts: dict[str, float]) -> MemoryHit:
        c = row.content
        return MemoryHit(
            memory_ref=head.ref,
            entry_id=row.entry_id,
            entry_version_id=row.entry_version_id,
            text=c.text,
            score=score,
            matched_by=tuple(ch for ch in _CHANNELS if ch in ranks),
            kind=c.kind,
            title=c.title,
            tags=c.tags,
            important=c.important,
            mandatory=c.mandatory,
            entry_content_hash=row.entry_content_hash,
            updated_at=row.created_at,
            ranks=ranks,
            slug=c.slug,
            contributions=parts,
        )

    # ------------------------------------------------------------------ maintenance
    async def maintain(self, task: Literal["verify", "rebuild"]) -> VerifyReport:
        if task == "verify":
            return await self._run(self._verify_sync)
        return await self._run(self._rebuild_sync)

    def _verify_authority_sync(self) -> tuple[VerifyReport, list[Revision]]:
        damage: list[str] = []
        revisions = 0
        node_seen: set[str] = set()
        version_hash: dict[str, tuple[str, EntryId, MemoryId, bool]] = {}
        versions = 0
        for v in self._iter_versions_sync():
            versions += 1
            good = v.content.content_hash == v.entry_content_hash
            if not good:
                damage.append(f"entry version {v.entry_version_id} ({v.entry_id}) does not match its content hash")
            version_hash[v.entry_version_id] = (v.entry_content_hash, v.entry_id, v.memory_id, good)
            if v.previous_version_id is not None:
                prev = version_hash.get(v.previous_version_id)
                if prev is None or prev[1] != v.entry_id or prev[2] != v.memory_id:
                    damage.append(f"entry version {v.entry_version_id} has a broken predecessor link")
        chains: dict[str, int] = {}
        for rev, stored in self._raw_revisions_sync():
            revisions += 1
            expected_content = canonical_json(revision_content(rev.manifest_root, rev.changes))
            if stored != expected_content:
                damage.append(f"revision {rev.ref} content does not match its stored fields")
            if tagged_sha256(REVISION_CONTENT_TAG, stored.encode("utf-8")) != rev.content_hash:
                damage.append(f"revision {rev.ref} does not match its content hash")
            last = chains.get(rev.memory_id, 0)
            if rev.revision != last + 1:
                damage.append(f"revision chain of {rev.memory_id} jumps from {last} to {rev.revision}")
            chains[rev.memory_id] = rev.revision
            try:
                for h in self._manifests.iter_node_hashes(rev.manifest_root):
                    if h in node_seen:
                        continue
                    node_seen.add(h)
                    node = self._manifests.node(h)
                    for e in node.entries or ():
                        known = version_hash.get(e.entry_version_id)
                        if known is None:
                            damage.append(f"revision {rev.ref} names missing version {e.entry_version_id}")
                        elif known[0] != e.entry_content_hash or known[1] != e.entry_id or known[2] != rev.memory_id:
                            damage.append(f"revision {rev.ref} manifest disagrees with version {e.entry_version_id}")
            except (IntegrityError, KeyError, ValueError) as exc:
                damage.append(f"revision {rev.ref} manifest is unreadable: {exc}")
        heads = self._heads_sync()
        for head in heads:
            if chains.get(head.memory_id) != head.revision:
                damage.append(f"head of {head.memory_id} is not its last revision")
        report = VerifyReport(
            revisions_checked=revisions,
            versions_checked=versions,
            nodes_checked=len(node_seen),
            authority_damage=tuple(damage),
        )
        return report, heads

    def _expected_projection(self, heads: list[Revision]) -> dict[tuple[str, str], tuple[str, str]]:
        expected: dict[tuple[str, str], tuple[str, str]] = {}  # (memory, entry) -> (version, hash)
        for head in heads:
            active = [e for e in self._manifests.iter_entries(head.manifest_root) if e.state == "active"]
            ids = [e.entry_version_id for e in active]
            for i in range(0, len(ids), 500):
                for v in self._versions_sync(head.memory_id, ids[i : i + 500]):
                    expected[(head.memory_id, v.entry_id)] = (v.entry_version_id, v.entry_content_hash)
        return expected

    def _verify_sync(self) -> VerifyReport:
        with self._read_txn():
            report, heads = self._verify_authority_sync()
            damage: list[str] = []
            expected_versions = self._expected_projection(heads)
            versions_cache: dict[str, EntryVersion] = {}
            seen: set[tuple[str, str]] = set()  # (memory, entry)
            rows = 0
            for row in self._head_rows_sync(None):
                rows += 1
                key: tuple[str, str] = (row.memory_id, row.entry_id)
                seen.add(key)
                want = expected_versions.get(key)
                if want is None:
                    damage.append(f"projection has {row.entry_id} of {row.memory_id}, which is not active at the head")
                    continue
                if (row.entry_version_id, row.entry_content_hash) != want:
                    damage.append(f"projection of {row.entry_id} points at the wrong version or hash")
                    continue
                v = (
                    versions_cache.get(row.entry_version_id)
                    or self._versions_sync(row.memory_id, [row.entry_version_id])[0]
                )
                if row.searchable_text != projection_text(v):
                    damage.append(f"projection text of {row.entry_id} does not match its version")
            for key in sorted(set(expected_versions) - seen):
                damage.append(f"projection is missing active entry {key[1]} of {key[0]}")
            damage.extend(self._fts_check_sync())
            damage.extend(self._vector_check_sync(heads))
            damage.extend(self._records_check_sync())
        return replace(report, projections_checked=rows, projection_damage=tuple(damage))

    def _vector_check_sync(self, heads: list[Revision]) -> list[str]:
        """Stale, orphaned or mis-hashed vectors are projection damage (missing ones only make it incomplete)."""
        damage: list[str] = []
        profile = self.vector_profile or self._vector_profile_sync()
        if profile is None:
            return damage
        saved, self.vector_profile = self.vector_profile, profile
        try:
            for row in self._vector_rows_sync():
                if not self._vector_row_valid_sync(row, profile):
                    damage.append(f"vector window {row.chunk} of {row.entry_id} is stale, orphaned or mis-hashed")
        finally:
            self.vector_profile = saved
        return damage

    def _vector_row_valid_sync(self, row: VectorRow, profile: EmbeddingProfile) -> bool:
        if row.profile_id != profile.profile_id or row.embedding_content_hash != self._embedding_hash(
            row.entry_content_hash
        ):
            return False
        head = self._head_sync(row.memory_id)
        m = self._manifests.lookup(head.manifest_root, row.entry_id) if head else None
        return (
            m is not None
            and m.state == "active"
            and m.entry_version_id == row.entry_version_id
            and m.entry_content_hash == row.entry_content_hash
        )

    def _rebuild_sync(self) -> VerifyReport:
        with self._write_txn():
            report, heads = self._verify_authority_sync()
            if report.authority_damage:
                raise IntegrityError(
                    "authoritative data is damaged; projections were not rebuilt: "
                    + "; ".join(report.authority_damage[:5]),
                    hint="restore the database from a backup; memstone never rewrites authoritative rows",
                )
            self._clear_projections_sync()
            for head in heads:
                active = [e for e in self._manifests.iter_entries(head.manifest_root) if e.state == "active"]
                ids = [e.entry_version_id for e in active]
                for i in range(0, len(ids), 500):
                    for v in self._versions_sync(head.memory_id, ids[i : i + 500]):
                        self._put_projection_sync(head.revision, v, projection_text(v))
            profile = self.vector_profile or self._vector_profile_sync()
            if profile is not None:
                saved, self.vector_profile = self.vector_profile, profile
                try:
                    for row in list(self._vector_rows_sync()):
                        if not self._vector_row_valid_sync(row, profile):
                            self._drop_vectors_sync(row.memory_id, row.entry_id)  # backfill re-embeds it
                finally:
                    self.vector_profile = saved
                self._bump_vector_generation_sync()
            self._records_rebuild_sync()
            self._after_rebuild_sync()
        return self._verify_sync()

    def _after_rebuild_sync(self) -> None:
        return None


class _UnitOfWork:
    def __init__(self, backend: DatabaseMemoryBackend) -> None:
        self._backend = backend

    async def commit(self, plan: WritePlan) -> Revision:
        return await self._backend._run(self._backend._commit_sync, plan)

    async def bind(self, scope: str, memory_id: MemoryId, created_at: str) -> bool:
        return await self._backend._run(self._backend._bind_sync, scope, memory_id, created_at)

    async def record_kinds(self, kinds: tuple[str, ...] | None) -> tuple[str, ...] | None:
        return await self._backend._run(self._backend._record_kinds_sync, kinds)

    async def rollback(self) -> None:
        # Every commit runs in one database transaction that rolls back on any error, so nothing is pending.
        return None


def _window_depth(depth: int) -> int:
    """Vector windows fetched for ``depth`` entry candidates (an entry may have several windows)."""
    return min(4096, depth * 3)


def loads_json(text: str) -> object:
    try:
        return json.loads(text)
    except ValueError as exc:
        raise IntegrityError(f"stored JSON is unreadable: {exc}") from exc


__all__ = ["DatabaseMemoryBackend", "HeadRow", "MemstoneError", "VectorCandidate", "projection_text"]
