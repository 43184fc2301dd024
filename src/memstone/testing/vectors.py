"""Vector-projection conformance, importable by out-of-tree backends (mixed in beside the core suite)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, Literal

import pytest

from ..domain.errors import CapabilityNotSupportedError, InvalidInput
from ..domain.ids import EntryVersionId
from ..domain.model import EntryInput
from ..service import MemoryService
from .fixtures import StoreFixtures


def fact(text: str, **kw: Any) -> EntryInput:
    return EntryInput(kind=kw.pop("kind", "fact"), text=text, **kw)


class VectorConformance(StoreFixtures):
    """Vector-projection conformance: mix into a backend's test class with ``store_url`` and ``model_name``.

    Uses the store's real engine and a real (possibly small, deterministic) embedding model.
    """

    model_name: str = "hashing-64"
    semantic: bool = True  # whether the model is good enough for meaning-level assertions

    def make_model(self) -> Any:
        from ..embedding import load_model

        return load_model(self.model_name)

    @pytest.fixture
    async def vsvc(self, store_url: str) -> AsyncIterator[MemoryService]:
        async with self.service(store_url, embedding=self.make_model()) as service:
            if not service.backend.capabilities.vector:
                pytest.skip("backend has no vector projection")
            yield service

    @asynccontextmanager
    async def two_processes(self, store_url: str) -> AsyncIterator[tuple[MemoryService, MemoryService]]:
        """Two services on one store with the suite's model, as two processes hold it (skipped where it cannot)."""
        async with (
            self.service(store_url, embedding=self.make_model()) as first,
            self.service(store_url, embedding=self.make_model()) as second,
        ):
            if not first.backend.capabilities.concurrent_processes:
                pytest.skip("needs two connections to one store")
            yield first, second

    async def test_writes_carry_vectors_and_auto_uses_hybrid(self, vsvc: MemoryService) -> None:
        rev = await vsvc.remember(None, entries=[fact("postgres backups run nightly"), fact("the ui uses react")])
        assert rev is not None
        result = await vsvc.search("postgres backups", memories=[rev], mode="auto")
        assert result.mode == "hybrid" and result.fallback_reason is None
        assert result.hits[0].text == "postgres backups run nightly"
        assert set(result.hits[0].matched_by) == {"fts", "vector"}
        vec = await vsvc.search("postgres backups", memories=[rev], mode="vector")
        assert vec.mode == "vector" and vec.hits[0].matched_by == ("vector",)
        assert (await vsvc.verify()).ok

    async def test_filters_apply_to_vector_and_hybrid_hits(self, vsvc: MemoryService) -> None:
        # The vector channel finds entries by nearness alone; kind, tag and flag filters must still hold on it.
        rev = await vsvc.remember(
            None,
            entries=[
                fact("deploy the service with uv", tags=["ops"]),
                fact("deploy rule: never on fridays", kind="constraint"),
                fact("deploy notes from the last release", important=True),
            ],
        )
        assert rev is not None
        modes: tuple[Literal["vector", "hybrid"], ...] = ("vector", "hybrid")
        for mode in modes:
            kinds = await vsvc.search("deploy", memories=[rev], kinds=["constraint"], mode=mode)
            assert [h.kind for h in kinds.hits] == ["constraint"], mode
            tags = await vsvc.search("deploy", memories=[rev], tags=["ops"], mode=mode)
            assert [h.text for h in tags.hits] == ["deploy the service with uv"], mode
            flagged = await vsvc.search("deploy", memories=[rev], important=True, mode=mode)
            assert [h.text for h in flagged.hits] == ["deploy notes from the last release"], mode
            plain = await vsvc.search("deploy", memories=[rev], important=False, mode=mode)
            assert all(not h.important for h in plain.hits) and plain.hits, mode

    async def test_hybrid_scores_are_convex_in_unit_range_and_weigh_term_coverage(self, vsvc: MemoryService) -> None:
        rev = await vsvc.remember(
            None, entries=[fact("alpha bravo charlie delta rollout"), fact("alpha zulu yankee notes")]
        )
        assert rev is not None
        query = "alpha bravo charlie delta"  # four informative terms; the second entry matches one of them
        fts = await vsvc.search(query, memories=[rev], mode="fts")
        assert [h.text for h in fts.hits] == ["alpha bravo charlie delta rollout", "alpha zulu yankee notes"]
        strong, weak = fts.hits
        # The RFC's admission keeps the one-term match; its lexical score carries its coverage (1 of 4).
        assert strong.contributions["coverage"] == 1.0 and weak.contributions["coverage"] == 0.25
        assert 0.0 < weak.score < strong.score <= 1.0
        hybrid = await vsvc.search(query, memories=[rev], mode="hybrid")
        assert hybrid.hits[0].text.startswith("alpha bravo") and "fts" in hybrid.hits[0].matched_by
        for h in hybrid.hits:
            assert 0.0 <= h.score <= 1.0 and h.contributions["fusion"] == h.score
        rrf = await vsvc.search(query, memories=[rev], mode="hybrid", fusion="rrf")
        assert rrf.hits[0].text.startswith("alpha bravo")
        assert abs(rrf.hits[0].score - sum(1 / (60 + r) for r in rrf.hits[0].ranks.values())) < 1e-12

    async def test_a_query_below_the_calibrated_bar_gets_no_dense_hit(self, vsvc: MemoryService) -> None:
        from ..indexing import Calibration

        rev = await vsvc.remember(None, entries=[fact("postgres backups run nightly"), fact("the ui uses react")])
        assert rev is not None
        assert vsvc.indexer is not None
        vsvc.indexer.calibration = Calibration(vector_min_cosine=0.0, vector_min_top=0.99)
        for mode in ("vector", "hybrid"):
            # Nothing is near this query (and no word matches): no hit rather than the least bad ones.
            assert (await vsvc.search("vorzek plimu tarqen", memories=[rev], mode=mode)).hits == ()
            exact = await vsvc.search("postgres backups run nightly", memories=[rev], mode=mode)
            assert exact.hits[0].text == "postgres backups run nightly" and exact.hits[0].score > 0.5

    async def test_a_weak_query_with_lexical_support_keeps_its_dense_hits(self, vsvc: MemoryService) -> None:
        from ..indexing import Calibration

        rev = await vsvc.remember(None, entries=[fact("we are deploying on friday"), fact("the ui uses react")])
        assert rev is not None
        assert vsvc.indexer is not None
        vsvc.indexer.calibration = Calibration(vector_min_cosine=-1.0, vector_min_top=0.99, support_prefix=5)
        for mode in ("vector", "hybrid"):
            # Below the bar, but a stored word shares the first five letters of "deployment": not a no match.
            assert (await vsvc.search("deployment calendar", memories=[rev], mode=mode)).hits
            # A stored word itself is support; a query of unknown words has none.
            assert (await vsvc.search("react hooks", memories=[rev], mode=mode)).hits
            assert (await vsvc.search("vorzek plimu tarqen", memories=[rev], mode=mode)).hits == ()
        # Exact terms only: the prefix no longer supports it.
        vsvc.indexer.calibration = Calibration(vector_min_cosine=-1.0, vector_min_top=0.99, support_prefix=0)
        assert (await vsvc.search("deployment calendar", memories=[rev], mode="vector")).hits == ()
        # A prose query (it holds a stopword) is held to its own bar.
        vsvc.indexer.calibration = Calibration(vector_min_cosine=-1.0, vector_min_top=0.99, vector_min_top_prose=-1.0)
        assert (await vsvc.search("when is the zorbit plimu", memories=[rev], mode="vector")).hits
        assert (await vsvc.search("zorbit plimu", memories=[rev], mode="vector")).hits == ()
        # The filters apply to the support: a kind nobody has is no support.
        vsvc.indexer.calibration = Calibration(vector_min_cosine=-1.0, vector_min_top=0.99, support_prefix=5)
        assert (await vsvc.search("react hooks", memories=[rev], mode="vector", kinds=["decision"])).hits == ()

    async def test_fast_path_agrees_with_exact_search(self, vsvc: MemoryService) -> None:
        texts = [
            f"note {i} about {w} and {v}"
            for i, (w, v) in enumerate(
                (w, v)
                for w in ("deploy", "backup", "review", "cache", "index")
                for v in ("red", "green", "blue", "grey")
            )
        ]
        rev = await vsvc.remember(None, entries=[fact(t) for t in texts])
        assert rev is not None
        for q in ("backup green", "cache blue", "deploy"):
            for mode in ("vector", "hybrid"):
                fast = await vsvc.search(q, memories=[rev], mode=mode, limit=5)
                exact = await vsvc.search(q, memories=[rev], mode=mode, limit=5, exact=True)
                assert [(h.entry_id, h.matched_by) for h in fast] == [(h.entry_id, h.matched_by) for h in exact]

    async def test_entries_of_many_windows_still_fill_the_limit(self, vsvc: MemoryService) -> None:
        # Each entry is five identical blocks (five windows of the hashing models: the nearest windows of a query come
        # five per entry; a model of token windows cuts them otherwise, still several per entry): a vector
        # search that first reads 3 windows per hit it wants (PostgreSQL: the HNSW statement's LIMIT) must read
        # deeper and still return ``limit`` entries, those of the exact scan.
        words = ("deploy", "backup", "review", "cache", "index", "queue", "lease", "shard")
        texts = []
        for i in range(24):
            block = " ".join(f"{words[(i + j) % len(words)]}{(i * 7 + j) % 11}" for j in range(110)) + "."
            texts.append("\n\n".join([f"Entry {i}: {block}"] * 5))
        assert all(len(self.make_model().windows(t)) >= 3 for t in texts)
        rev = await vsvc.remember(None, entries=[fact(t) for t in texts])
        assert rev is not None
        for q in ("deploy backup", "cache4 queue"):
            fast = await vsvc.search(q, memories=[rev], mode="vector", limit=10)
            exact = await vsvc.search(q, memories=[rev], mode="vector", limit=10, exact=True)
            assert len(fast.hits) == 10 and len({h.entry_id for h in fast}) == 10
            assert [h.entry_id for h in fast] == [h.entry_id for h in exact]

    async def test_vector_search_after_every_write_sees_that_write(self, vsvc: MemoryService) -> None:
        # The in-process index grows with each write (past its first buffer of 1,024 rows) and every search
        # sees the newest vectors, the same as the exact reference scan.
        rev = await vsvc.remember(None, entries=[fact(f"filler note {i} on topic {i % 37}") for i in range(1100)])
        assert rev is not None
        for i, text in enumerate(("zebra crossing rules", "quartz clock repair", "violet paint order")):
            rev = await vsvc.remember(rev, entries=[fact(text)])
            assert rev is not None
            fast = await vsvc.search(text, memories=[rev], mode="vector", limit=3)
            exact = await vsvc.search(text, memories=[rev], mode="vector", limit=3, exact=True)
            assert fast.hits[0].text == text, i
            assert [h.entry_id for h in fast] == [h.entry_id for h in exact]

    async def test_revise_forget_and_reactivate_keep_vectors_exact(self, vsvc: MemoryService) -> None:
        r1 = await vsvc.remember(None, entries=[fact("alpha topic original wording")])
        assert r1 is not None
        eid = r1.changes[0].entry_id
        r2 = await vsvc.remember(r1, entries=[fact("beta subject replacement text", entry=eid)])
        assert r2 is not None
        hits = await vsvc.search("alpha topic original wording", memories=[r2], mode="vector", limit=5)
        assert all(h.entry_version_id == r2.changes[0].to_entry_version_id for h in hits)  # no stale vector
        r3 = await vsvc.forget(r2, entries=[eid])
        assert len(await vsvc.search("beta subject", memories=[r3], mode="vector")) == 0
        r4 = await vsvc.reactivate(r3, entries=[eid])
        assert (await vsvc.search("beta subject", memories=[r4], mode="auto")).mode == "hybrid"
        assert [h.entry_id for h in await vsvc.search("beta subject", memories=[r4], mode="vector")] == [eid]
        assert (await vsvc.verify()).ok

    async def test_writes_without_a_model_commit_and_backfill_fills_the_gap(self, store_url: str) -> None:
        async with self.service(store_url, embedding=self.make_model()) as with_model:
            rev = await with_model.remember(None, entries=[fact("first note about deploys")])
            assert rev is not None
        async with self.service(store_url, embedding=None) as no_model:
            head = await no_model.head(rev.memory_id)
            rev2 = await no_model.remember(head, entries=[fact("second note about caches")])
            assert rev2 is not None and rev2.revision == 2
        async with self.service(store_url, embedding=self.make_model()) as svc:
            head = await svc.head(rev.memory_id)
            auto = await svc.search("caches", memories=[head], mode="auto")
            assert auto.mode == "fts" and auto.fallback_reason and "incomplete" in auto.fallback_reason
            explicit: tuple[Literal["vector", "hybrid"], ...] = ("vector", "hybrid")
            for mode in explicit:
                with pytest.raises(CapabilityNotSupportedError):
                    await svc.search("caches", memories=[head], mode=mode)
            assert await svc.backfill(batch=1) == 1
            assert await svc.backfill() == 0  # resumable and idempotent
            assert (await svc.search("caches", memories=[head], mode="auto")).mode == "hybrid"
            assert (await svc.verify()).ok

    async def test_a_model_failing_halfway_through_a_batch_loses_no_write(self, store_url: str) -> None:
        from ..embedding import FailingEmbedder

        failing = FailingEmbedder(self.make_model(), fail_after=2)
        async with self.service(store_url, embedding=failing) as svc:
            rev = await svc.remember(None, entries=[fact(f"note number {i} on testing") for i in range(5)])
            assert rev is not None and rev.active_count == 5
            result = await svc.search("testing", memories=[rev], mode="auto")
            assert result.mode == "fts" and len(result.hits) == 5
            report = await svc.verify()
            assert report.ok  # no placeholder and no partial vector was stored
        async with self.service(store_url, embedding=self.make_model()) as svc:
            assert await svc.backfill() == 5

    async def test_a_different_model_is_refused_by_name(self, store_url: str) -> None:
        from ..domain.errors import ProfileMismatchError
        from ..embedding import HashingEmbedder

        async with self.service(store_url, embedding=self.make_model()) as svc:
            await svc.remember(None, entries=[fact("x")])
        other = HashingEmbedder(dimension=32)
        with pytest.raises(ProfileMismatchError) as info:
            async with self.service(store_url, embedding=other):
                pass
        assert "hashing-32" in str(info.value) and "reembed" in str(info.value)

    async def test_bad_vectors_are_refused_and_nothing_is_written(self, vsvc: MemoryService) -> None:
        rev = await vsvc.remember(None, entries=[fact("a note")])
        assert rev is not None
        (v,) = await vsvc.entries(rev)
        profile = vsvc.backend.state.embedding_profile
        assert profile is not None
        dim = profile.dimension
        bad = [
            (float("nan"),) + (0.0,) * (dim - 1),
            (1.0,) * (dim + 1),
            (0.0,) * dim,
            (),
            (2.0,) + (0.0,) * (dim - 1),
        ]
        await vsvc.backend.put_vectors({})
        for vec in bad:
            with pytest.raises(InvalidInput):
                await vsvc.backend.put_vectors({v.entry_version_id: (vec,)})
        assert (await vsvc.verify()).ok

    async def test_long_text_keeps_its_tail(self, vsvc: MemoryService) -> None:
        model = vsvc.indexer.model if vsvc.indexer else None
        assert model is not None
        if not self.semantic:
            pytest.skip("the test model is too weak for a meaning-level assertion")
        filler = " ".join(f"filler{i} words about nothing in particular." for i in range(150))
        long_text = filler + " The release train leaves every Thursday from the main branch."
        assert len(model.windows(long_text)) > 1
        rev = await vsvc.remember(None, entries=[fact(long_text), fact("the office has a coffee machine")])
        assert rev is not None
        hits = await vsvc.search("release train leaves every Thursday", memories=[rev], mode="vector", limit=1)
        assert hits[0].text == long_text

    async def test_a_write_from_a_process_on_the_old_model_survives_a_migration(self, store_url: str) -> None:
        # Issue 11: a process opened before another one ran `reembed` still holds the old model; its next write
        # used to fail with a dimension mismatch and be lost. It commits without vectors, and backfill fills them.
        from ..embedding import HashingEmbedder

        async with self.two_processes(store_url) as (old, migrator):
            rev = await old.remember(None, entries=[fact("first note on release trains")])
            assert rev is not None
            await migrator.reembed(HashingEmbedder(dimension=32), batch=8)
            later = await old.remember(rev, entries=[fact("written with the old model after the migration")])
            assert later is not None and later.revision == 2
            again = await old.remember(later, entries=[fact("and once more")])
            assert again is not None
            texts = {v.text for v in await migrator.entries(again)}
            assert "written with the old model after the migration" in texts and "and once more" in texts
            assert (await migrator.verify()).ok
            assert await migrator.backfill() == 2
            assert (await migrator.search("release", memories=[again.memory_id], mode="auto")).mode == "hybrid"
            state = old.backend.state
            assert state.embedding_profile is not None and state.embedding_profile.profile_id == "hashing-32"
            assert (await old.search("release", memories=[again.memory_id], mode="auto")).mode == "fts"

    async def test_a_migration_holds_a_lease_that_expires(self, store_url: str) -> None:
        # Migration liveness is a lease in the store (holder + expiry), not a process id: it means the same to
        # every process and machine on the engine.
        from ..domain.errors import StoreMigratingError
        from ..embedding import HashingEmbedder

        async with self.two_processes(store_url) as (writer, migrator):
            rev = await writer.remember(None, entries=[fact("a note")])
            assert rev is not None
            writer.migration_wait_s = 0.0
            new = HashingEmbedder(dimension=32).profile
            await migrator.backend.start_migration(new)
            with pytest.raises(StoreMigratingError):
                await writer.remember(rev, entries=[fact("paused while the lease is held")])
            await writer.backend.abort_migration()  # not the holder: another's migration is never cleared
            with pytest.raises(StoreMigratingError):
                await writer.remember(rev, entries=[fact("still paused")])
            await migrator.backend.abort_migration()
            assert (await writer.remember(rev, entries=[fact("resumed")])) is not None
            # A lease that runs out (its holder died or hung) is cleared by the next write; the holder loses it.
            migrator.backend.migration_lease_s = -1.0  # type: ignore[attr-defined]
            await migrator.backend.start_migration(new)
            head = await writer.head(rev.memory_id)
            assert (await writer.remember(head, entries=[fact("after the lease ran out")])) is not None
            with pytest.raises(StoreMigratingError, match="lost its lease"):
                await migrator.backend.stage_vectors({})
            assert (await writer.verify()).ok

    async def test_a_migration_stages_only_current_versions(self, vsvc: MemoryService) -> None:
        # Staging is for the versions a reembed must carry over: a vector for a superseded, forgotten, purged or
        # unknown version would outlive its content. Such a batch is refused whole (issue 12).
        from ..embedding import HashingEmbedder
        from ..indexing import VectorIndexer

        r1 = await vsvc.remember(None, entries=[fact("release trains leave weekly"), fact("a note to forget")])
        assert r1 is not None
        (keep, v1), (gone, gone_v) = ((c.entry_id, c.to_entry_version_id) for c in r1.changes)
        r2 = await vsvc.remember(r1, entries=[fact("release trains leave every Monday", entry=keep)])
        assert r2 is not None
        r3 = await vsvc.remember(r2, entries=[fact("release trains leave every Tuesday", entry=keep)])
        assert r3 is not None
        await vsvc.forget(r3, entries=[gone])
        await vsvc.purge(keep, versions=[1], reason="conformance: an old wording erased")
        superseded = next(c.to_entry_version_id for c in r2.changes if c.entry_id == keep)
        model = HashingEmbedder(dimension=32)
        backend = vsvc.backend
        await backend.start_migration(model.profile)
        try:
            (current,) = await backend.unstaged_versions(10)
            staged = await VectorIndexer(model).vectors_for([current])
            vec = staged[current.entry_version_id]
            for stale in (v1, superseded, gone_v, EntryVersionId("ver_00000000000000000000000000")):
                assert stale is not None
                with pytest.raises(InvalidInput, match="not the current version"):
                    await backend.stage_vectors({current.entry_version_id: vec, stale: vec})
                assert [v.entry_version_id for v in await backend.unstaged_versions(10)] == [current.entry_version_id]
            await backend.stage_vectors(staged)
            assert await backend.unstaged_versions(10) == []
            await backend.finish_migration(model.profile)
        except BaseException:
            await backend.abort_migration()
            raise
        assert (await vsvc.verify()).ok

    async def test_reembed_migrates_and_an_interrupted_one_leaves_the_old_profile(self, store_url: str) -> None:
        from ..embedding import FailingEmbedder, HashingEmbedder

        async with self.service(store_url, embedding=self.make_model()) as svc:
            rev = await svc.remember(None, entries=[fact(f"entry {i} on release trains") for i in range(6)])
            assert rev is not None
            old = svc.backend.state.embedding_profile
            with pytest.raises(CapabilityNotSupportedError):
                await svc.reembed(FailingEmbedder(HashingEmbedder(dimension=32), fail_after=3), batch=2)
            assert svc.backend.state.embedding_profile == old
            assert (await svc.search("release", memories=[rev], mode="auto")).mode == "hybrid"
            later = await svc.remember(rev, entries=[fact("writes resume after an aborted migration")])
            assert later is not None
            new_model = HashingEmbedder(dimension=32)
            assert await svc.reembed(new_model, batch=4) == 7
            state = svc.backend.state
            assert state.embedding_profile is not None and state.embedding_profile.profile_id == "hashing-32"
            assert (await svc.search("release", memories=[later], mode="auto")).mode == "hybrid"
            assert (await svc.verify()).ok
        async with self.service(store_url, embedding=HashingEmbedder(dimension=32)) as svc:
            assert (await svc.search("release", memories=[later.memory_id], mode="vector")).hits
