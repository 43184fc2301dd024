"""One conformance suite for every backend, written against the service (domain rules live above adapters)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import threading
import unicodedata
from collections.abc import AsyncIterator, Callable
from typing import Any, Literal, TypeVar

import pytest

from ..domain.errors import (
    ArtifactNotFoundError,
    CapabilityNotSupportedError,
    InvalidCitationError,
    InvalidInput,
    NotFound,
    RevisionConflictError,
)
from ..domain.ids import EntryId, EntryVersionId
from ..domain.model import ArtifactRef, Change, Citation, EntryInput, EntryVersion, Revision
from ..domain.rules import entry_input_from_dict
from ..ports import WritePlan
from ..service import MemoryService
from .record_fixtures import stale_citations
from .records import RecordsConformance
from .writer import start_together

F = TypeVar("F", bound=Callable[..., Any])


def requires(*capabilities: str) -> Callable[[F], F]:
    """Mark a test as needing backend capabilities; it is skipped (visibly) where they are missing."""

    def mark(fn: F) -> F:
        setattr(fn, "_memstone_requires", capabilities)  # noqa: B010
        return fn

    return mark


def has_capability(service: MemoryService, name: str) -> bool:
    """Whether the engine can do ``name`` here; ``vector``/``hybrid`` also need a profile recorded in the store."""
    caps = service.backend.capabilities
    if name in ("vector", "hybrid"):
        return bool(getattr(caps, name)) and service.backend.state.embedding_profile is not None
    return bool(getattr(caps, name))


def fact(text: str, **kw: Any) -> EntryInput:
    return EntryInput(kind=kw.pop("kind", "fact"), text=text, **kw)


async def revised_once(svc: MemoryService) -> tuple[Revision, EntryVersion, Revision]:
    """A new memory with the entry ``v1``, then revised to ``v2``: the first revision, v1's version, the second."""
    r1 = await svc.remember(None, entries=[fact("v1")])
    assert r1 is not None
    v1 = await svc.get(r1.changes[0].entry_id)
    r2 = await svc.remember(r1, entries=[fact("v2", entry=v1)])
    assert r2 is not None
    return r1, v1, r2


