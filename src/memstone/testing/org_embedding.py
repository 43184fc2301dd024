"""Conformance of embedding profiles per organization (issue 13, item 6), gated by ``Capabilities.org_embedding``.

Two organizations on one store with models of different dimensions: each searches its own Memories with its own
model, neither sees the other's vectors, one org's ``reembed`` leaves the other's stored vectors as they were, and
vectors of a profile that is not the org's are refused with nothing stored. An engine without the capability must
refuse an org migration with CapabilityNotSupportedError.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from ..domain.errors import CapabilityNotSupportedError, ProfileMismatchError
from ..domain.ids import EntryVersionId
from ..domain.model import EntryInput
from ..service import MemoryService
from .fixtures import StoreFixtures

ACME = "memstone://orgs/acme/projects/web"
GLOBEX = "memstone://orgs/globex"
ME = "memstone://users/alice"

ACME_FACTS = (
    "The nightly database backup runs at two in the morning.",
    "Our web frontend is written in React with TypeScript.",
    "Invoices are sent to customers on the first day of each month.",
)
GLOBEX_FACTS = (
    "The cafeteria serves vegetarian lunch every Friday.",
    "Security badges must be worn visibly inside the building.",
    "The quarterly sales report is due two weeks after quarter end.",
)


def _model(name: str) -> Any:
    from ..embedding import load_model

    return load_model(name)


class OrgEmbeddingConformance(StoreFixtures):
    """Mix into a test class with a ``store_url`` fixture. ``default_model`` is the store's profile, ``org_model``
    the one the second org migrates to (a different dimension)."""

    default_model = "minilm-l6-int8"
    org_model = "use-multilingual-v3"

    @pytest.fixture
    async def osvc(self, store_url: str) -> AsyncIterator[MemoryService]:
        async with self.service(store_url, embedding=_model(self.default_model)) as service:
            if not service.backend.capabilities.org_embedding:
                pytest.skip("this engine keeps one embedding profile per store")
            yield service

    @staticmethod
    async def _seed(svc: MemoryService) -> dict[str, tuple[EntryVersionId, ...]]:
        out = {}
        for scope, facts in ((ACME, ACME_FACTS), (GLOBEX, GLOBEX_FACTS), (ME, ("I prefer tea over coffee.",))):
            rev = await svc.remember(None, scope=scope, entries=[EntryInput(kind="fact", text=t) for t in facts])
            assert rev is not None
            out[scope] = tuple(v.entry_version_id for v in await svc.entries(rev))
        return out

    async def test_two_orgs_with_models_of_different_dimensions(self, osvc: MemoryService) -> None:
        ids = await self._seed(osvc)
        backend: Any = osvc.backend
        # acme chooses a profile of its own (the store's model, in its own table); globex another dimension.
        assert await osvc.reembed(_model(self.default_model), org="acme") == len(ACME_FACTS)
        acme_before = await backend.stored_vectors(ids[ACME], org="acme")
        store_before = await backend.stored_vectors(ids[ME])
        globex_before = await backend.stored_vectors(ids[GLOBEX])
        assert len(acme_before) == len(ACME_FACTS) and len(store_before) == 1 and len(globex_before) == 3
        new = _model(self.org_model)
        assert await osvc.reembed(new, org="GLOBEX") == len(GLOBEX_FACTS)  # org ids are canonical (lowercase)
        profiles = await osvc.org_profiles()
        assert {o: p.profile_id for o, p in profiles.items()} == {"acme": self.default_model, "globex": self.org_model}
        assert profiles["acme"].dimension != profiles["globex"].dimension

        # globex's reembed left acme's rows and the store's rows exactly as they were; globex's moved.
        assert await backend.stored_vectors(ids[ACME], org="acme") == acme_before
        assert await backend.stored_vectors(ids[ME]) == store_before
        moved = await backend.stored_vectors(ids[GLOBEX], org="globex")
        assert set(moved) == set(ids[GLOBEX])
        assert {len(w) for chunks in moved.values() for w in chunks} == {profiles["globex"].dimension}
        assert not await backend.stored_vectors(ids[GLOBEX])  # nothing of globex is left in the store's table

        # Each org searches with its own model and sees only its own entries.
        for scope, query, want in (
            (ACME, "when is the database backed up", ACME_FACTS[0]),
            (GLOBEX, "what food is served at lunch", GLOBEX_FACTS[0]),
            (ME, "favourite hot drink", "I prefer tea over coffee."),
        ):
            for mode in ("vector", "auto"):
                result = await osvc.search(query, scopes=[scope], mode=mode)
                assert result.mode in ("vector", "hybrid"), (scope, result.fallback_reason)
                assert result.hits[0].text == want, (scope, mode)
                assert {h.scope for h in result.hits} == {scope}
        # Memories of two profiles are never ranked in one vector space: auto says why and uses FTS.
        both = await osvc.search("lunch backup", scopes=[ACME, GLOBEX], mode="auto")
        assert both.mode == "fts" and "different embedding profiles" in (both.fallback_reason or "")
        with pytest.raises(CapabilityNotSupportedError):
            await osvc.search("lunch backup", scopes=[ACME, GLOBEX], mode="vector")

        # Writes after the migration route by org: a new globex entry is found by globex's model.
        head = await osvc.resolve(GLOBEX)
        assert head is not None
        await osvc.remember(head, entries=[EntryInput(kind="fact", text="Parking is free for electric cars.")])
        found = await osvc.search("where can I charge my car", scopes=[GLOBEX], mode="vector")
        assert found.hits[0].text == "Parking is free for electric cars."
        assert await backend.stored_vectors(ids[ACME], org="acme") == acme_before
        assert (await osvc.verify()).ok
        assert (await osvc.rebuild_projections()).ok  # a rebuild keeps every org's valid vectors where they are
        assert await backend.stored_vectors(ids[ACME], org="acme") == acme_before
        assert set(await backend.stored_vectors(ids[GLOBEX], org="globex")) == set(ids[GLOBEX])

    async def test_vectors_of_another_profile_are_refused_and_nothing_is_stored(self, osvc: MemoryService) -> None:
        ids = await self._seed(osvc)
        backend: Any = osvc.backend
        await osvc.reembed(_model("hashing-48"), org="globex")
        before = await backend.stored_vectors(ids[GLOBEX], org="globex")
        # A backfill with the store's model for globex's Memories: refused, in the transaction.
        with pytest.raises(ProfileMismatchError, match="globex"):
            await osvc.backfill(org="globex", model=_model(self.default_model))
        # The same vectors handed to the backend directly: refused, and globex's rows are unchanged.
        head = await osvc.resolve(GLOBEX)
        assert head is not None
        versions = await osvc.entries(head)
        wrong = await _model(self.default_model).embed(tuple(v.content.text for v in versions))
        batch = {v.entry_version_id: (vec,) for v, vec in zip(versions, wrong.vectors, strict=True)}
        with pytest.raises(ProfileMismatchError):
            await backend.put_vectors(batch, profile=_model(self.default_model).profile)
        assert await backend.stored_vectors(ids[GLOBEX], org="globex") == before
        assert (await osvc.verify()).ok

    async def test_a_process_that_missed_the_migration_still_writes_with_the_orgs_model(
        self, store_url: str, osvc: MemoryService
    ) -> None:
        ids = await self._seed(osvc)
        # globex's profile has the dimension of the store's (another model): only the profile check tells them apart.
        same_size = f"hashing-{_model(self.default_model).profile.dimension}"
        async with self.service(store_url, embedding=_model(self.default_model)) as stale:
            assert not stale.backend.state.org_profiles  # opened before globex chose its own profile
            await osvc.reembed(_model(same_size), org="globex")
            head = await stale.resolve(GLOBEX)
            assert head is not None
            # Its MiniLM vectors are refused by the backend; it reads the org's profile again and embeds with it.
            rev = await stale.remember(head, entries=[EntryInput(kind="fact", text="Visitors sign in at reception.")])
            assert rev is not None
            assert "globex" in stale.backend.state.org_profiles
        async with self.service(store_url, embedding=_model(self.default_model)) as stale:
            await osvc.reembed(_model(f"hashing-{_model(self.default_model).profile.dimension + 1}"), org="acme")
            # Its search of acme is embedded with acme's new model, not the one it knew when it opened.
            found = await stale.search(ACME_FACTS[1], scopes=[ACME], mode="vector")
            assert found.hits[0].text == ACME_FACTS[1]
            assert found.hits[0].contributions["cosine"] > 0.999  # the query vector is the org model's own
        stored = await osvc.backend.stored_vectors(  # type: ignore[attr-defined]
            tuple(v.entry_version_id for v in await osvc.entries(rev)), org="globex"
        )
        assert len(stored) == len(ids[GLOBEX]) + 1
        new_vid = next(v.entry_version_id for v in await osvc.entries(rev) if v.content.text.startswith("Visitors"))
        (want,) = (await _model(same_size).embed(("Visitors sign in at reception.",))).vectors
        (got,) = stored[new_vid]
        assert max(abs(a - b) for a, b in zip(got, want, strict=True)) < 1e-6  # the org's model, not the stale one
        assert (await osvc.backfill(org="globex")) == 0  # nothing was left without a vector
        assert (await osvc.verify()).ok

    async def test_a_memory_bound_into_an_org_leaves_the_store_table_and_backfill_uses_the_orgs_model(
        self, osvc: MemoryService
    ) -> None:
        await self._seed(osvc)
        backend: Any = osvc.backend
        await osvc.reembed(_model("hashing-48"), org="globex")
        loose = await osvc.remember(None, entries=[EntryInput(kind="fact", text="The archive room is on floor three.")])
        assert loose is not None
        vids = tuple(v.entry_version_id for v in await osvc.entries(loose))
        assert len(await backend.stored_vectors(vids)) == 1  # unbound: the store's profile and table
        await osvc.bind("memstone://orgs/globex/projects/archive", loose)
        assert not await backend.stored_vectors(vids)  # its store-profile vectors are gone with the bind
        fallback = await osvc.search("archive room", scopes=["memstone://orgs/globex/projects/archive"], mode="auto")
        assert fallback.mode == "fts" and "incomplete" in (fallback.fallback_reason or "")
        assert await osvc.vector_backlog() == 1  # the store's profile and every org's: the gap is globex's
        assert await osvc.backfill(org="globex") == 1
        assert await osvc.vector_backlog() == 0
        stored = await backend.stored_vectors(vids, org="globex")
        assert {len(w) for chunks in stored.values() for w in chunks} == {48}
        found = await osvc.search("archive room", scopes=["memstone://orgs/globex/projects/archive"], mode="vector")
        assert found.hits[0].text == "The archive room is on floor three."
        assert (await osvc.verify()).ok


class OrgEmbeddingRefused(StoreFixtures):
    """For an engine without ``org_embedding``: an org migration is refused by name and changes nothing."""

    async def test_an_org_migration_is_refused(self, store_url: str) -> None:
        async with self.service(store_url, embedding=_model("hashing-32")) as svc:
            if svc.backend.capabilities.org_embedding:
                pytest.skip("this engine keeps embedding profiles per organization")
            rev = await svc.remember(None, scope=GLOBEX, entries=[EntryInput(kind="fact", text="a fact")])
            assert rev is not None
            with pytest.raises(CapabilityNotSupportedError):
                await svc.reembed(_model("hashing-48"), org="globex")
            assert await svc.org_profiles() == {}
            assert (await svc.search("fact", scopes=[GLOBEX], mode="vector")).hits


__all__ = ["OrgEmbeddingConformance", "OrgEmbeddingRefused"]
