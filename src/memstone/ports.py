"""The ports: what the service needs from storage, embedding models and candidate pipelines.

Only domain types cross these Protocols; no SQL, connection or cursor leaves a backend.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from concurrent.futures import Future
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Generic, Literal, NamedTuple, Protocol, TypeVar, runtime_checkable

from .domain.calibration import Calibration
from .domain.embedding import EmbeddingProfile as EmbeddingProfile  # re-exported: the port names it
from .domain.filters import NO_FILTER, EntryFilter
from .domain.ids import EntryId, EntryVersionId, MemoryId, SourceId
from .domain.model import (
    ArtifactRef,
    Change,
    EntryInput,
    EntryVersion,
    ManifestEntry,
    MemoryHit,
    Revision,
    RevisionChanges,
    Source,
    Surface,
    VerifyReport,
)
from .domain.purge import Tombstone
from .domain.records import Record

if TYPE_CHECKING:  # annotations only: a hook does not load the maintenance types
    from .domain.maintenance import MaintenanceEvent, MaintenanceRun, Proposal, ProposalStatus

T = TypeVar("T")
R_co = TypeVar("R_co", covariant=True)
VectorBatch = Mapping[EntryVersionId, tuple[tuple[float, ...], ...]]  # every window's vector of each entry version


@dataclass(frozen=True, slots=True, kw_only=True)
class InferenceUsage:
    """What one model call cost."""

    calls: int = 0
    input_tokens: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class EmbeddingResult:
    vectors: tuple[tuple[float, ...], ...]
    usage: InferenceUsage = field(default_factory=InferenceUsage)


@dataclass(frozen=True, slots=True, kw_only=True)
class ChatResult:
    """One chat completion: the model's text and what the call cost (``output_tokens``: completion tokens)."""

    text: str
    usage: InferenceUsage = field(default_factory=InferenceUsage)
    output_tokens: int = 0


class ChatModel(Protocol):
    """A chat model (the optional maintenance model judge): one system and one user message in, text out."""

    @property
    def name(self) -> str: ...

    async def complete(self, system: str, user: str) -> ChatResult: ...


@runtime_checkable
class EmbeddingModel(Protocol):
    """Turns texts into unit vectors of the profile's dimension."""

    @property
    def profile(self) -> EmbeddingProfile: ...

    def windows(self, text: str) -> tuple[str, ...]:
        """Split ``text`` into pieces that each fit the model's input window (one piece if it fits)."""

    async def embed(self, texts: tuple[str, ...]) -> EmbeddingResult: ...


class CandidatePipeline(Protocol):
    """Generates untrusted entry candidates from persisted evidence (``remember(mode="extract")``).

    The candidates are proposals: the service validates them, refuses secrets and commits them through its one
    write path, exactly as if a caller had passed them as entries.
    """

    async def candidates(
        self, evidence: Sequence[Source], current_entries: Sequence[EntryVersion]
    ) -> tuple[EntryInput, ...]: ...


@dataclass(frozen=True, slots=True, kw_only=True)
class Capabilities:
    """What an engine can do, as a SQL dialect's ``supports_*`` flags (set at open); what a store holds: StoreState."""

    fts: bool = True
    fts_ranking: str = ""  # which function ranks full-text hits, as ``memstone doctor`` reports it ("" not said)
    vector: bool = False
    hybrid: bool = False
    concurrent_processes: bool = False
    persistent: bool = True
    org_embedding: bool = False  # an organization may keep its own embedding profile (backends/sql/routes.py)
    vector_later: bool = False  # a hybrid search may take SearchRequest.query_vector_later (FTS while it embeds)
    check_in_commit: bool = False  # a write's duplicate check may travel in its commit (WritePlan.unless_live)


@dataclass(frozen=True, slots=True, kw_only=True)
class StoreState:
    """What one store holds now, as opposed to what its engine can do: its recorded embedding profile."""

    embedding_profile: EmbeddingProfile | None = None
    schema_version: int = 0
    applied_migrations: tuple[int, ...] = ()  # the schema migrations this open applied (empty: it was current)
    org_profiles: Mapping[str, EmbeddingProfile] = field(default_factory=dict)  # the orgs' own, as last seen


