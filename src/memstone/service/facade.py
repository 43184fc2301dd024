"""The façade every front end holds: :class:`MemoryService`, composed of the service's components, and
:func:`open_service`, its composition root.

The components (``core``, ``writes``, ``search``, ``records``, ``recall``, ``vectors``) each own one concern and
depend only on the core and on components below them; the façade exposes their public methods under one name,
so ``svc.remember``, ``svc.search`` and ``svc.recall`` are what they always were.
"""

from __future__ import annotations

import functools
import inspect
import logging
from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import asynccontextmanager
from typing import Concatenate, ParamSpec, TypedDict, TypeVar, Unpack

from ..domain.errors import InvalidInput
from ..domain.ids import new_ulid
from ..domain.model import Surface
from ..indexing import VectorIndexer
from ..ports import CandidatePipeline, EmbeddingModel, MemoryBackend
from .core import HistoryItem, ServiceCore, utc_now
from .policy import Actor, Policy, UserOrg
from .purge import Purges
from .recall import Recall
from .records import Records
from .search import Search
from .vectors import Vectors
from .writes import Writes

P = ParamSpec("P")
R = TypeVar("R")
C = TypeVar("C")
log = logging.getLogger("memstone.service")


def _via(
    part: Callable[[MemoryService], C], method: Callable[Concatenate[C, P], R]
) -> Callable[Concatenate[MemoryService, P], R]:
    """A façade method that calls ``method`` on the component ``part`` picks (same signature and docstring).

    A coroutine method stays a coroutine function, so ``inspect``/``asyncio`` see the façade as they saw the
    method (the sync façade in ``memstone.sync`` relies on it).
    """
    if inspect.iscoroutinefunction(method):

        @functools.wraps(method)
        async def acall(self: MemoryService, /, *args: P.args, **kwargs: P.kwargs) -> object:
            return await method(part(self), *args, **kwargs)

        return acall  # type: ignore[return-value]

    @functools.wraps(method)
    def call(self: MemoryService, /, *args: P.args, **kwargs: P.kwargs) -> R:
        return method(part(self), *args, **kwargs)

    return call


class CoreOptions(TypedDict, total=False):
    """What a service is built with besides its backend (defaults: :class:`ServiceCore`'s)."""

    clock: Callable[[], str]
    new_id: Callable[[str], str]
    author: str | None
    surface: Surface
    closed_kinds: frozenset[str] | None
    embedding: EmbeddingModel | None
    candidates: CandidatePipeline | None


class MemoryService:
    """Durable, versioned memory over one backend. Construct it with :func:`open_service`."""

    def __init__(self, backend: MemoryBackend, **options: Unpack[CoreOptions]) -> None:
        """``options``: ``clock``, ``new_id``, ``author``, ``surface``, ``closed_kinds``, ``embedding`` and
        ``candidates``, as :class:`ServiceCore` takes them (and with its defaults)."""
        self._compose(ServiceCore(backend, **options))

    def _compose(self, core: ServiceCore) -> None:
        self._core = core
        self._writes = Writes(core)
        self._search = Search(core)
        self._records = Records(core, self._writes, self._search)
        self._recall = Recall(core, self._search, self._records)
        self._vectors = Vectors(core)
        self._purges = Purges(core, self._writes)

    def acting(self, actor: Actor, *, user_org: UserOrg | None = None) -> MemoryService:
        """A view of this service that acts as ``actor``: every read and write checks its grants, and its writes
        record it as author and surface. The view shares the open backend, the model and the caches.

        ``user_org`` looks up the organization of a user scope's user (for an admin's view of a colleague's scope).

        >>> view = svc.acting(Actor.of(access, surface="agent-session"), user_org=org_of)   # doctest: +SKIP
        """
        view = MemoryService.__new__(MemoryService)
        view._compose(self._core.acting(actor, user_org=user_org))
        return view

    @property
    def backend(self) -> MemoryBackend:
        """The open backend (for maintenance tools and tests; front ends use the methods)."""
        return self._core.backend

    @property
    def indexer(self) -> VectorIndexer | None:
        """The loaded embedding model's indexer, if any."""
        return self._core.indexer

    @property
    def migration_wait_s(self) -> float:
        """How long a write waits for a model migration (``reembed``) before giving up."""
        return self._core.migration_wait_s

    @migration_wait_s.setter
    def migration_wait_s(self, value: float) -> None:
        self._core.migration_wait_s = value

    @property
    def actor(self) -> Actor:
        """Who this service acts as (the local user unless it is a view from :meth:`acting`)."""
        return self._core.actor

    @property
    def policy(self) -> Policy:
        """The grant rule for this service's actor (front ends ask it; they never decide themselves)."""
        return self._core.policy

    # core
    scope_of = _via(lambda s: s._core, ServiceCore.scope_of)
    retrying = _via(lambda s: s._core, ServiceCore.retrying)
    head = _via(lambda s: s._core, ServiceCore.head)
    revision = _via(lambda s: s._core, ServiceCore.revision)
    memories = _via(lambda s: s._core, ServiceCore.memories)
    manifest = _via(lambda s: s._core, ServiceCore.manifest)
    entries = _via(lambda s: s._core, ServiceCore.entries)
    get = _via(lambda s: s._core, ServiceCore.get)
    history = _via(lambda s: s._core, ServiceCore.history)
    source = _via(lambda s: s._core, ServiceCore.source)
    changes = _via(lambda s: s._core, ServiceCore.changes)
    expand = _via(lambda s: s._core, ServiceCore.expand)
    cite = _via(lambda s: s._core, ServiceCore.cite)
    verify_citation = _via(lambda s: s._core, ServiceCore.verify_citation)
    record_source = _via(lambda s: s._core, ServiceCore.record_source)
    sources = _via(lambda s: s._core, ServiceCore.sources)
    resolve = _via(lambda s: s._core, ServiceCore.resolve)
    scopes = _via(lambda s: s._core, ServiceCore.scopes)
    verify = _via(lambda s: s._core, ServiceCore.verify)
    rebuild_projections = _via(lambda s: s._core, ServiceCore.rebuild_projections)
    aclose = _via(lambda s: s._core, ServiceCore.aclose)
    kinds = _via(lambda s: s._core, ServiceCore.kinds)
    cite_record = _via(lambda s: s._core, ServiceCore.cite_record)
    # writes
    remember = _via(lambda s: s._writes, Writes.remember)
    remember_outcome = _via(lambda s: s._writes, Writes.remember_outcome)
    update = _via(lambda s: s._writes, Writes.update)
    forget = _via(lambda s: s._writes, Writes.forget)
    reactivate = _via(lambda s: s._writes, Writes.reactivate)
    organize = _via(lambda s: s._writes, Writes.organize)
    # search
    search = _via(lambda s: s._search, Search.search)
    # records
    bind = _via(lambda s: s._records, Records.bind)
    lookup = _via(lambda s: s._records, Records.lookup)
    records = _via(lambda s: s._records, Records.records)
    flag = _via(lambda s: s._records, Records.flag)
    rename = _via(lambda s: s._records, Records.rename)
    merge = _via(lambda s: s._records, Records.merge)
    relate = _via(lambda s: s._records, Records.relate)
    unrelate = _via(lambda s: s._records, Records.unrelate)
    version = _via(lambda s: s._records, Records.version)
    diff = _via(lambda s: s._records, Records.diff)
    blame = _via(lambda s: s._records, Records.blame)
    revert = _via(lambda s: s._records, Records.revert)
    export_markdown = _via(lambda s: s._records, Records.export_markdown)
    import_markdown = _via(lambda s: s._records, Records.import_markdown)
    important = _via(lambda s: s._records, Records.important)
    mandatory = _via(lambda s: s._records, Records.mandatory)
    list = _via(lambda s: s._records, Records.list)
    # recall
    recall = _via(lambda s: s._recall, Recall.recall)
    # vectors
    backfill = _via(lambda s: s._vectors, Vectors.backfill)
    reembed = _via(lambda s: s._vectors, Vectors.reembed)
    org_profiles = _via(lambda s: s._vectors, Vectors.org_profiles)
    backfill_profile = _via(lambda s: s._vectors, Vectors.backfill_profile)
    vector_backlog = _via(lambda s: s._vectors, Vectors.vector_backlog)
    # purge
    purge = _via(lambda s: s._purges, Purges.purge)
    tombstones = _via(lambda s: s._purges, Purges.tombstones)


