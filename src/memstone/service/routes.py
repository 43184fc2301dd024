"""Which model embeds a Memory's entries and queries: its organization's own profile's, or the store's.

The backend keeps the rule of storage (``backends/sql/routes.py``: an org's own profile and vector table, refused
when a write's vectors have another profile); this module only chooses the model, once, for every write, search and
backfill of the service. A Memory bound to an org or project scope of an organization that recorded its own profile
(``memstone reembed --org``) uses that profile's model, loaded by name the first time it is needed (or the model the
migration ran with); every other Memory uses the store's model (``ServiceCore.indexer``).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import replace
from typing import Protocol

from ..domain.errors import InvalidInput
from ..domain.ids import MemoryId
from ..domain.scopes import org_of_scope, parse_scope
from ..indexing import VectorIndexer
from ..ports import EmbeddingProfile, MemoryBackend, VersionsQuery, WritePlan

log = logging.getLogger("memstone.service")


class ServiceCore(Protocol):
    """What routing reads of the service core (``core.py``, which holds an :class:`EmbeddingRoutes`)."""

    backend: MemoryBackend
    indexer: VectorIndexer | None

    async def scope_of(self, memory_id: MemoryId) -> str | None: ...


def canonical_org(org: object) -> str:
    """An organization id as scopes spell it (``ACME`` → ``acme``); InvalidInput for anything else."""
    if not isinstance(org, str) or not org or "/" in org:
        raise InvalidInput(f"invalid organization {org!r}", hint="an org id: letters, digits, . _ -")
    found = parse_scope(f"memstone://orgs/{org}").org
    assert found is not None
    return found


class Route:
    """A Memory's embedding route: ``org`` (None: the store's profile) and the profile it records."""

    __slots__ = ("org", "profile")

    def __init__(self, org: str | None, profile: EmbeddingProfile | None) -> None:
        self.org, self.profile = org, profile

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Route) and self.org == other.org

    def __hash__(self) -> int:
        return hash(self.org)


class EmbeddingRoutes:
    """The service's models per route, shared by every view of one service."""

    def __init__(self) -> None:
        self._models: dict[str, VectorIndexer | None] = {}

    def register(self, indexer: VectorIndexer) -> None:
        """Use ``indexer`` for its profile from now on (the model an org's migration ran with)."""
        self._models[indexer.profile.profile_id] = indexer

    async def route(self, core: ServiceCore, memory_id: MemoryId, bind_scope: str | None = None) -> Route:
        state = core.backend.state
        if state.org_profiles:  # no org has its own profile: no scope lookup
            scope = bind_scope or await core.scope_of(memory_id)
            org = org_of_scope(scope) if scope is not None else None
            if org is not None and org in state.org_profiles:
                return Route(org, state.org_profiles[org])
        return Route(None, state.embedding_profile)

    async def one_route(self, core: ServiceCore, memory_ids: Sequence[MemoryId]) -> Route | None:
        """The route the searched Memories share; None when they span several (vector search cannot mix them)."""
        routes = {await self.route(core, m) for m in memory_ids}
        if len(routes) > 1:
            return None
        return routes.pop() if routes else Route(None, core.backend.state.embedding_profile)

    def indexer(self, core: ServiceCore, route: Route, *, load: bool | None = None) -> VectorIndexer | None:
        """The model of ``route``: the store's for the default route (when it matches the store's profile), else
        the org profile's model, loaded by name once (None, with a warning, when it is not installed here).

        ``load`` (default: whether this service runs with a model at all) may load an org's model: a service opened
        without one (``--embedding none``, the hooks) writes without vectors for every org, as for the store."""
        if route.profile is None:
            return None
        default = core.indexer
        if default is not None and default.profile.canonical() == route.profile.canonical():
            return default
        if route.org is None:
            return None  # the store's model was migrated away under this process: backfill fills the gap
        name = route.profile.profile_id
        if name not in self._models and not (default is not None if load is None else load):
            return None
        if name not in self._models:
            self._models[name] = self._load(route.profile)
        found = self._models[name]
        return found if found is not None and found.profile.canonical() == route.profile.canonical() else None

    @staticmethod
    def _load(profile: EmbeddingProfile) -> VectorIndexer | None:
        from .. import embedding as models  # only when an org's model is first needed

        ok, why = models.available(profile.profile_id, versions=False)
        if not ok or profile.profile_id.startswith("openai:"):
            log.warning("embedding model %s unavailable (%s); its org's writes commit without vectors", profile, why)
            return None
        return VectorIndexer(models.load_model(profile.profile_id))

    async def with_vectors(self, core: ServiceCore, plan: WritePlan) -> WritePlan:
        """Embed, outside the transaction, every version this write projects (new, revised, reactivated), with the
        model of the Memory's route; no model (or not the route's): the write commits without vectors."""
        route = await self.route(core, plan.memory_id, plan.bind_scope)
        indexer = self.indexer(core, route)
        if indexer is None:
            return replace(plan, vectors={}, vector_profile=None)
        projected = {v.entry_version_id: v for v in plan.new_versions}
        missing = tuple(
            c.to_entry_version_id
            for c in plan.changes
            if c.op == "reactivate" and c.to_entry_version_id is not None and c.to_entry_version_id not in projected
        )
        if missing:
            found = await core.backend.read(VersionsQuery(memory_id=plan.memory_id, version_ids=missing))
            projected.update({v.entry_version_id: v for v in found})
        wanted = [
            projected[c.to_entry_version_id]
            for c in plan.changes
            if c.op != "deactivate" and c.to_entry_version_id in projected
        ]
        vectors = await indexer.vectors_for(wanted)
        return replace(plan, vectors=vectors, vector_profile=indexer.profile if vectors else None)


__all__ = ["EmbeddingRoutes", "Route", "canonical_org"]