@dataclass(frozen=True, slots=True, kw_only=True)
class WritePlan:
    """One write, fully computed outside the transaction; the unit of work validates and commits it."""

    memory_id: MemoryId
    base_revision: int  # 0 creates the Memory
    changes: tuple[Change, ...]
    new_versions: tuple[EntryVersion, ...]
    sources: tuple[SourceId, ...] = ()
    artifacts: tuple[ArtifactRef, ...] = ()
    author: str | None = None
    surface: Surface = "api"
    created_at: str = ""
    bind_scope: str | None = None
    vectors: VectorBatch = field(default_factory=dict)
    vector_profile: EmbeddingProfile | None = None  # of ``vectors`` (None: the store's); not the Memory's: refused
    # A replayed history (copy, import) may bring versions purged at the source, with their tombstones (issue 12).
    tombstones: tuple[Tombstone, ...] = ()
    unless_live: tuple[str, ...] = ()  # new entries' hashes: LiveDuplicateError (nothing written) if one is live


class MemoryUnitOfWork(Protocol):
    """The atomic boundary: Revision, head CAS, entry versions, head projection, FTS and vectors together."""

    async def commit(self, plan: WritePlan) -> Revision: ...

    async def bind(self, scope: str, memory_id: MemoryId, created_at: str) -> bool:
        """Bind an unbound scope to an existing Memory; False when the scope or the Memory is already bound."""
        ...

    async def record_kinds(self, kinds: tuple[str, ...] | None) -> tuple[str, ...] | None:
        """Fix the store's kind policy (``None`` = open) if it has none yet; return the policy in force.

        A store that already holds Memories without a recorded policy is open.
        """
        ...

    async def rollback(self) -> None: ...


@dataclass(frozen=True, slots=True, kw_only=True)
class SearchRequest:
    """A search over the current heads of explicit Memories (the service resolves mode and vectors)."""

    query: str
    memories: tuple[ArtifactRef, ...]
    limit: int
    channels: tuple[Literal["fts", "vector"], ...]
    query_vector: tuple[float, ...] | None = None
    query_profile: EmbeddingProfile | None = None  # of ``query_vector``; not the searched Memories' route's: refused
    query_vector_later: Future[tuple[float, ...]] | None = None  # hybrid, still embedding (Capabilities.vector_later)
    filters: EntryFilter = NO_FILTER  # kind, tags and flags (domain/filters.py)
    calibration: Calibration = field(default_factory=Calibration)  # the profile's (indexing.CALIBRATIONS)
    exact: bool = False  # vector channel: exact scan instead of the quantized fast path
    fusion: Literal["convex", "rrf"] = "convex"  # domain/search.py: convex scores in [0, 1], or the RFC's RRF
    # Memories searched at whatever their head is inside the search's own read transaction (named by id or
    # scope), besides ``memories``, which must still be current. See SearchPage.heads.
    heads: tuple[MemoryId, ...] = ()
    check_vectors: bool = False  # first check each Memory's vector projection is complete (SearchPage.incomplete)


@dataclass(frozen=True, slots=True, kw_only=True)
class SearchPage:
    """A search's hits and the exact head Revision of each Memory it searched (read in the same snapshot); with
    ``check_vectors``, the Memories whose vector projection is incomplete there (then no hit: nothing was searched)."""

    hits: tuple[MemoryHit, ...]
    heads: tuple[ArtifactRef, ...]
    incomplete: tuple[MemoryId, ...] = ()