class _Unset:
    """The type of :data:`UNSET`: "use the store's recorded embedding profile (or the default)", and of
    :data:`RECORDED`: "the store's recorded profile, or none" (never records the default on a new store)."""

    def __init__(self, name: str = "UNSET", *, default: bool = True) -> None:
        self.name, self.default = name, default

    def __repr__(self) -> str:
        return self.name


UNSET = _Unset()
RECORDED = _Unset("RECORDED", default=False)


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
    candidates: CandidatePipeline | None = None,
    backend: MemoryBackend | None = None,
    create: bool = True,
) -> AsyncIterator[MemoryService]:
    """Open a store by URL (default ``MEMSTONE_URL`` or ``~/.memstone/memstone.db``) and yield its service.

    ``candidates`` is the pipeline ``remember(mode="extract")`` runs over evidence (the CLI, the servers and the
    hooks pass capture's ``CapturePipeline``); without one, extract is not supported. ``backend`` serves an
    already opened backend instead (a conformance factory's, say); it is closed on exit. ``create=False``
    refuses a store that does not exist yet (NotFound) instead of creating it. ``embedding``: a model or profile
    name, None (no model), :data:`UNSET` (the store's recorded profile, the default for a new store) or
    :data:`RECORDED` (the store's recorded profile, none when it records none; a model that is not installed
    here means none with a warning for both).

    >>> async with open_service("sqlite:///memories.db") as svc:   # doctest: +SKIP
    ...     rev = await svc.remember(entries=[EntryInput(kind="fact", text="We deploy with uv.")])
    """
    if backend is None:
        from ..backends import open_store
        from ..config import Config

        backend = (await open_store(url or Config.load(derive=False).url, create=create)).memory
    elif url is not None:
        raise InvalidInput("pass a store URL or a backend, not both")
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
        closed_kinds=frozenset(k.strip().lower() for k in closed_kinds) if closed_kinds is not None else None,
        embedding=model,
        candidates=candidates,
    )
    try:
        yield service
    finally:
        await backend.aclose()


async def _choose_model(
    backend: MemoryBackend, embedding: EmbeddingModel | str | _Unset | None
) -> EmbeddingModel | None:
    """The model a service runs with: the store's recorded profile, the default for a new store (not with
    :data:`RECORDED`), or none.

    A model (or profile name) that differs from the store's recorded profile is refused by name.
    """
    recorded = backend.state.embedding_profile
    if embedding is None or (
        isinstance(embedding, _Unset) and recorded is None and not (embedding.default and backend.capabilities.vector)
    ):
        # A new store on an engine without vectors (PostgreSQL without pgvector) takes no default model: it
        # works with FTS only, as the capabilities say, instead of failing to open.
        await backend.configure_embedding(None, record=False)
        return None
    from .. import embedding as models  # only when a model may be needed: the hook path pays nothing

    if isinstance(embedding, _Unset):
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


__all__ = ["RECORDED", "UNSET", "HistoryItem", "MemoryService", "open_service", "utc_now"]