class MemoryBackendConformance(RecordsConformance):
    """Subclass and provide ``store_url``. Tests are async and run against a fresh store each.

    ``embedding`` names the model profile the store runs with (``None``: no model, FTS only). The suite runs
    unchanged either way; vector tests are gated by the ``vector`` capability.
    """

    embedding: str | None = None

    @pytest.fixture
    async def svc(self, store_url: str, request: pytest.FixtureRequest) -> AsyncIterator[MemoryService]:
        async with self.service(store_url, embedding=self.embedding) as service:
            needed = getattr(request.function, "_memstone_requires", ())
            missing = [c for c in needed if not has_capability(service, c)]
            if missing:
                pytest.skip(f"backend lacks capability: {', '.join(missing)}")
            yield service

    async def _count_revisions(self, svc: MemoryService, memory_id: str) -> int:
        return (await svc.head(memory_id)).revision

    # ---------------------------------------------------------------- creation and no-ops
    async def test_create_only_when_there_is_content(self, svc: MemoryService) -> None:
        with pytest.raises(InvalidInput):
            await svc.remember(None, entries=[], mode="append")
        assert await svc.memories() == ()
        rev = await svc.remember(None, entries=[fact("We deploy with uv.")])
        assert rev is not None and rev.revision == 1 and rev.active_count == 1
        assert [r.memory_id for r in await svc.memories()] == [rev.memory_id]

    async def test_auto_without_entries_or_evidence_is_refused(self, svc: MemoryService) -> None:
        with pytest.raises(InvalidInput):
            await svc.remember(None, mode="auto")
        src = await svc.record_source("note", "the user said something")
        with pytest.raises(CapabilityNotSupportedError):
            await svc.remember(None, sources=[src], mode="auto")
        with pytest.raises(CapabilityNotSupportedError):
            await svc.remember(None, sources=[src], mode="extract")
        assert await svc.memories() == ()

    async def test_noop_returns_the_same_revision_and_writes_nothing(self, svc: MemoryService) -> None:
        rev = await svc.remember(None, entries=[fact("A"), fact("B")])
        assert rev is not None
        again = await svc.remember(rev, entries=[fact("A")])
        assert again == rev
        entry = (await svc.entries(rev))[0]
        same = await svc.remember(rev, entries=[fact(entry.text, entry=entry)])
        assert same == rev
        assert (await svc.head(rev.memory_id)) == rev
        assert len(await svc.changes(rev, since_revision=0)) == 1

    async def test_identical_new_entries_in_one_batch_keep_the_first(self, svc: MemoryService) -> None:
        rev = await svc.remember(None, entries=[fact("same", reason="first"), fact("same", reason="second")])
        assert rev is not None and rev.entry_count == 1
        assert rev.changes[0].reason == "first"

    async def test_forget_and_reactivate_never_create_empty_revisions(self, svc: MemoryService) -> None:
        rev = await svc.remember(None, entries=[fact("A")])
        assert rev is not None
        eid = rev.changes[0].entry_id
        assert await svc.reactivate(rev, entries=[eid]) == rev  # already active
        r2 = await svc.forget(rev, entries=[eid], reason="user_requested")
        assert r2.revision == 2 and r2.active_count == 0
        assert await svc.forget(r2, entries=[eid]) == r2  # already inactive
        assert (await svc.head(rev.memory_id)).revision == 2

    # ---------------------------------------------------------------- concurrency
    async def test_stale_base_raises_revision_conflict_and_writes_nothing(self, svc: MemoryService) -> None:
        r1 = await svc.remember(None, entries=[fact("A")])
        assert r1 is not None
        r2 = await svc.remember(r1, entries=[fact("B")])
        assert r2 is not None
        with pytest.raises(RevisionConflictError) as info:
            await svc.remember(r1, entries=[fact("C")])
        assert info.value.code == "revision_conflict" and info.value.actual == 2
        with pytest.raises(RevisionConflictError):
            await svc.forget(r1, entries=[r1.changes[0].entry_id])
        head = await svc.head(r1.memory_id)
        assert head == r2
        assert {e.text for e in await svc.entries(head)} == {"A", "B"}

    @requires("concurrent_processes")
    async def test_two_writer_threads_lose_nothing(self, svc: MemoryService, store_url: str) -> None:
        rev = await svc.remember(None, entries=[fact("seed")])
        assert rev is not None
        per_writer = 15
        errors: list[BaseException] = []

        def writer(tag: str) -> None:
            async def go() -> None:
                async with self.service(store_url, embedding=self.embedding) as mine:
                    for i in range(per_writer):
                        while True:
                            head = await mine.head(rev.memory_id)
                            try:
                                await mine.remember(head, entries=[fact(f"{tag} {i}")])
                                break
                            except RevisionConflictError:
                                continue

            try:
                asyncio.run(go())
            except BaseException as exc:  # pragma: no cover - reported below
                errors.append(exc)

        threads = [threading.Thread(target=writer, args=(t,)) for t in ("left", "right")]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == []
        head = await svc.head(rev.memory_id)
        assert head.revision == 1 + 2 * per_writer
        texts = {e.text for e in await svc.entries(head)}
        assert texts == {"seed"} | {f"{t} {i}" for t in ("left", "right") for i in range(per_writer)}
        assert (await svc.verify()).ok

    @requires("concurrent_processes")
    async def test_separate_writer_processes_lose_nothing(self, svc: MemoryService, store_url: str) -> None:
        rev = await svc.remember(None, entries=[fact("seed")])
        assert rev is not None
        n = 12  # the three start together (--ready), so each of their writes races the others'
        procs = start_together(store_url, rev.memory_id, n, ("p1", "p2", "p3"))
        outs = [p.communicate(timeout=300) for p in procs]
        for p, (out, err) in zip(procs, outs, strict=True):
            assert p.returncode == 0, err
            assert json.loads(out)["written"] == n
        head = await svc.head(rev.memory_id)
        assert head.revision == 1 + 3 * n
        texts = {e.text for e in await svc.entries(head)}
        assert len(texts) == 1 + 3 * n
        report = await svc.verify()
        assert report.ok, report

    @requires("concurrent_processes")
    async def test_searches_by_id_or_scope_never_fail_while_another_process_writes(
        self, svc: MemoryService, store_url: str
    ) -> None:
        # Issue 12 finding 2: the head a search searches is read in the search's own read transaction, so a
        # writer committing between the caller's resolve and the search never fails it.
        scope = "memstone://orgs/acme/projects/race"
        rev = await svc.remember(None, scope=scope, entries=[fact("seed note wrote by nobody")])
        assert rev is not None
        n = 20  # enough for the head to move under the searches many times
        writer = subprocess.Popen(
            [sys.executable, "-m", "memstone.testing.writer", store_url, rev.memory_id, str(n), "racer"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        searches = 0
        seen_revisions: set[int] = set()
        try:
            while writer.poll() is None or searches < 20:
                by_id = await svc.search("wrote note", memories=[rev.memory_id], mode="fts", limit=100)
                by_scope = await svc.search("wrote", scopes=[scope], mode="fts", limit=100, include_superseded=True)
                for result in (by_id, by_scope):
                    revisions = {h.memory_ref.revision for h in result.hits}
                    assert len(revisions) == 1  # every hit comes from the one head the search read
                    seen_revisions |= revisions
                searches += 2
        finally:
            out, err = writer.communicate(timeout=300)
        assert writer.returncode == 0, err
        assert json.loads(out)["written"] == n
        assert searches >= 20 and len(seen_revisions) > 1  # the searches really ran while the head moved
        final = await svc.search("wrote", memories=[rev.memory_id], mode="fts", limit=100)
        assert len(final.hits) == 1 + n

    # ---------------------------------------------------------------- immutability
    async def test_old_revisions_and_versions_never_change(self, svc: MemoryService) -> None:
        r1 = await svc.remember(None, entries=[fact("first"), fact("second", tags=["x"])])
        assert r1 is not None
        v1 = {v.entry_version_id: json.dumps(v.to_dict(), sort_keys=True) for v in await svc.entries(r1)}
        r1_bytes = json.dumps(r1.to_dict(), sort_keys=True)
        m1 = await svc.manifest(r1)
        head: Revision = r1
        ids = [c.entry_id for c in r1.changes]
        for i in range(30):
            cur = await svc.get(ids[i % 2])
            nxt = await svc.remember(head, entries=[fact(f"{cur.text} v{i}", entry=cur)])
            assert nxt is not None
            head = nxt
            if i % 7 == 0:
                head = await svc.forget(head, entries=[ids[0]])
                head = await svc.reactivate(head, entries=[ids[0]])
        assert json.dumps((await svc.revision(r1.memory_id, 1)).to_dict(), sort_keys=True) == r1_bytes
        assert await svc.manifest(r1) == m1
        for vid, snapshot in v1.items():
            assert json.dumps((await svc.get(vid)).to_dict(), sort_keys=True) == snapshot
        assert (await svc.verify()).ok

    async def test_revision_hash_commits_to_content(self, svc: MemoryService) -> None:
        r1 = await svc.remember(None, entries=[fact("A")])
        assert r1 is not None
        r2 = await svc.remember(r1, entries=[fact("B")])
        assert r2 is not None
        assert r1.content_hash != r2.content_hash and r1.manifest_root != r2.manifest_root
        assert len(r2.content_hash) == 64 and r2.content_hash == r2.content_hash.lower()

    # ---------------------------------------------------------------- predecessor rule
    async def test_revision_must_follow_the_current_version(self, svc: MemoryService) -> None:
        r1, old, r2 = await revised_once(svc)
        with pytest.raises(InvalidInput, match="stale entry"):
            await svc.remember(r2, entries=[fact("v3", entry=old)])  # skips v2
        current = await svc.get(old.entry_id)
        assert current.version == 2 and current.previous_version_id == old.entry_version_id
        r3 = await svc.forget(r2, entries=[current])
        with pytest.raises(InvalidInput, match="inactive"):
            await svc.remember(r3, entries=[fact("v3", entry=current)])
        assert (await svc.head(r1.memory_id)) == r3

    async def test_unit_of_work_refuses_a_branching_plan(self, svc: MemoryService) -> None:
        r1, v1, r2 = await revised_once(svc)
        from dataclasses import replace

        forged = replace(
            v1,
            entry_version_id=EntryVersionId("ver_FORGED000000000000000000"),
            version=2,
            previous_version_id=v1.entry_version_id,
            created_in_revision=3,
        )
        plan = WritePlan(
            memory_id=r2.memory_id,
            base_revision=2,
            changes=(
                Change(
                    op="revise",
                    entry_id=v1.entry_id,
                    from_entry_version_id=v1.entry_version_id,
                    to_entry_version_id=forged.entry_version_id,
                ),
            ),
            new_versions=(forged,),
        )
        with pytest.raises(InvalidInput):
            async with svc.backend.begin() as uow:
                await uow.commit(plan)
        cross = replace(forged, entry_id=EntryId("ent_OTHER0000000000000000000"))
        plan2 = replace(plan, new_versions=(cross,))
        with pytest.raises(InvalidInput):
            async with svc.backend.begin() as uow:
                await uow.commit(plan2)
        assert (await svc.head(r1.memory_id)) == r2

    # ---------------------------------------------------------------- lifecycle
    async def test_forget_and_reactivate_keep_history_and_the_same_version(self, svc: MemoryService) -> None:
        r1 = await svc.remember(None, entries=[fact("keep me")])
        assert r1 is not None
        eid = r1.changes[0].entry_id
        vid = r1.changes[0].to_entry_version_id
        r2 = await svc.forget(r1, entries=[eid], reason="user_requested")
        assert r2.changes == (
            Change(
                op="deactivate",
                entry_id=eid,
                from_entry_version_id=vid,
                to_entry_version_id=None,
                reason="user_requested",
            ),
        )
        assert (await svc.manifest(r2))[eid].state == "inactive"
        assert (await svc.manifest(r1))[eid].state == "active"
        hist = await svc.history(eid)
        assert [h.status for h in hist] == ["deleted"]
        r3 = await svc.reactivate(r2, entries=[eid], reason="user_restored")
        assert r3.changes[0].op == "reactivate" and r3.changes[0].to_entry_version_id == vid
        assert (await svc.manifest(r3))[eid].entry_version_id == vid
        hits = await svc.search("keep", memories=[r3], mode="fts")
        assert [h.entry_version_id for h in hits] == [vid]

    async def test_organize_dedupes_exact_copies_keeping_the_smallest_id(self, svc: MemoryService) -> None:
        r1 = await svc.remember(None, entries=[fact("dup")])
        assert r1 is not None
        first = r1.changes[0].entry_id
        r2 = await svc.forget(r1, entries=[first])
        r3 = await svc.remember(r2, entries=[fact("dup")])  # a new entry: the old one is inactive
        assert r3 is not None and r3.entry_count == 2
        r4 = await svc.reactivate(r3, entries=[first])
        assert r4.active_count == 2
        r5 = await svc.organize(r4)
        assert r5.revision == 5 and r5.active_count == 1
        (change,) = r5.changes
        assert change.op == "deactivate" and change.reason == "dedupe"
        survivor = min((first, r3.changes[0].entry_id), key=lambda e: e.encode())
        assert change.entry_id != survivor
        assert await svc.organize(r5) == r5

    # ---------------------------------------------------------------- changes()
    async def test_changes_since_zero_middle_and_invalid(self, svc: MemoryService) -> None:
        r1 = await svc.remember(None, entries=[fact("a")])
        assert r1 is not None
        r2 = await svc.remember(r1, entries=[fact("b")])
        assert r2 is not None
        r3 = await svc.forget(r2, entries=[r1.changes[0].entry_id], reason="gone")
        all_ = await svc.changes(r3, since_revision=0)
        assert [d.memory_ref.revision for d in all_] == [1, 2, 3]
        assert [c.op for d in all_ for c in d.changes] == ["add", "add", "deactivate"]
        assert [d.memory_ref.revision for d in await svc.changes(r3, since_revision=1)] == [2, 3]
        assert [d.memory_ref.revision for d in await svc.changes(r3)] == [3]
        assert await svc.changes(r3, since_revision=3) == ()
        assert [d.memory_ref.revision for d in await svc.changes(r2, since_revision=0)] == [1, 2]
        with pytest.raises(InvalidInput):
            await svc.changes(r3, since_revision=-1)
        with pytest.raises(InvalidInput):
            await svc.changes(r2, since_revision=3)
        with pytest.raises(ArtifactNotFoundError):
            await svc.changes(ArtifactRef(memory_id=r3.memory_id, revision=9))
        with pytest.raises(ArtifactNotFoundError):
            await svc.changes(ArtifactRef(memory_id="mem_NOPE0000000000000000000000", revision=1))  # type: ignore[arg-type]

    # ---------------------------------------------------------------- expand and citations
    async def test_expand_validates_every_anchor(self, svc: MemoryService) -> None:
        r1 = await svc.remember(None, entries=[fact("cite me")])
        assert r1 is not None
        hit = (await svc.search("cite", memories=[r1], mode="fts"))[0]
        (v,) = await svc.expand([hit])
        assert v.text == "cite me"
        r2 = await svc.remember(r1, entries=[fact("cite me, revised", entry=v)])
        assert r2 is not None
        # The old citation still resolves exactly: it names revision 1.
        assert (await svc.verify_citation(svc.cite(hit))).entry_version_id == v.entry_version_id
        bad = [
            Citation(
                memory_ref=r1.ref,
                entry_id=EntryId("ent_NOPE0000000000000000000"),
                entry_version_id=hit.entry_version_id,
            ),
            *stale_citations(hit, r1, r2),
        ]
        for citation in bad:
            with pytest.raises(InvalidCitationError):
                await svc.verify_citation(citation)
        with pytest.raises(ArtifactNotFoundError):
            await svc.expand(
                [
                    Citation(
                        memory_ref=ArtifactRef(memory_id=r1.memory_id, revision=7),
                        entry_id=hit.entry_id,
                        entry_version_id=hit.entry_version_id,
                    )
                ]
            )

    # ---------------------------------------------------------------- search
    @requires("fts")
    async def test_search_never_returns_inactive_and_refuses_non_heads(self, svc: MemoryService) -> None:
        r1 = await svc.remember(None, entries=[fact("alpha deploy"), fact("beta deploy")])
        assert r1 is not None
        hits = await svc.search("deploy", memories=[r1], mode="fts")
        assert len(hits) == 2
        r2 = await svc.forget(r1, entries=[hits[0].entry_id])
        after = await svc.search("deploy", memories=[r2], mode="fts")
        assert [h.entry_id for h in after] == [hits[1].entry_id]
        with pytest.raises(CapabilityNotSupportedError):
            await svc.search("deploy", memories=[r1], mode="fts")
        assert [h.entry_id for h in await svc.search("deploy", memories=[r2.memory_id], mode="fts")] == [
            hits[1].entry_id
        ]

    @requires("fts")
    async def test_fts_syntax_is_searched_as_words(self, svc: MemoryService) -> None:
        r1 = await svc.remember(None, entries=[fact("use NEAR and AND between terms"), fact("nothing relevant here")])
        assert r1 is not None
        for query in ('"AND" OR NEAR( * ^ -', "NEAR(", "-x", "col:value", "^start"):
            result = await svc.search(query, memories=[r1], mode="fts")
            assert result.mode == "fts"
        for query in ("*", '"', "a OR", "", "   "):  # no word, or stopwords only: refused, never sent to MATCH
            with pytest.raises(InvalidInput):
                await svc.search(query, memories=[r1], mode="fts")
        hits = await svc.search('"AND" OR NEAR( * ^ -', memories=[r1], mode="fts")
        assert [h.text for h in hits] == ["use NEAR and AND between terms"]

    @requires("fts")
    async def test_chinese_query_finds_chinese_entry(self, svc: MemoryService) -> None:
        r1 = await svc.remember(
            None, entries=[fact("数据库每天凌晨备份一次"), fact("前端使用 React 构建"), fact("English only")]
        )
        assert r1 is not None
        hits = await svc.search("数据库备份", memories=[r1], mode="fts")
        assert hits[0].text == "数据库每天凌晨备份一次"
        assert [h.text for h in await svc.search("React", memories=[r1], mode="fts")] == ["前端使用 React 构建"]

    @requires("fts")
    async def test_auto_falls_back_to_fts_and_says_so(self, svc: MemoryService) -> None:
        r1 = await svc.remember(None, entries=[fact("we deploy on fridays")])
        assert r1 is not None
        if has_capability(svc, "vector"):
            pytest.skip("this store has a vector projection")
        result = await svc.search("deploy", memories=[r1], mode="auto")
        assert result.mode == "fts" and result.requested_mode == "auto" and result.fallback_reason
        modes: tuple[Literal["vector", "hybrid"], ...] = ("vector", "hybrid")
        for mode in modes:
            with pytest.raises(CapabilityNotSupportedError):
                await svc.search("deploy", memories=[r1], mode=mode)

    @requires("fts")
    async def test_search_spans_memories_and_filters(self, svc: MemoryService) -> None:
        a = await svc.remember(
            None, entries=[fact("deploy via uv", tags=["ops"]), fact("deploy rule", kind="constraint")]
        )
        b = await svc.remember(None, entries=[fact("deploy elsewhere", important=True)])
        assert a is not None and b is not None
        both = await svc.search("deploy", memories=[a, b], mode="fts")
        assert {h.memory_ref.memory_id for h in both} == {a.memory_id, b.memory_id}
        assert [h.text for h in await svc.search("deploy", memories=[a, b], kinds=["constraint"], mode="fts")] == [
            "deploy rule"
        ]
        assert [h.text for h in await svc.search("deploy", memories=[a, b], tags=["ops"], mode="fts")] == [
            "deploy via uv"
        ]
        assert [h.text for h in await svc.search("deploy", memories=[a, b], important=True, mode="fts")] == [
            "deploy elsewhere"
        ]
        assert len(await svc.search("deploy", memories=[a, b], limit=1, mode="fts")) == 1
        with pytest.raises(InvalidInput):
            await svc.search("deploy", mode="fts")
        with pytest.raises(InvalidInput):
            await svc.search("deploy", memories=[a], limit=0)

    @requires("fts")
    async def test_fts_admission_requires_enough_informative_terms(self, svc: MemoryService) -> None:
        r1 = await svc.remember(
            None, entries=[fact("postgres backups run nightly at two"), fact("the frontend build uses vite")]
        )
        assert r1 is not None
        hits = await svc.search("when do the postgres backups run", memories=[r1], mode="fts")
        assert [h.text for h in hits] == ["postgres backups run nightly at two"]
        # "the" alone is a stopword match; the informative terms match nothing, so nothing is admitted.
        assert (
            len(await svc.search("the kubernetes ingress controller certificate rotation", memories=[r1], mode="fts"))
            == 0
        )

    # ---------------------------------------------------------------- validation
    async def test_bad_input_is_refused_clearly_and_nothing_is_written(self, svc: MemoryService) -> None:
        r1 = await svc.remember(None, entries=[fact("base")])
        assert r1 is not None
        bad_inputs: list[Callable[[], Any]] = [
            lambda: fact("x" * 8193),
            lambda: fact("é" * 4097),  # 8194 UTF-8 bytes
            lambda: fact("   "),
            lambda: fact("ok", reason="r" * 513),
            lambda: fact(float("nan")),  # type: ignore[arg-type]
            lambda: fact("ok", kind="not a kind!"),
            lambda: fact("ok", slug="Not_Kebab"),
            lambda: fact("ok", sources=["bad id with spaces"]),
            lambda: fact("ok", entry="not-an-entry-id"),
            lambda: fact("ok", relations=[{"kind": "relates-to", "target": "x" * 200}]),
        ]
        for make in bad_inputs:
            with pytest.raises(InvalidInput) as info:
                await svc.remember(r1, entries=[make()])
            assert str(info.value)
        with pytest.raises(InvalidInput, match="unknown field"):
            entry_input_from_dict({"kind": "fact", "text": "x", "colour": "red"})
        with pytest.raises(InvalidInput):
            await svc.forget(r1, entries=["ent_" + "Z" * 200])
        with pytest.raises(InvalidInput):
            await svc.remember(
                r1,
                entries=[fact("cites nothing real", sources=["src_UNKNOWN000000000000000000"])],
                sources=["src_UNKNOWN000000000000000000"],
            )
        assert (await svc.head(r1.memory_id)) == r1
        assert [e.text for e in await svc.entries(r1)] == ["base"]

    async def test_limits_are_inclusive(self, svc: MemoryService) -> None:
        r1 = await svc.remember(None, entries=[fact("x" * 8192, reason="r" * 512)])
        assert r1 is not None and r1.changes[0].reason == "r" * 512

    async def test_text_is_nfc_and_trimmed(self, svc: MemoryService) -> None:
        decomposed = "  cafe\u0301 notes  "
        r1 = await svc.remember(None, entries=[fact(decomposed)])
        assert r1 is not None
        (v,) = await svc.entries(r1)
        assert v.text == unicodedata.normalize("NFC", "cafe\u0301 notes")
        assert await svc.remember(r1, entries=[fact("café notes")]) == r1  # the same content after NFC

    async def test_unknown_kinds_are_preserved(self, svc: MemoryService) -> None:
        r1 = await svc.remember(None, entries=[fact("custom", kind="runbook_step"), fact("xema", kind="LESSON")])
        assert r1 is not None
        # Kept, case-normalized: `LESSON` and `lesson` are one kind (issue 11).
        assert sorted(e.kind for e in await svc.entries(r1)) == ["lesson", "runbook_step"]

    async def test_evidence_must_come_from_the_operation(self, svc: MemoryService) -> None:
        src = await svc.record_source("user_note", "We always deploy with uv.")
        other = await svc.record_source("user_note", "unrelated")
        with pytest.raises(InvalidInput, match="outside"):
            await svc.remember(None, sources=[src], entries=[fact("deploy with uv", sources=[other.source_id])])
        r1 = await svc.remember(None, sources=[src], entries=[fact("deploy with uv")])
        assert r1 is not None and r1.sources == (src.source_id,)
        (v,) = await svc.entries(r1)
        assert v.content.sources == (src.source_id,)
        # A revision keeps its predecessor's evidence and adds the operation's.
        r2 = await svc.remember(r1, sources=[other], entries=[fact("deploy with uv, always", entry=v)])
        assert r2 is not None
        assert set((await svc.get(v.entry_id)).content.sources) == {src.source_id, other.source_id}

    async def test_history_walks_previous_and_next(self, svc: MemoryService) -> None:
        r1 = await svc.remember(None, entries=[fact("one")], author="alice")
        assert r1 is not None
        eid = r1.changes[0].entry_id
        head: Revision = r1
        for text in ("two", "three"):
            nxt = await svc.remember(head, entries=[fact(text, entry=eid)], author="bob")
            assert nxt is not None
            head = nxt
        chain = await svc.history(eid)
        assert [h.version.text for h in chain] == ["one", "two", "three"]
        assert [h.status for h in chain] == ["superseded", "superseded", "current"]
        assert chain[1].previous_version_id == chain[0].version.entry_version_id
        assert chain[1].next_version_id == chain[2].version.entry_version_id
        assert [h.version.provenance.author for h in chain] == ["alice", "bob", "bob"]
        md = await svc.source(eid)
        assert md.startswith("---\n") and 'id: "' + eid + '"' in md and "revision: 3" in md and md.endswith("three\n")
        old = await svc.get(eid, memory=r1)
        assert old.text == "one"
        with pytest.raises(NotFound):
            await svc.get("ent_NOPE0000000000000000000000")