class MemoryBackend(Protocol):
    """Storage for Memories: exact reads, atomic writes and retrieval over current heads."""

    @property
    def capabilities(self) -> Capabilities: ...

    def begin(self) -> AbstractAsyncContextManager[MemoryUnitOfWork]: ...

    @property
    def state(self) -> StoreState: ...

    async def read(self, query: Query[T]) -> T: ...

    async def put_source(self, source: Source) -> Source: ...

    async def changes(self, memory: ArtifactRef, since_revision: int | None) -> tuple[RevisionChanges, ...]: ...

    async def search(self, request: SearchRequest) -> SearchPage: ...

    async def expand(
        self, anchors: Sequence[tuple[ArtifactRef, EntryId, EntryVersionId]]
    ) -> tuple[EntryVersion, ...]: ...

    async def maintain(self, task: Literal["verify", "rebuild"]) -> VerifyReport: ...

    async def purge_versions(self, tombstones: Sequence[Tombstone]) -> bool:
        """Erase these versions' content, keeping tombstones (none: redo the file rewrite); False: WAL not empty."""
        ...

    async def tombstones(self, entry_id: EntryId | None = None) -> tuple[Tombstone, ...]: ...

    # The vector projection (RFC: one fixed embedding profile per store).
    async def configure_embedding(
        self, profile: EmbeddingProfile | None, *, record: bool
    ) -> EmbeddingProfile | None: ...

    # ``org``: that organization's Memories (on its own profile, if it has one); None: those on the store's profile.
    # ``memory_id``: of that selection, only this Memory's entries (the daemon's per-scope embedding loop).
    async def missing_vectors(
        self, limit: int, *, org: str | None = None, memory_id: MemoryId | None = None
    ) -> list[EntryVersion]: ...

    async def vector_backlog(self, *, org: str | None = None, memory_id: MemoryId | None = None) -> int: ...

    async def put_vectors(self, batch: VectorBatch, *, profile: EmbeddingProfile | None = None) -> int: ...

    async def org_profiles(self) -> dict[str, EmbeddingProfile]: ...  # read now (``state.org_profiles`` follows)

    # Model migration (memstone reembed): start, stage every unstaged active version, finish (or abort); ``org``:
    # only that organization's Memories move, to its own profile.
    async def start_migration(self, profile: EmbeddingProfile, *, org: str | None = None) -> None: ...

    async def unstaged_versions(self, limit: int) -> list[EntryVersion]: ...

    # All or none: a batch naming any version but the current one of an active entry (superseded, forgotten,
    # purged, unknown) is refused with InvalidInput and stages nothing.
    async def stage_vectors(self, batch: VectorBatch) -> None: ...

    async def finish_migration(self, profile: EmbeddingProfile) -> None: ...

    async def abort_migration(self) -> None: ...

    async def aclose(self) -> None: ...


# Reads are one method taking a small closed set of query values, so the port stays narrow; each query class
# names its result type, so ``read(q)`` is typed without a cast at the call site.
class Query(Generic[R_co]):
    """A read query whose result is an ``R_co``."""

    __slots__ = ()


class ScopeBinding(NamedTuple):
    """A scope URI bound to a Memory, and when."""

    scope: str
    memory_id: MemoryId
    created_at: str


class LiveVersion(NamedTuple):
    """An entry version that is current at a Memory's head, and its state there."""

    version: EntryVersion
    state: Literal["active", "inactive"]


class LiveSlug(NamedTuple):
    """An active head entry that holds a slug."""

    memory_id: MemoryId
    entry_id: EntryId
    kind: str
    slug: str


class IncomingLink(NamedTuple):
    """A current active version (at head ``ref``) with a relation to a target."""

    ref: ArtifactRef
    version: EntryVersion


class ArchiveMatch(NamedTuple):
    """A superseded version that matched, the current version of its entry, and the head it is current at; with
    the engine's BM25 of the match (>= 0) and the share of the query's informative terms it holds."""

    archived: EntryVersion
    current: EntryVersion
    head: ArtifactRef
    bm25: float = 0.0
    coverage: float = 0.0


class KindPolicy(NamedTuple):
    """The store's kind policy: whether one is recorded, and its kinds (``None`` = open)."""

    recorded: bool
    kinds: tuple[str, ...] | None


@dataclass(frozen=True, slots=True, kw_only=True)
class HeadQuery(Query[Revision | None]):
    memory_id: MemoryId


@dataclass(frozen=True, slots=True, kw_only=True)
class RevisionQuery(Query[Revision | None]):
    ref: ArtifactRef


