"""The vector projection's upkeep: ``backfill`` of missing vectors and ``reembed`` (the no-loss model migration),
for the Memories on the store's profile or, with ``org``, for one organization's (its own profile: routes.py)."""

from __future__ import annotations

import logging

from ..domain.errors import CapabilityNotSupportedError, ProfileMismatchError
from ..domain.ids import MemoryId
from ..domain.scopes import org_of_scope
from ..indexing import Progress, VectorIndexer
from ..ports import EmbeddingModel, EmbeddingProfile
from .core import ServiceCore
from .routes import Route, canonical_org
from .settle import settle

log = logging.getLogger("memstone.service")


class Vectors:
    """Backfill and model migration of the vector projection."""

    def __init__(self, core: ServiceCore) -> None:
        self._core = core

    async def org_profiles(self) -> dict[str, EmbeddingProfile]:
        """The organizations that chose their own embedding profile, and that profile (read now)."""
        return await self._core.backend.org_profiles()

    async def backfill_profile(self, org: str | None = None) -> EmbeddingProfile | None:
        """The profile a backfill (of ``org``'s Memories, or the store's) embeds with: the org's own, else the
        store's recorded one (without ``org``: the loaded model's, None when this service runs without one)."""
        if org is None:
            return self._core.indexer.profile if self._core.indexer is not None else None
        return (await self.org_profiles()).get(canonical_org(org)) or self._core.backend.state.embedding_profile

    async def vector_backlog(self, *, memory: MemoryId | None = None) -> int:
        """How many active entries lack a vector: on the store's profile and on every org's own (of one Memory,
        on its route, when ``memory`` is given)."""
        backend = self._core.backend
        orgs = await backend.org_profiles()
        if memory is not None:
            return await backend.vector_backlog(org=(await self._route_of(memory, orgs)).org, memory_id=memory)
        return await backend.vector_backlog() + sum([await backend.vector_backlog(org=o) for o in sorted(orgs)])

    async def _route_of(self, memory: MemoryId, profiles: dict[str, EmbeddingProfile]) -> Route:
        """The route of one Memory: its org's own profile when the org chose one, else the store's."""
        scope = await self._core.scope_of(memory)
        org = org_of_scope(scope) if scope is not None else None
        return (
            self._route(org, profiles) if org is not None else Route(None, self._core.backend.state.embedding_profile)
        )

    async def backfill(
        self,
        *,
        batch: int = 64,
        progress: Progress | None = None,
        org: str | None = None,
        model: EmbeddingModel | None = None,
        memory: MemoryId | None = None,
    ) -> int:
        """Embed every active entry that has no vector yet; resumable (a rerun picks up what is missing).

        ``org``: only that organization's Memories (with its own profile's model, if it chose one). Without it:
        the Memories on the store's profile, then those of every org with its own profile whose model is installed.
        ``memory``: only that Memory's entries, on its route (the daemon's per-scope loop).
        ``model``: embed with this model; one whose profile is not the route's is refused (nothing is stored).
        A backfill of a thousand vectors or more ends with the engine's storage upkeep (``settle.py``).
        """
        done = await self._backfill(batch, progress, org, model, memory)
        await settle(self._core.backend, done)
        return done

    async def _backfill(
        self,
        batch: int,
        progress: Progress | None,
        org: str | None,
        model: EmbeddingModel | None,
        memory: MemoryId | None,
    ) -> int:
        profiles = await self._core.backend.org_profiles()
        if memory is not None:
            return await self._fill(await self._route_of(memory, profiles), model, batch, progress, memory)
        if org is not None:
            org = canonical_org(org)
            return await self._fill(self._route(org, profiles), model, batch, progress)
        if model is not None or not profiles:
            return await self._fill(Route(None, self._core.backend.state.embedding_profile), model, batch, progress)
        done = 0
        if self._core.indexer is not None:
            done += await self._fill(Route(None, self._core.backend.state.embedding_profile), None, batch, progress)
        for name, profile in sorted(profiles.items()):
            if self._core.routes.indexer(self._core, Route(name, profile), load=True) is None:
                log.warning("backfill: the model of org %s (%s) is not installed; skipped", name, profile.profile_id)
                continue
            done += await self._fill(Route(name, profile), None, batch, progress)
        return done

    def _route(self, org: str, profiles: dict[str, EmbeddingProfile]) -> Route:
        if org in profiles:
            return Route(org, profiles[org])
        return Route(None, self._core.backend.state.embedding_profile)  # an org on the store's profile

    async def _fill(
        self,
        route: Route,
        model: EmbeddingModel | None,
        batch: int,
        progress: Progress | None,
        memory: MemoryId | None = None,
    ) -> int:
        routes = self._core.routes
        indexer = VectorIndexer(model) if model is not None else routes.indexer(self._core, route, load=True)
        if indexer is None:
            raise CapabilityNotSupportedError(
                "vector",
                "backfill needs an embedding model"
                + (f" of profile {route.profile.profile_id}" if route.profile is not None else ""),
            )
        if route.profile is not None and indexer.profile.canonical() != route.profile.canonical():
            raise ProfileMismatchError(
                f"embedding model profile {indexer.profile.profile_id} is not "
                f"{'organization ' + route.org if route.org else 'the store'}'s profile {route.profile.profile_id}",
                hint="backfill with that profile's model, or migrate: memstone reembed",
            )
        backend = self._core.backend
        done = 0
        total = await backend.vector_backlog(org=route.org, memory_id=memory)
        while True:
            pending = await backend.missing_vectors(batch, org=route.org, memory_id=memory)
            if not pending:
                break
            vectors = await indexer.vectors_for(pending)
            if not vectors:
                raise CapabilityNotSupportedError(
                    "vector", f"the embedding model failed: {indexer.last_error}", hint="fix the model, rerun"
                )
            done += await backend.put_vectors(vectors, profile=indexer.profile)
            if progress is not None:
                progress(done, max(total, done))
        return done

    async def reembed(
        self,
        model: EmbeddingModel,
        *,
        batch: int = 64,
        progress: Progress | None = None,
        org: str | None = None,
    ) -> int:
        """Migrate the store to another embedding model: writes pause, every active head is re-embedded into
        staging, completeness is checked, then one transaction swaps the projection and the recorded profile.

        ``org``: migrate only that organization's Memories, to its own profile (its vectors move to the table of
        that profile's dimension); only its writes pause and no other Memory's vectors change. Without it, the
        Memories on the store's profile move (an org with its own profile keeps it).
        An interrupted migration leaves the store on its old profile. Returns how many entries were embedded.
        """
        if org is not None:
            org = canonical_org(org)
            if not self._core.backend.capabilities.org_embedding:
                raise CapabilityNotSupportedError(
                    "org-embedding",
                    "this engine cannot keep an embedding profile per organization",
                    hint="use PostgreSQL",
                )
        indexer = VectorIndexer(model)
        heads = await self._core.memories()
        if org is not None:
            scope_of = await self._core._scopes_of([h.memory_id for h in heads])
            heads = tuple(h for h in heads if org_of_scope(scope_of.get(h.memory_id) or "memstone://users/x") == org)
        total = sum(h.active_count for h in heads)
        await self._core.backend.start_migration(model.profile, org=org)
        done = 0
        try:
            while True:
                pending = await self._core.backend.unstaged_versions(batch)
                if not pending:
                    break
                vectors = await indexer.vectors_for(pending)
                if len(vectors) != len(pending):
                    raise CapabilityNotSupportedError(
                        "vector", f"the new model failed: {indexer.last_error}", hint="the store keeps its old profile"
                    )
                await self._core.backend.stage_vectors(vectors)
                done += len(pending)
                if progress is not None:
                    progress(done, max(total, done))
            await self._core.backend.finish_migration(model.profile)
        except BaseException:
            await self._core.backend.abort_migration()
            raise
        await settle(self._core.backend, done)  # the swapped projection's vector tables were written in bulk
        if org is None:
            self._core.indexer = indexer
        else:
            self._core.routes.register(indexer)
        return done


__all__ = ["Vectors"]