@dataclass(frozen=True, slots=True, kw_only=True)
class ManifestQuery(Query[dict[EntryId, ManifestEntry]]):
    """Manifest entries of a Revision; ``entry_ids=None`` reads the whole manifest."""

    ref: ArtifactRef
    entry_ids: tuple[EntryId, ...] | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class VersionsQuery(Query[list[EntryVersion]]):
    """Entry versions by id, or every version of one entry (``entry_id``), oldest first."""

    memory_id: MemoryId | None
    version_ids: tuple[EntryVersionId, ...] = ()
    entry_id: EntryId | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ContentQuery(Query[list[LiveVersion]]):
    """Entries of a Memory's current head whose current version has one of these content hashes."""

    memory_id: MemoryId
    content_hashes: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class MemoriesQuery(Query[list[Revision]]):
    """Every Memory's head Revision."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SourcesQuery(Query[list[Source]]):
    source_ids: tuple[SourceId, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class ScopeQuery(Query[list[ScopeBinding]]):
    """The Memory bound to a scope URI (``scope=None`` lists every binding)."""

    scope: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class VectorStatusQuery(Query[dict[MemoryId, bool]]):
    """Whether each Memory's current head has a complete vector projection for the store's profile."""

    memories: tuple[ArtifactRef, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class CatalogueQuery(Query[list[Record]]):
    """Entries of exact Revisions, filtered, for catalogues and point-in-time reads (a list of ``Record``)."""

    memories: tuple[ArtifactRef, ...]
    filters: EntryFilter = NO_FILTER  # kind, tags and flags (domain/filters.py)
    include_inactive: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class SlugMatch:
    """An entry of a Memory's head that holds a (kind, slug) now (``live``) or held it in an older version."""

    memory_id: MemoryId
    entry_id: EntryId
    entry_version_id: EntryVersionId
    state: Literal["active", "inactive"]
    live: bool
    held_in_revision: int


@dataclass(frozen=True, slots=True, kw_only=True)
class SlugQuery(Query[list[SlugMatch]]):
    """Every entry of these Memories whose current or any older version has this kind and slug."""

    memory_ids: tuple[MemoryId, ...]
    kind: str
    slug: str


@dataclass(frozen=True, slots=True, kw_only=True)
class LiveSlugsQuery(Query[list[LiveSlug]]):
    """(memory id, entry id, kind, slug) of every active head entry with a slug in these Memories."""

    memory_ids: tuple[MemoryId, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class LinksQuery(Query[list[IncomingLink]]):
    """Current active versions in these Memories with a relation to one of ``targets`` (incoming links)."""

    memory_ids: tuple[MemoryId, ...]
    targets: tuple[EntryId, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class RevisionsQuery(Query[list[Revision]]):
    """Revisions ``first``..``last`` of a Memory, ascending."""

    memory_id: MemoryId
    first: int
    last: int


@dataclass(frozen=True, slots=True, kw_only=True)
class MemoryVersionsQuery(Query[list[EntryVersion]]):
    """Every entry version of a Memory, by entry id then version."""

    memory_id: MemoryId


@dataclass(frozen=True, slots=True, kw_only=True)
class ArchiveQuery(Query[list[ArchiveMatch]]):
    """Full-text matches among versions superseded as of these Revisions, of entries active there (Graphit
    archived rows). Any stored Revision may be named, so a search's second pass reads the Revisions its first
    pass searched even when a writer has moved a head since.

    Filters apply to each entry's version current at that Revision; matches come in rank order.
    """

    query: str
    memories: tuple[ArtifactRef, ...]
    depth: int
    filters: EntryFilter = NO_FILTER  # kind, tags and flags (domain/filters.py)


@dataclass(frozen=True, slots=True, kw_only=True)
class KindsQuery(Query[KindPolicy]):
    """The store's recorded kind policy; ``kinds=None`` means open."""


RECORD_QUERIES = (
    CatalogueQuery,
    SlugQuery,
    LiveSlugsQuery,
    LinksQuery,
    RevisionsQuery,
    MemoryVersionsQuery,
    ArchiveQuery,
    KindsQuery,
)


ReadQuery = (
    HeadQuery
    | RevisionQuery
    | ManifestQuery
    | VersionsQuery
    | ContentQuery
    | MemoriesQuery
    | SourcesQuery
    | ScopeQuery
    | VectorStatusQuery
    | CatalogueQuery
    | SlugQuery
    | LiveSlugsQuery
    | LinksQuery
    | RevisionsQuery
    | MemoryVersionsQuery
    | ArchiveQuery
    | KindsQuery
)

ManifestMap = Mapping[EntryId, ManifestEntry]


@runtime_checkable
class MaintenanceStore(Protocol):
    """Where governed maintenance keeps its state (issue #14): the scope lease, the digest ledger, runs, proposals.

    A backend that offers it implements these beside :class:`MemoryBackend`; the maintenance workflow checks for
    it with ``isinstance`` and refuses a store without it (Unsupported). Every method is one transaction.
    """

    async def lease_maintenance(self, scope: str, run_id: str, holder: str, ttl_s: float) -> str | None:
        """Take (or renew) the scope's lease for ``run_id``; returns None when it is ours now, else the run id of
        the unexpired holder. An expired lease is taken over."""
        ...

    async def release_maintenance(self, scope: str, run_id: str) -> None:
        """Drop the scope's lease if ``run_id`` holds it."""
        ...

    async def maintenance_ledger(self, scope: str) -> dict[EntryId, str]:
        """Entry id → the content hash a maintenance pass last saw, for one scope."""
        ...

    async def save_maintenance(
        self,
        run: MaintenanceRun,
        proposals: Sequence[Proposal] = (),
        *,
        seen: Mapping[EntryId, str] | None = None,
        unseen: Sequence[EntryId] = (),
    ) -> None:
        """Upsert a run record and proposals, and record ledger hashes (``seen``; ``unseen`` drops entries), at once."""
        ...

    async def maintenance_runs(self, scope: str | None = None, run_id: str | None = None) -> list[MaintenanceRun]:
        """Run records, newest first (one scope's, or one run)."""
        ...

    async def maintenance_proposals(
        self,
        *,
        scope: str | None = None,
        run_id: str | None = None,
        proposal_id: str | None = None,
        status: ProposalStatus | None = None,
    ) -> list[Proposal]:
        """Stored proposals in the order they were made."""
        ...

    async def record_maintenance_event(self, event: MaintenanceEvent) -> None:
        """Store an event (``writes_threshold_reached``)."""
        ...

    async def maintenance_events(self, scope: str) -> list[MaintenanceEvent]:
        """One scope's events, newest first."""
        ...


@runtime_checkable
class DaemonHealthStore(Protocol):
    """Where maintenance daemons record their health, in the store itself (issue #14): every process and machine
    sharing the store (and ``memstone doctor``/``status`` anywhere) reads the same records."""

    async def save_daemon_health(self, daemon_id: str, health: Mapping[str, object] | None) -> None:
        """Upsert one daemon's health record (None: drop it). ``daemon_id`` is at most 57 characters."""
        ...

    async def daemon_health(self) -> list[dict[str, object]]:
        """Every daemon's last record, each with its ``daemon_id``."""
        ...

    async def storage_upkeep(self) -> dict[str, object]:
        """Optimize the full-text index, checkpoint and vacuum, as the engine can; returns what it did."""
        ...


BundleRows = Mapping[str, Sequence[tuple[object, ...]]]  # table name -> rows (their ids first)


@runtime_checkable
class BundleRecordsHost(Protocol):
    """A backend whose queue, settings and maintenance records travel (``memstone copy``), keyed by their ids."""

    async def bundle_rows(self) -> BundleRows:
        """Every row of the capture queue, the settings and the maintenance records (not the leases)."""
        ...

    async def put_bundle_rows(self, rows: BundleRows, *, origin: str | None = None) -> int:
        """Write another store's :meth:`bundle_rows` (one transaction); returns the rows new, changed or (with
        ``origin``, the source's name) deleted: written by an earlier copy from it, gone from the source since."""
        ...


@runtime_checkable
class StoredVectorsHost(Protocol):
    """A backend that reads its stored vectors back, so ``memstone copy`` carries them to a target with the same
    embedding profile instead of embedding every entry again."""

    async def stored_vectors(
        self, version_ids: Sequence[EntryVersionId], *, org: str | None = None
    ) -> VectorBatch | None:
        """Every chunk's vector of these versions under the store's recorded profile, or ``org``'s own when that
        organization keeps one (whole projections only); None when this engine cannot read its vectors back."""
