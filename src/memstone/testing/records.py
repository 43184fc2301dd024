"""Conformance for the record surface (issue 4): scopes, records, catalogues, Graphit search, precedence, recall,
history, relations and aliases, Markdown both ways, closed kinds and citations.

Mixed into :class:`memstone.testing.MemoryBackendConformance`, so every backend runs it unchanged. Tests that need a
second, empty store use the ``empty_store_url`` fixture (override it for a server backend).
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from ..domain.errors import AlreadyExists, Conflict, IntegrityError, InvalidCitationError, InvalidInput, NotFound
from ..domain.ids import EntryId
from ..domain.ledger import INDEX_NAME
from ..domain.model import ArtifactRef, Citation, EntryInput, Revision
from ..domain.scopes import canonical_scope, parse_scope
from ..ports import MemoryVersionsQuery, RevisionsQuery
from ..service import MemoryService
from .fixtures import StoreFixtures

ORG = "memstone://orgs/acme"
PROJECT = "memstone://orgs/acme/projects/web"
USER = "memstone://users/alice"
OTHER_ORG = "memstone://orgs/globex"


class TickingClock:
    """A clock that moves one second per call, so ``updated_at`` order is exact and reproducible."""

    def __init__(self, start: _dt.datetime = _dt.datetime(2026, 1, 1, tzinfo=_dt.UTC)) -> None:
        self.now = start

    def __call__(self) -> str:
        self.now += _dt.timedelta(seconds=1)
        return self.now.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def entry(text: str, kind: str = "fact", **kw: Any) -> EntryInput:
    return EntryInput(kind=kind, text=text, **kw)


async def by_text(svc: MemoryService, memory: Revision | str) -> dict[str, EntryId]:
    return {v.text: v.entry_id for v in await svc.entries(memory, include_inactive=True)}


def tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


class RecordsConformance(StoreFixtures):
    """The record-surface half of the conformance suite (needs the ``svc`` and ``store_url`` fixtures)."""

    embedding: str | None = None

    @pytest.fixture
    def empty_stores(self, store_url: str, tmp_path: Path) -> Callable[[str], str]:
        """URLs of further fresh, empty stores of the same backend, one per name (override for a server)."""
        if store_url.endswith(":memory:"):
            return lambda name: store_url  # every open of an in-memory URL is a new, empty store
        if store_url.startswith("sqlite:"):
            return lambda name: f"sqlite:///{tmp_path / f'{name}.db'}"
        pytest.skip("this backend does not provide empty_stores")

    @pytest.fixture
    def empty_store_url(self, empty_stores: Callable[[str], str]) -> str:
        """A second fresh, empty store of the same backend."""
        return empty_stores("second-store")

    @asynccontextmanager
    async def ticking(self, url: str, **kw: Any) -> AsyncIterator[MemoryService]:
        async with self.service(url, embedding=self.embedding, clock=kw.pop("clock", TickingClock()), **kw) as svc:
            yield svc

    # ---------------------------------------------------------------- 1. scopes
    async def test_scope_uris_are_validated_and_canonicalised(self, svc: MemoryService) -> None:
        assert canonical_scope(" memstone://Orgs/ACME/ ") == ORG
        assert canonical_scope("xema://orgs/acme/projects/Web") == PROJECT
        assert canonical_scope("memstone://users/anonymous") == "memstone://users/anonymous"
        assert parse_scope(PROJECT).tier == "project" and parse_scope(USER).tier == "user"
        for bad in (
            "memstone://projects/web",
            "https://orgs/acme",
            "memstone://orgs/",
            "memstone://orgs/a b",
            "memstone://orgs/../x",
            "memstone://users/alice/extra",
            "memstone://orgs/acme/teams/x",
            "",
        ):
            with pytest.raises(InvalidInput, match="scope"):
                await svc.remember(None, scope=bad, entries=[entry("never written")])
        assert await svc.memories() == ()
        rev = await svc.remember(None, scope="memstone://Orgs/Acme", entries=[entry("canonical")])
        assert rev is not None
        assert await svc.scopes() == ((ORG, rev.memory_id),)
        resolved = await svc.resolve("MEMSTONE://orgs/acme/")
        assert resolved is not None and resolved.memory_id == rev.memory_id
        assert await svc.resolve(USER) is None

    async def test_first_write_binds_the_scope_and_later_writes_share_its_memory(self, svc: MemoryService) -> None:
        r1 = await svc.remember(None, scope=PROJECT, entries=[entry("first")])
        r2 = await svc.remember(None, scope=PROJECT, entries=[entry("second")])
        assert r1 is not None and r2 is not None
        assert r2.memory_id == r1.memory_id and r2.revision == 2
        assert len(await svc.memories()) == 1

    async def test_bind_resolve_and_list(self, svc: MemoryService) -> None:
        loose = await svc.remember(None, entries=[entry("made before its scope")])
        other = await svc.remember(None, scope=ORG, entries=[entry("org")])
        assert loose is not None and other is not None
        head = await svc.bind(USER, loose)
        assert head.memory_id == loose.memory_id
        assert await svc.bind("memstone://users/Alice", loose.memory_id) == head  # idempotent, canonical
        with pytest.raises(AlreadyExists, match="already bound"):
            await svc.bind(USER, other)
        with pytest.raises(AlreadyExists, match="already bound"):
            await svc.bind("memstone://users/bob", loose)
        with pytest.raises(InvalidInput):
            await svc.bind("memstone://nowhere", loose)
        assert dict(await svc.scopes()) == {ORG: other.memory_id, USER: loose.memory_id}
        later = await svc.remember(None, scope=USER, entries=[entry("into the bound memory")])
        assert later is not None and later.memory_id == loose.memory_id

    async def test_every_operation_that_takes_memories_takes_scopes(self, svc: MemoryService, tmp_path: Path) -> None:
        rev = await svc.remember(
            None,
            scope=PROJECT,
            entries=[entry("deploy with uv", mandatory=True), entry("deploy on tuesdays", important=True)],
        )
        assert rev is not None
        by_memory = await svc.search("deploy", memories=[rev], mode="fts")
        by_scope = await svc.search("deploy", scopes=[PROJECT], mode="fts")
        assert [h.entry_id for h in by_scope] == [h.entry_id for h in by_memory] and len(by_scope) == 2
        assert all(h.scope == PROJECT for h in by_scope)
        for op in (svc.list, svc.important, svc.mandatory):
            assert await op(scopes=[PROJECT]) == await op(memories=[rev])
        a = await svc.recall("deploy", scopes=[PROJECT], mode="fts")
        b = await svc.recall("deploy", memories=[rev], mode="fts")
        assert a.to_dict() == b.to_dict()
        await svc.export_markdown(tmp_path / "a", scopes=[PROJECT])
        await svc.export_markdown(tmp_path / "b", memories=[rev])
        assert tree(tmp_path / "a") == tree(tmp_path / "b")
        # An unbound scope is an empty selection, not an error; naming nothing at all is.
        assert await svc.list(scopes=[USER]) == ()
        with pytest.raises(InvalidInput, match="at least one memory or scope"):
            await svc.list()

    @pytest.mark.slow
    async def test_concurrent_first_write_from_separate_processes_keeps_one_memory_and_every_write(
        self, svc: MemoryService, store_url: str
    ) -> None:
        if not svc.backend.capabilities.concurrent_processes:
            pytest.skip("backend lacks capability: concurrent_processes")
        writers, per_writer = 4, 3
        procs = [
            subprocess.Popen(
                [sys.executable, "-m", "memstone.testing.scope_writer", store_url, PROJECT, f"w{i}", str(per_writer)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for i in range(writers)
        ]
        for p in procs:
            assert p.stdout is not None and p.stdout.readline().strip() == "ready"
        for p in procs:  # release every writer at once: they race to create the scope's Memory
            assert p.stdin is not None
            p.stdin.write("go\n")
            p.stdin.flush()
        outs = [p.communicate(timeout=300) for p in procs]
        for p, (_, err) in zip(procs, outs, strict=True):
            assert p.returncode == 0, err
        landed = {json.loads(out.splitlines()[-1])["memory_id"] for out, _ in outs}
        assert len(landed) == 1
        (memory_id,) = landed
        assert [h.memory_id for h in await svc.memories()] == [memory_id]
        assert await svc.scopes() == ((PROJECT, memory_id),)
        head = await svc.head(memory_id)
        assert head.revision == writers
        texts = {v.text for v in await svc.entries(head)}
        assert texts == {f"w{i} first write, note {n}" for i in range(writers) for n in range(per_writer)}
        assert (await svc.verify()).ok

    # ---------------------------------------------------------------- 2. records
    async def test_a_record_has_title_tags_slug_flags_author_and_timestamps(self, store_url: str) -> None:
        async with self.ticking(store_url, author="alice") as svc:
            rev = await svc.remember(
                None,
                scope=PROJECT,
                entries=[
                    entry(
                        "Use table-driven cases.",
                        "convention",
                        title="Table tests",
                        tags=["Go", "testing"],
                        slug="table-tests",
                        important=True,
                    )
                ],
            )
            assert rev is not None
            (record,) = await svc.list(scopes=[PROJECT])
            assert (record.title, record.tags, record.slug, record.kind) == (
                "Table tests",
                ("go", "testing"),
                "table-tests",
                "convention",
            )
            assert (record.important, record.mandatory, record.category) == (True, False, "important")
            assert record.updated_by == "alice" and record.revision == 1 and record.scope == PROJECT
            assert record.created_at == record.updated_at == "2026-01-01T00:00:01.000Z"
            head = await svc.flag(rev, record.entry_id, mandatory=True)
            (after,) = await svc.list(scopes=[PROJECT])
            assert after.created_at == "2026-01-01T00:00:01.000Z" and after.updated_at == "2026-01-01T00:00:02.000Z"
            assert after.revision == 2 and head.revision == 2

    async def test_slug_is_unique_among_live_entries_of_one_kind_in_a_scope(self, svc: MemoryService) -> None:
        rev = await svc.remember(None, scope=PROJECT, entries=[entry("A", "lesson", slug="retry")])
        assert rev is not None
        with pytest.raises(AlreadyExists, match="slug 'retry'"):
            await svc.remember(rev, entries=[entry("B", "lesson", slug="retry")])
        with pytest.raises(AlreadyExists):
            await svc.remember(rev, entries=[entry("C", "lesson", slug="dup"), entry("D", "lesson", slug="dup")])
        assert await svc.head(rev.memory_id) == rev  # nothing was written
        other_kind = await svc.remember(rev, entries=[entry("B", "pattern", slug="retry")])
        other_scope = await svc.remember(None, scope=USER, entries=[entry("B", "lesson", slug="retry")])
        assert other_kind is not None and other_scope is not None
        ids = await by_text(svc, other_kind)
        forgotten = await svc.forget(other_kind, entries=[ids["A"]])
        taken = await svc.remember(forgotten, entries=[entry("A2", "lesson", slug="retry")])
        assert taken is not None
        with pytest.raises(AlreadyExists):
            await svc.reactivate(taken, entries=[ids["A"]])  # its slug is now held by a live entry
        # Two live entries may swap slugs in one write: uniqueness is checked on the result of the write.
        both = await svc.remember(taken, entries=[entry("X", "lesson", slug="x"), entry("Y", "lesson", slug="y")])
        assert both is not None
        ids = await by_text(svc, both)
        swapped = await svc.remember(
            both,
            entries=[entry("X", "lesson", slug="y", entry=ids["X"]), entry("Y", "lesson", slug="x", entry=ids["Y"])],
        )
        assert swapped is not None and swapped.revision == both.revision + 1
        assert (await svc.verify()).ok

    async def test_slug_uniqueness_holds_between_concurrent_writers(self, svc: MemoryService, store_url: str) -> None:
        if not svc.backend.capabilities.concurrent_processes:
            pytest.skip("backend lacks capability: concurrent_processes")
        await svc.remember(None, scope=PROJECT, entries=[entry("seed")])
        results: list[str] = []
        start = threading.Barrier(4)

        def writer(i: int) -> None:
            async def go() -> None:
                async with self.service(store_url, embedding=None) as mine:
                    start.wait()
                    try:
                        await mine.remember(None, scope=PROJECT, entries=[entry(f"claim {i}", "lesson", slug="owner")])
                        results.append("ok")
                    except AlreadyExists:
                        results.append("taken")

            asyncio_run(go())

        threads = [threading.Thread(target=writer, args=(i,)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sorted(results) == ["ok", "taken", "taken", "taken"]
        live = await svc.list(scopes=[PROJECT], kinds=["lesson"])
        assert [r.slug for r in live] == ["owner"]

    async def test_flags_are_independent_and_each_change_is_a_version_with_reason_flag(
        self, svc: MemoryService
    ) -> None:
        rev = await svc.remember(None, scope=PROJECT, entries=[entry("flag me")])
        assert rev is not None
        eid = rev.changes[0].entry_id
        r2 = await svc.flag(rev, eid, important=True)
        r3 = await svc.flag(r2, eid, mandatory=True)
        r4 = await svc.flag(r3, eid, important=False)
        assert [c.reason for r in (r2, r3, r4) for c in r.changes] == ["flag", "flag", "flag"]
        assert await svc.flag(r4, eid, important=False) == r4  # no change, no version
        current = await svc.get(eid)
        assert (current.content.important, current.content.mandatory, current.version) == (False, True, 4)
        # A revision through remember that only changes a flag is recorded as a flag too.
        r5 = await svc.remember(r4, entries=[entry("flag me", entry=eid, important=True, mandatory=True)])
        assert r5 is not None and r5.changes[0].reason == "flag"
        with pytest.raises(InvalidInput):
            await svc.flag(r5, eid)
        with pytest.raises(InvalidInput):
            await svc.flag(r5, eid, important="yes")  # type: ignore[arg-type]

    async def test_xema_identity_resolves_scope_kind_slug_to_an_entry(self, svc: MemoryService) -> None:
        rev = await svc.remember(
            None,
            scope=ORG,
            entries=[entry("retry with backoff", "LESSON", slug="retry"), entry("x", "PATTERN", slug="retry")],
        )
        assert rev is not None
        found = await svc.lookup(ORG, kind="LESSON", slug="retry")
        assert found.text == "retry with backoff" and found.scope == ORG and found.state == "active"
        assert (await svc.lookup(rev.memory_id, kind="PATTERN", slug="retry")).text == "x"
        assert (await svc.lookup(ORG, kind="lesson", slug="retry")).entry_id == found.entry_id  # one kind
        with pytest.raises(AlreadyExists):  # `lesson` and `LESSON` are one kind: one live slug "retry"
            await svc.remember(rev, entries=[entry("another retry", "lesson", slug="retry")])
        with pytest.raises(NotFound):
            await svc.lookup(ORG, kind="LESSON", slug="nope")
        with pytest.raises(NotFound):
            await svc.lookup(USER, kind="LESSON", slug="retry")
        with pytest.raises(InvalidInput):
            await svc.lookup(ORG, kind="LESSON", slug="Not A Slug")
        gone = await svc.forget(rev, entries=[found.entry_id])
        with pytest.raises(NotFound):
            await svc.lookup(ORG, kind="LESSON", slug="retry")
        assert (await svc.lookup(gone, kind="LESSON", slug="retry", include_inactive=True)).state == "inactive"

    # ---------------------------------------------------------------- 3. catalogues
    async def test_catalogues_are_live_filtered_and_category_first_newest_first(self, store_url: str) -> None:
        async with self.ticking(store_url) as svc:
            rev = await svc.remember(None, scope=PROJECT, entries=[entry("old normal", tags=["ops"])])
            for item in (
                entry("important one", "decision", important=True),
                entry("mandatory one", "constraint", mandatory=True, tags=["ops"]),
                entry("both flags", "constraint", mandatory=True, important=True),
                entry("new normal"),
                entry("forgotten", important=True),
            ):
                rev = await svc.remember(rev, entries=[item])
            assert rev is not None
            ids = await by_text(svc, rev)
            rev = await svc.forget(rev, entries=[ids["forgotten"]])
            listed = await svc.list(scopes=[PROJECT])
            assert [r.text for r in listed] == [
                "both flags",
                "mandatory one",
                "important one",
                "new normal",
                "old normal",
            ]
            assert [r.text for r in await svc.important(scopes=[PROJECT])] == ["both flags", "important one"]
            assert [r.text for r in await svc.mandatory(scopes=[PROJECT])] == ["both flags", "mandatory one"]
            assert [r.text for r in await svc.list(scopes=[PROJECT], tags=["ops"])] == ["mandatory one", "old normal"]
            assert [r.text for r in await svc.list(scopes=[PROJECT], kinds=["constraint"], important=False)] == [
                "mandatory one"
            ]
            assert [r.text for r in await svc.list(scopes=[PROJECT], limit=2)] == ["both flags", "mandatory one"]
            with_inactive = await svc.list(scopes=[PROJECT], include_inactive=True)
            assert {r.text: r.state for r in with_inactive}["forgotten"] == "inactive"
            with pytest.raises(InvalidInput):
                await svc.list(scopes=[PROJECT], limit=0)

    async def test_mandatory_returns_complete_content_unscored(self, svc: MemoryService) -> None:
        long_text = "\n".join(f"line {i}: never edit generated files under site/" for i in range(120))
        rev = await svc.remember(
            None, scope=PROJECT, entries=[entry(long_text, "constraint", mandatory=True), entry("not mandatory")]
        )
        assert rev is not None
        (record,) = await svc.mandatory(scopes=[PROJECT])
        assert record.text == long_text and "score" not in record.to_dict()
        assert record.to_dict()["text"] == long_text

    # ---------------------------------------------------------------- 4. search, the Graphit way, and precedence
    async def _three_tiers(self, svc: MemoryService) -> dict[str, EntryId]:
        """Every tier at once; one write per entry, so each has its own ``updated_at`` (t1 … t9)."""
        plan = [
            (ORG, entry("deploy deploy deploy deploy", "fact")),  # t1: the best text match, but normal
            (ORG, entry("deploy checklist", "convention", slug="deploy-checklist", mandatory=True)),  # t2
            (ORG, entry("deploy window is monday", "decision", slug="deploy-window", important=True)),  # t3
            (PROJECT, entry("deploy with uv", "convention", slug="deploy-tool")),  # t4
            (PROJECT, entry("deploy window is friday", "decision", slug="deploy-window")),  # t5 shadows t3
            (PROJECT, entry("never deploy on friday", "constraint", mandatory=True, important=True)),  # t6
            (USER, entry("I deploy with make", "convention", slug="deploy-tool", important=True)),  # t7 shadows t4
            (USER, entry("my own deploy checklist", "convention", slug="deploy-checklist")),  # t8 shadows t2
            (OTHER_ORG, entry("deploy window is sunday", "decision", slug="deploy-window", important=True)),  # t9
        ]
        ids: dict[str, EntryId] = {}
        for scope, item in plan:
            rev = await svc.remember(None, scope=scope, entries=[item])
            assert rev is not None
            ids[item.text] = rev.changes[0].entry_id
        return ids

    async def test_priority_order_and_precedence_exactly_as_the_seeds_state(self, store_url: str) -> None:
        async with self.ticking(store_url) as svc:
            ids = await self._three_tiers(svc)
            tiers = [ORG, PROJECT, USER, OTHER_ORG]
            result = await svc.search("deploy", scopes=tiers, mode="fts", order="priority", limit=20)
            # Category first (mandatory → important → normal), then updated_at descending; score never outranks.
            assert [h.text for h in result.hits] == [
                "never deploy on friday",  # mandatory (t6)
                "deploy window is sunday",  # important (t9)
                "I deploy with make",  # important (t7)
                "my own deploy checklist",  # normal (t8)
                "deploy window is friday",  # normal (t5)
                "deploy deploy deploy deploy",  # normal (t1), the best score
            ]
            # Most-specific-wins: user over project over org of the same kind and slug; reported, not dropped.
            assert {(s.entry_id, s.shadowed_by) for s in result.shadowed} == {
                (ids["deploy window is monday"], ids["deploy window is friday"]),
                (ids["deploy with uv"], ids["I deploy with make"]),
                (ids["deploy checklist"], ids["my own deploy checklist"]),
            }
            assert sorted((s.scope, s.shadowed_by_scope) for s in result.shadowed) == [
                (ORG, PROJECT),
                (ORG, USER),
                (PROJECT, USER),
            ]
            # top_k counts distinct memories after collapse and ordering: the best-scoring normal entry cannot
            # push out a mandatory or important one.
            top = await svc.search("deploy", scopes=tiers, mode="fts", order="priority", limit=3)
            assert [h.text for h in top.hits] == [
                "never deploy on friday",
                "deploy window is sunday",
                "I deploy with make",
            ]
            relevance = await svc.search("deploy", scopes=tiers, mode="fts", limit=1)
            assert [h.text for h in relevance.hits] == ["deploy deploy deploy deploy"]
            no_mandatory = await svc.search(
                "deploy", scopes=tiers, mode="fts", order="priority", exclude_mandatory=True
            )
            assert "never deploy on friday" not in [h.text for h in no_mandatory.hits]
            assert [h.text for h in no_mandatory.hits][:2] == ["deploy window is sunday", "I deploy with make"]
            # Without precedence every tier's entry comes back.
            everything = await svc.search("deploy", scopes=tiers, mode="fts", precedence=False, limit=20)
            assert len(everything.hits) == 9 and everything.shadowed == ()
            # Two tiers: only the project shadows its own org, never another org.
            two = await svc.search("window", scopes=[ORG, PROJECT, OTHER_ORG], mode="fts", limit=20)
            assert sorted(h.text for h in two.hits) == ["deploy window is friday", "deploy window is sunday"]
            # The catalogue keeps shadowed records and says by whom.
            listed = {r.text: r for r in await svc.list(scopes=tiers)}
            assert len(listed) == 9
            assert listed["deploy window is monday"].shadowed_by == ids["deploy window is friday"]
            assert listed["deploy window is monday"].shadowed_by_scope == PROJECT
            assert listed["deploy with uv"].shadowed_by_scope == USER
            assert listed["deploy checklist"].shadowed_by == ids["my own deploy checklist"]
            assert listed["deploy window is sunday"].shadowed_by is None
            assert [r.text for r in await svc.mandatory(scopes=tiers)] == ["never deploy on friday", "deploy checklist"]

    async def test_same_tier_scopes_never_shadow_each_other(self, svc: MemoryService) -> None:
        for scope in (PROJECT, "memstone://orgs/acme/projects/api", ORG, OTHER_ORG):
            await svc.remember(None, scope=scope, entries=[entry(f"tooling for {scope}", "convention", slug="tool")])
        both = await svc.search("tooling", scopes=[PROJECT, "memstone://orgs/acme/projects/api"], mode="fts")
        assert len(both.hits) == 2 and both.shadowed == ()
        orgs = await svc.search("tooling", scopes=[ORG, OTHER_ORG], mode="fts")
        assert len(orgs.hits) == 2 and orgs.shadowed == ()

    async def test_include_superseded_collapses_archived_versions_onto_their_entry(self, store_url: str) -> None:
        async with self.ticking(store_url) as svc:
            rev = await svc.remember(
                None, scope=PROJECT, entries=[entry("we deploy with fabric"), entry("builds use make")]
            )
            assert rev is not None
            ids = await by_text(svc, rev)
            rev = await svc.remember(rev, entries=[entry("we deploy with uv", entry=ids["we deploy with fabric"])])
            assert rev is not None
            rev = await svc.remember(
                rev, entries=[entry("we deploy with uv, always", entry=ids["we deploy with fabric"])]
            )
            assert rev is not None
            rev = await svc.remember(
                rev, entries=[entry("builds use just", entry=ids["builds use make"], important=True)]
            )
            assert rev is not None
            # Only the current version is searched by default.
            assert len(await svc.search("fabric", scopes=[PROJECT], mode="fts")) == 0
            # Only an archived version matched: one hit, superseded, carrying the current version.
            (hit,) = await svc.search("fabric", scopes=[PROJECT], mode="fts", include_superseded=True)
            current = await svc.get(hit.entry_id)
            assert hit.superseded and hit.text == "we deploy with fabric"
            assert hit.current_entry_version_id == current.entry_version_id != hit.entry_version_id
            (v,) = await svc.expand([hit])  # its anchor is exact: the Revision that wrote that version
            assert v.text == "we deploy with fabric"
            # The current version matched as well: the older hits are dropped.
            hits = await svc.search("deploy uv", scopes=[PROJECT], mode="fts", include_superseded=True)
            assert [(h.text, h.superseded) for h in hits] == [("we deploy with uv, always", False)]
            # Classification (and filters) use the current entry: make → just is important now.
            (make,) = await svc.search("make", scopes=[PROJECT], mode="fts", include_superseded=True, important=True)
            assert make.superseded and make.important and make.text == "builds use make"
            ordered = await svc.search(
                "deploy make", scopes=[PROJECT], mode="fts", include_superseded=True, order="priority", limit=1
            )
            assert [h.text for h in ordered] == ["builds use make"]  # important outranks normal, superseded or not
            # A forgotten entry's archive never matches (search returns only entries live at the head).
            rev = await svc.forget(rev, entries=[ids["we deploy with fabric"]])
            assert len(await svc.search("fabric", scopes=[PROJECT], mode="fts", include_superseded=True)) == 0
            assert (await svc.verify()).ok

    # ---------------------------------------------------------------- 5. the initial recall protocol
    async def test_recall_is_one_call_mandatory_in_full_then_context_within_a_budget(self, store_url: str) -> None:
        async with self.ticking(store_url) as svc:
            await self._three_tiers(svc)
            tiers = [ORG, PROJECT, USER]
            full = await svc.recall("deploy", scopes=tiers, mode="fts")
            assert [r.text for r in full.mandatory] == ["never deploy on friday"]
            assert {o.entry_id for o in full.omitted if o.reason == "shadowed"}  # the org checklist, reported
            assert "never deploy on friday" not in [h.text for h in full.contextual]  # exclude_mandatory
            assert [h.text for h in full.contextual][:1] == ["I deploy with make"]  # priority order
            assert full.budget is None and full.note.startswith("no budget")
            again = await svc.recall("deploy", scopes=tiers, mode="fts")
            assert again.to_dict() == full.to_dict()  # deterministic
            tight = await svc.recall("deploy", scopes=tiers, mode="fts", budget_chars=60)
            assert tight.used <= 60 and tight.unit == "chars"
            assert [r.text for r in tight.mandatory] == ["never deploy on friday"]
            left = [o for o in tight.omitted if o.reason == "budget"]
            assert left and all(o.section == "contextual" for o in left)
            assert "left out" in tight.note and left[0].entry_id in tight.note
            starved = await svc.recall("deploy", scopes=tiers, mode="fts", budget_tokens=1)
            assert starved.mandatory == () and starved.contextual == ()
            assert any(o.section == "mandatory" and o.reason == "budget" for o in starved.omitted)
            no_context = await svc.recall(scopes=tiers)
            assert [r.text for r in no_context.mandatory] == ["never deploy on friday"] and no_context.contextual == ()
            with pytest.raises(InvalidInput):
                await svc.recall("x", scopes=tiers, budget_chars=5, budget_tokens=5)
            with pytest.raises(InvalidInput):
                await svc.recall("x", scopes=tiers, budget_chars=-1)

    # ---------------------------------------------------------------- 6. history you can use
    async def test_chain_walk_marks_current_superseded_and_deleted(self, svc: MemoryService) -> None:
        rev = await svc.remember(None, entries=[entry("one")], author="alice")
        assert rev is not None
        eid = rev.changes[0].entry_id
        rev2 = await svc.remember(rev, entries=[entry("two", entry=eid)], author="bob")
        assert rev2 is not None
        chain = await svc.history(eid)
        assert [(h.status, h.version.created_in_revision, h.version.provenance.author) for h in chain] == [
            ("superseded", 1, "alice"),
            ("current", 2, "bob"),
        ]
        await svc.forget(rev2, entries=[eid])
        chain = await svc.history(eid)
        assert [h.status for h in chain] == ["superseded", "deleted"] and chain[-1].next_version_id is None
        assert all(len(h.version.entry_content_hash) == 64 for h in chain)

    async def test_diff_revert_and_blame(self, svc: MemoryService) -> None:
        r1 = await svc.remember(
            None, scope=PROJECT, entries=[entry("line a\nline b", "fact", title="T", tags=["x"])], author="alice"
        )
        assert r1 is not None
        eid = r1.changes[0].entry_id
        r2 = await svc.remember(
            r1, entries=[entry("line a\nline c", "fact", title="T", tags=["x", "y"], entry=eid)], author="bob"
        )
        assert r2 is not None
        r3 = await svc.flag(r2, eid, mandatory=True)
        d = await svc.diff(f"{eid}@1", f"{eid}@3")
        assert {c.field for c in d.changes} == {"text", "tags", "mandatory"}
        tags = next(c for c in d.changes if c.field == "tags")
        assert tags.added == ("y",) and tags.removed == ()
        assert "-line b" in d.text_diff and "+line c" in d.text_diff
        assert (await svc.diff(eid)).to_dict()["changes"] == [{"field": "mandatory", "old": False, "new": True}]
        assert (await svc.diff(f"{eid}@1")).identical  # the first version against itself
        backwards = {c.field: (c.old, c.new) for c in (await svc.diff(f"{eid}@3", f"{eid}@1")).changes}
        assert backwards["text"] == ("line a\nline c", "line a\nline b") and backwards["mandatory"] == (True, False)
        other = await svc.remember(r3, entries=[entry("unrelated")])
        assert other is not None
        with pytest.raises(InvalidInput, match="different entries"):
            await svc.diff(eid, other.changes[0].entry_id)
        with pytest.raises(NotFound):
            await svc.diff(f"{eid}@9")
        blame = {b.field: b for b in await svc.blame(eid)}
        assert (blame["text"].version, blame["text"].author) == (2, "bob")
        assert (blame["title"].version, blame["title"].author) == (1, "alice")
        assert blame["mandatory"].version == 3 and blame["mandatory"].value is True
        assert {b.field: b.version for b in await svc.blame(f"{eid}@1")}["text"] == 1
        r4 = await svc.revert(other, eid, 1)
        now = await svc.get(eid)
        assert now.version == 4 and now.text == "line a\nline b" and now.content.tags == ("x",)
        assert now.entry_content_hash == (await svc.version(f"{eid}@1")).entry_content_hash  # same content exactly
        assert r4.changes[0].reason == "revert" and len(await svc.history(eid)) == 4  # history only grows
        assert await svc.revert(r4, eid, 4) == r4  # reverting to the current content is a no-op

    async def test_point_in_time_reads_of_a_memory_at_any_revision(self, svc: MemoryService) -> None:
        r1 = await svc.remember(None, scope=PROJECT, entries=[entry("alpha"), entry("beta")])
        assert r1 is not None
        ids = await by_text(svc, r1)
        r2 = await svc.remember(r1, entries=[entry("alpha 2", entry=ids["alpha"])])
        assert r2 is not None
        r3 = await svc.forget(r2, entries=[ids["beta"]])
        at = {
            n: sorted(r.text for r in await svc.list(memories=[ArtifactRef(memory_id=r1.memory_id, revision=n)]))
            for n in (1, 2, 3)
        }
        assert at == {1: ["alpha", "beta"], 2: ["alpha 2", "beta"], 3: ["alpha 2"]}
        then = await svc.list(memories=[r1], include_inactive=True)
        assert all(r.memory_ref == r1.ref for r in then)
        assert (await svc.get(ids["alpha"], memory=r1)).text == "alpha"
        assert sorted(v.text for v in await svc.entries(r3, include_inactive=True)) == ["alpha 2", "beta"]

    # ---------------------------------------------------------------- 7. relations and aliases
    async def test_relations_are_versioned_content_and_recall_surfaces_cross_links(self, svc: MemoryService) -> None:
        rev = await svc.remember(
            None,
            scope=PROJECT,
            entries=[
                entry("retry only idempotent calls", "lesson", slug="retry", mandatory=True),
                entry("wrap calls in a retry helper", "pattern", slug="retry-helper"),
                entry("the user said: never retry payments", "correction", slug="no-payment-retry"),
            ],
        )
        assert rev is not None
        ids = await by_text(svc, rev)
        lesson, pattern, correction = (
            ids["retry only idempotent calls"],
            ids["wrap calls in a retry helper"],
            ids["the user said: never retry payments"],
        )
        r2 = await svc.relate(rev, pattern, lesson, "relates-to")
        r3 = await svc.relate(r2, correction, lesson, "clarifies")
        assert [c.reason for c in r3.changes] == ["relate"]
        assert (await svc.get(pattern)).version == 2  # a relation is content: a new version
        assert await svc.relate(r3, correction, lesson, "clarifies") == r3  # already there: no-op
        with pytest.raises(InvalidInput):
            await svc.relate(r3, lesson, lesson)
        with pytest.raises(InvalidInput):
            await svc.relate(r3, lesson, pattern, "Not Kebab")
        with pytest.raises(NotFound):
            await svc.relate(r3, lesson, "ent_00000000000000000000000000")
        bundle = await svc.recall(scopes=[PROJECT])
        assert [r.entry_id for r in bundle.mandatory] == [lesson]
        assert {(x.direction, x.kind, x.source, x.target) for x in bundle.links} == {
            ("incoming", "relates-to", pattern, lesson),
            ("incoming", "clarifies", correction, lesson),
        }
        hits = await svc.recall("helper", scopes=[PROJECT], mode="fts")
        assert ("outgoing", "relates-to", pattern, lesson) in {
            (x.direction, x.kind, x.source, x.target) for x in hits.links
        }
        r4 = await svc.unrelate(r3, pattern, lesson, "relates-to")
        assert (await svc.get(pattern)).content.relations == ()
        assert r4.revision == r3.revision + 1

    async def test_supersedes_can_deactivate_its_target_in_the_same_revision(self, svc: MemoryService) -> None:
        rev = await svc.remember(None, scope=PROJECT, entries=[entry("deploy with fabric"), entry("deploy with uv")])
        assert rev is not None
        ids = await by_text(svc, rev)
        r2 = await svc.relate(
            rev, ids["deploy with uv"], ids["deploy with fabric"], "supersedes", deactivate_target=True
        )
        assert r2.revision == rev.revision + 1
        assert sorted((c.op, c.reason) for c in r2.changes) == [("deactivate", "superseded"), ("revise", "relate")]
        assert [h.text for h in await svc.search("deploy", scopes=[PROJECT], mode="fts")] == ["deploy with uv"]
        with pytest.raises(InvalidInput, match="supersedes"):
            await svc.relate(r2, ids["deploy with uv"], ids["deploy with fabric"], "clarifies", deactivate_target=True)
        elsewhere = await svc.remember(None, scope=USER, entries=[entry("mine")])
        assert elsewhere is not None
        with pytest.raises(InvalidInput, match="not"):
            await svc.relate(
                r2, ids["deploy with uv"], elsewhere.changes[0].entry_id, "supersedes", deactivate_target=True
            )
        cross = await svc.relate(r2, ids["deploy with uv"], elsewhere.changes[0].entry_id, "relates-to")
        assert cross.revision == r2.revision + 1  # relations may cross Memories (Xema: scoped to the org)

    async def test_a_renamed_slug_leaves_an_alias_that_redirects_reads(self, svc: MemoryService) -> None:
        rev = await svc.remember(None, scope=PROJECT, entries=[entry("retry with backoff", "lesson", slug="retry")])
        assert rev is not None
        eid = rev.changes[0].entry_id
        r2 = await svc.rename(rev, eid, "retry-backoff")
        assert r2.changes[0].reason == "rename"
        assert (await svc.lookup(PROJECT, kind="lesson", slug="retry")).entry_id == eid
        assert (await svc.lookup(PROJECT, kind="lesson", slug="retry-backoff")).slug == "retry-backoff"
        # A live entry that takes the old slug wins over the alias.
        r3 = await svc.remember(r2, entries=[entry("a new retry lesson", "lesson", slug="retry")])
        assert r3 is not None
        assert (await svc.lookup(PROJECT, kind="lesson", slug="retry")).text == "a new retry lesson"
        r4 = await svc.rename(r3, eid, None)
        assert (await svc.get(eid)).content.slug is None
        assert (await svc.lookup(PROJECT, kind="lesson", slug="retry-backoff")).entry_id == eid
        with pytest.raises(AlreadyExists):
            await svc.rename(r4, eid, "retry")

    # ---------------------------------------------------------------- 8. Markdown both ways
    async def test_source_renders_the_graphit_presentation(self, svc: MemoryService) -> None:
        rev = await svc.remember(
            None,
            scope=PROJECT,
            entries=[
                entry(
                    "## What\nUse table-driven cases.",
                    "convention",
                    title="Prefer table-driven Go tests",
                    tags=["go", "testing"],
                    important=True,
                    mandatory=True,
                )
            ],
            author="unit-id",
        )
        assert rev is not None
        md = await svc.source(rev.changes[0].entry_id)
        head, _, body = md[4:].partition("\n---\n")
        keys = [line.split(":")[0] for line in head.splitlines()]
        assert keys[:10] == [
            "id",
            "title",
            "type",
            "tags",
            "created_at",
            "updated_at",
            "important",
            "mandatory",
            "revision",
            "updated_by",
        ]
        assert 'title: "Prefer table-driven Go tests"' in head and 'type: "convention"' in head
        assert 'tags: ["go", "testing"]' in head and 'updated_by: "unit-id"' in head and "revision: 1" in head
        assert body == "\n# Prefer table-driven Go tests\n\n## What\nUse table-driven cases.\n"

    async def test_export_writes_the_xema_layout_with_newest_first_ledgers(
        self, svc: MemoryService, tmp_path: Path
    ) -> None:
        rev = await svc.remember(
            None, scope=PROJECT, entries=[entry("v1", "LESSON", slug="retry"), entry("no slug here")]
        )
        assert rev is not None
        ids = await by_text(svc, rev)
        await svc.remember(rev, entries=[entry("v2", "LESSON", slug="retry", entry=ids["v1"])])
        report = await svc.export_markdown(tmp_path / "out")
        assert (report.memories, report.entries, report.versions) == (1, 2, 3)
        ledger = tmp_path / "out/orgs/acme/projects/web/memories/project/lesson/retry.md"
        text = ledger.read_text("utf-8")
        assert text.index("· revise · v2") < text.index("· add · v1")  # newest first
        assert text.count("<!-- memstone:event ") == 2 and '"surface":' in text
        generated = sorted((tmp_path / "out/orgs/acme/projects/web/memories/project/fact").iterdir())
        assert [p.name for p in generated] == [f"no-slug-here-{ids['no slug here'][-8:].lower()}.md"]
        assert (await svc.get(ids["no slug here"])).content.slug is None  # the generated slug is only a file name
        again = await svc.export_markdown(tmp_path / "out")  # an earlier export is replaced in place
        assert again.files == report.files
        (tmp_path / "busy").mkdir()
        (tmp_path / "busy" / "notes.txt").write_text("mine")
        with pytest.raises(InvalidInput, match="not empty"):
            await svc.export_markdown(tmp_path / "busy")

    @pytest.mark.slow
    async def test_export_import_export_is_byte_identical_on_a_large_store(
        self, store_url: str, empty_store_url: str, tmp_path: Path
    ) -> None:
        clock = TickingClock()
        async with self.ticking(store_url, clock=clock) as svc:
            summary = await build_large_store(svc)
            assert summary["entries"] >= 1000
            first = await svc.export_markdown(tmp_path / "first")
            hashes = await content_hashes(svc)
            # Import into an empty store: the store of `svc` stays open, so a :memory: URL is a new store.
            async with self.ticking(empty_store_url, clock=TickingClock()) as other:
                assert await other.memories() == ()
                report = await other.import_markdown(tmp_path / "first")
                assert report.revisions_written == first.revisions and report.revisions_present == 0
                assert await content_hashes(other) == hashes  # every entry and Revision hash preserved
                second = await other.export_markdown(tmp_path / "second")
                assert tree(tmp_path / "first") == tree(tmp_path / "second")  # byte-identical
                assert second.to_dict() | {"directory": ""} == first.to_dict() | {"directory": ""}
                assert (await other.verify()).ok
                again = await other.import_markdown(tmp_path / "first")  # idempotent
                assert (again.revisions_written, again.revisions_present) == (0, first.revisions)
                assert await content_hashes(other) == hashes
                # The imported store works like the original: aliases, precedence, Chinese search.
                renamed = await other.lookup(PROJECT, kind=KINDS[3 % len(KINDS)], slug="topic-3")
                assert renamed.slug == "topic-3-renamed"
                hits = await other.search("数据库备份", scopes=[ORG, PROJECT, USER], mode="fts")
                assert hits.hits and all("数据库" in h.text for h in hits.hits)

    async def test_import_refuses_a_tampered_file_by_name_and_writes_nothing(
        self, svc: MemoryService, empty_store_url: str, tmp_path: Path
    ) -> None:
        rev = await svc.remember(
            None, scope=PROJECT, entries=[entry("retry with backoff", "lesson", slug="retry"), entry("a second entry")]
        )
        assert rev is not None
        ids = await by_text(svc, rev)
        await svc.remember(
            rev, entries=[entry("retry with jitter", "lesson", slug="retry", entry=ids["retry with backoff"])]
        )
        await svc.export_markdown(tmp_path / "clean")
        rel = "orgs/acme/projects/web/memories/project/lesson/retry.md"
        original = (tmp_path / "clean" / rel).read_text("utf-8")
        index = json.loads((tmp_path / "clean" / INDEX_NAME).read_text("utf-8"))

        second = next(p for p in index["files"] if p["path"].startswith("orgs/") and p["path"] != rel)["path"]

        def variant(name: str, text: str | None, *, fix_index: bool, drop: str | None = None) -> Path:
            root = tmp_path / name
            for path, data in tree(tmp_path / "clean").items():
                if path != drop:
                    (root / path).parent.mkdir(parents=True, exist_ok=True)
                    (root / path).write_bytes(data)
            if text is not None:
                (root / rel).write_text(text, "utf-8")
            if fix_index:
                new = json.loads(json.dumps(index))
                new["files"] = [item for item in new["files"] if item["path"] != drop]
                for item in new["files"]:
                    if item["path"] == rel and text is not None:
                        item["sha256"] = hashlib.sha256(text.encode("utf-8")).hexdigest()
                (root / INDEX_NAME).write_text(json.dumps(new), "utf-8")
            return root

        cases = [
            (variant("edited", original.replace("with jitter", "with no delay"), fix_index=False), "SHA-256"),
            (variant("rehashed", original.replace("with jitter", "with glitch"), fix_index=True), "content hash"),
            (variant("frontmatter", original.replace("mandatory: false", "mandatory: true"), fix_index=True), "match"),
            (variant("dropped", None, fix_index=True, drop=second), "reproduce its hash"),
        ]
        async with self.service(empty_store_url, embedding=self.embedding) as other:
            for root, why in cases:
                with pytest.raises(IntegrityError) as info:
                    await other.import_markdown(root)
                assert str(root / rel) in str(info.value) or rel.split("/")[-1] in str(info.value), info.value
                assert why.lower() in str(info.value).lower(), info.value
                assert await other.memories() == ()  # nothing was written
            report = await other.import_markdown(tmp_path / "clean")
            assert report.revisions_written == 2

    async def test_import_into_a_store_with_a_different_history_is_a_conflict(
        self, svc: MemoryService, empty_stores: Callable[[str], str], tmp_path: Path
    ) -> None:
        empty_store_url = empty_stores("other")
        rev = await svc.remember(None, scope=PROJECT, entries=[entry("one")])
        assert rev is not None
        await svc.export_markdown(tmp_path / "one")
        await svc.remember(rev, entries=[entry("two")])
        await svc.export_markdown(tmp_path / "two")
        async with self.service(empty_store_url, embedding=self.embedding) as other:
            # An earlier state of the same Memory is completed by the later export.
            assert (await other.import_markdown(tmp_path / "one")).revisions_written == 1
            report = await other.import_markdown(tmp_path / "two")
            assert (report.revisions_present, report.revisions_written) == (1, 1)
            # A later write here makes the histories diverge: the next import is refused, nothing is written.
            head = await other.head(rev.memory_id)
            await other.remember(head, entries=[entry("three, only here")])
            await svc.remember(await svc.head(rev.memory_id), entries=[entry("three, only there")])
            await svc.export_markdown(tmp_path / "three")
            before = await other.head(rev.memory_id)
            with pytest.raises(Conflict, match="differs from the export at revision 3"):
                await other.import_markdown(tmp_path / "three")
            assert await other.head(rev.memory_id) == before
        async with self.service(empty_stores("third"), embedding=self.embedding) as third:
            await third.remember(None, scope=PROJECT, entries=[entry("someone else's project memory")])
            with pytest.raises(Conflict, match="bound to"):
                await third.import_markdown(tmp_path / "one")

    # ---------------------------------------------------------------- 9. closed-kind mode
    async def test_a_closed_kind_store_refuses_other_kinds_by_name(self, empty_store_url: str, tmp_path: Path) -> None:
        xema = ("LESSON", "PATTERN", "CORRECTION", "PREFERENCE")
        async with self.service(empty_store_url, embedding=None, closed_kinds=xema) as svc:
            assert await svc.kinds() == frozenset(k.lower() for k in xema)  # kinds are case-normalized
            rev = await svc.remember(None, scope=ORG, entries=[entry("learned", "LESSON")])
            assert rev is not None
            rev = await svc.remember(rev, entries=[entry("in any case", "Lesson")])
            assert rev is not None
            assert {r.kind for r in await svc.list(scopes=[ORG], kinds=["LESSON"])} == {"lesson"}
            with pytest.raises(InvalidInput, match="'fact' is not allowed") as info:
                await svc.remember(rev, entries=[entry("ok", "PATTERN"), entry("no", "fact")])
            assert "lesson" in str(info.value)
            assert await svc.head(rev.memory_id) == rev  # refused before anything was written
            with pytest.raises(InvalidInput, match="not allowed"):
                await svc.remember(None, scope=USER, entries=[entry("no", "decision")])
            assert len(await svc.memories()) == 1
            if empty_store_url.endswith(":memory:"):
                return  # an in-memory store does not outlive its service
        # The set was persisted at creation: reopening without closed_kinds still refuses, and a service that
        # asks for another set is refused by name.
        async with self.service(empty_store_url, embedding=None) as again:
            assert await again.kinds() == frozenset(k.lower() for k in xema)
            head = await again.resolve(ORG)
            with pytest.raises(InvalidInput, match="not allowed"):
                await again.remember(head, entries=[entry("no", "fact")])
        async with self.service(empty_store_url, embedding=None, closed_kinds=["LESSON"]) as narrower:
            with pytest.raises(InvalidInput, match="created with"):
                await narrower.remember(None, scope=USER, entries=[entry("x", "LESSON")])
        # An export holding other kinds is refused by name, before any write.
        async with self.service(f"sqlite:///{tmp_path / 'open.db'}", embedding=None) as open_store:
            await open_store.remember(None, scope=ORG, entries=[entry("a fact", "fact")])
            await open_store.export_markdown(tmp_path / "facts")
            with pytest.raises(InvalidInput, match="created with"):
                async with self.service(
                    f"sqlite:///{tmp_path / 'open.db'}", embedding=None, closed_kinds=xema
                ) as closed_late:
                    await closed_late.remember(None, scope=USER, entries=[entry("x", "LESSON")])
        async with self.service(empty_store_url, embedding=None) as again:
            before = await again.memories()
            with pytest.raises(InvalidInput, match="fact"):
                await again.import_markdown(tmp_path / "facts")
            assert await again.memories() == before

    # ---------------------------------------------------------------- 10. citations
    async def test_cite_and_verify_citation_follow_the_handoff_section(self, svc: MemoryService) -> None:
        r1 = await svc.remember(None, scope=PROJECT, entries=[entry("the validation command is make check")])
        assert r1 is not None
        (hit,) = await svc.search("validation", scopes=[PROJECT], mode="fts")
        citation = svc.cite(hit)
        # ArtifactRef(memory_id, revision) + entry_id + entry_version_id, and the hash it committed to.
        assert citation.memory_ref == r1.ref and citation.entry_id == hit.entry_id
        assert (
            citation.entry_version_id == hit.entry_version_id and citation.entry_content_hash == hit.entry_content_hash
        )
        r2 = await svc.remember(r1, entries=[entry("the validation command is scripts/test", entry=hit.entry_id)])
        assert r2 is not None
        # The old citation still names exactly the version the Handoff used.
        assert (await svc.verify_citation(citation)).text == "the validation command is make check"
        (record,) = await svc.list(scopes=[PROJECT])
        assert (await svc.verify_citation(svc.cite_record(record))).text == "the validation command is scripts/test"
        (old,) = await svc.search("make", scopes=[PROJECT], mode="fts", include_superseded=True)
        assert (await svc.verify_citation(svc.cite(old))).text == "the validation command is make check"
        for bad in (
            Citation(memory_ref=r2.ref, entry_id=hit.entry_id, entry_version_id=hit.entry_version_id),
            Citation(
                memory_ref=r1.ref,
                entry_id=hit.entry_id,
                entry_version_id=hit.entry_version_id,
                entry_content_hash="f" * 64,
            ),
        ):
            with pytest.raises(InvalidCitationError):
                await svc.verify_citation(bad)


def asyncio_run(coro: Any) -> None:
    import asyncio

    asyncio.run(coro)


async def content_hashes(svc: MemoryService) -> dict[str, object]:
    """Every Revision hash and every entry version hash of a store, for comparisons across stores."""
    out: dict[str, object] = {}
    for head in await svc.memories():
        revs = await svc.backend.read(RevisionsQuery(memory_id=head.memory_id, first=1, last=head.revision))
        versions = await svc.backend.read(MemoryVersionsQuery(memory_id=head.memory_id))
        assert isinstance(revs, list) and isinstance(versions, list)
        out[head.memory_id] = {
            "revisions": [(r.revision, r.content_hash, r.manifest_root) for r in revs],
            "versions": sorted((v.entry_version_id, v.entry_content_hash) for v in versions),
        }
    out["scopes"] = list(await svc.scopes())
    return out


CHINESE = ("数据库每天凌晨备份一次", "前端使用 React 构建", "部署前必须运行测试", "不要在周五发布")
KINDS = ("fact", "preference", "decision", "constraint", "convention", "correction", "lesson", "pattern")


async def build_large_store(svc: MemoryService) -> dict[str, int]:
    """A store of ≥ 1,000 entries across every tier, with revisions, flags, relations, aliases, inactive
    entries, evidence, cross-Memory artifact references, a late scope binding and Chinese text."""
    note = await svc.record_source("user_note", "用户说：我们总是用 uv 部署。We always deploy with uv.")
    log = await svc.record_source("task_outcome", "CI failed twice on the flaky retry test")
    entries = 0
    heads: dict[str, Revision] = {}
    for s, scope in enumerate((ORG, PROJECT, USER)):
        rev: Revision | None = None
        for batch in range(7):
            items = []
            for j in range(50):
                i = batch * 50 + j
                text = f"{CHINESE[i % 4]}，第 {i} 条" if i % 3 == 0 else f"memory {i} of tier {s}: retry policy note"
                items.append(
                    entry(
                        text,
                        KINDS[i % len(KINDS)] if scope != USER else ("LESSON", "PATTERN")[i % 2],
                        title=f"Topic {i}" if i % 2 else None,
                        tags=["ops", f"t{i % 5}"] if i % 4 == 0 else [],
                        slug=f"topic-{i}" if i % 3 != 2 else None,
                        important=i % 7 == 0,
                        mandatory=i % 50 == 1,
                    )
                )
            rev = await svc.remember(
                rev, scope=scope if rev is None else None, entries=items, sources=[note] if batch == 0 else []
            )
            assert rev is not None
            entries += len(items)
        assert rev is not None
        heads[scope] = rev
    loose = await svc.remember(
        None, entries=[entry(f"unbound note {i}", artifacts=[heads[ORG].ref]) for i in range(20)], sources=[log]
    )
    assert loose is not None
    entries += 20
    await svc.bind("memstone://users/bob", loose)  # bound after its first write
    project = heads[PROJECT]
    current = {v.entry_id: v for v in await svc.entries(project)}
    ordered = sorted(current.values(), key=lambda v: v.entry_id)
    # Revisions, two per entry for some.
    for round_ in range(2):
        project_rev: Revision | None = project
        revised = [
            EntryInput(
                kind=v.kind,
                text=f"{v.text}（修订 {round_}）",
                title=v.title,
                tags=v.content.tags,
                slug=v.content.slug,
                important=v.content.important,
                mandatory=v.content.mandatory,
                entry=v.entry_id,
                reason=f"round {round_}",
            )
            for v in ordered[: 60 - 20 * round_]
        ]
        project_rev = await svc.remember(project_rev, entries=revised)
        assert project_rev is not None
        project = project_rev
        ordered[:60] = [await svc.get(v.entry_id) for v in ordered[:60]]
    # Flags, relations (one supersedes that deactivates), aliases, forget and reactivate.
    for v in ordered[60:75]:
        project = await svc.flag(project, v.entry_id, important=not v.content.important, mandatory=True)
    for a, b in zip(ordered[80:95], ordered[95:110], strict=True):
        project = await svc.relate(project, a.entry_id, b.entry_id, ("relates-to", "clarifies")[len(a.text) % 2])
    project = await svc.relate(
        project, ordered[110].entry_id, ordered[111].entry_id, "supersedes", deactivate_target=True
    )
    project = await svc.relate(project, ordered[112].entry_id, ordered[0].entry_id, "relates-to")
    slugged = [v for v in ordered if v.content.slug == "topic-3"]
    project = await svc.rename(project, slugged[0].entry_id, "topic-3-renamed")
    for v in [v for v in ordered if v.content.slug][5:15]:
        project = await svc.rename(project, v.entry_id, f"{v.content.slug}-v2")
    gone = [v.entry_id for v in ordered[120:160]]
    project = await svc.forget(project, entries=gone, reason="user_requested")
    project = await svc.reactivate(project, entries=gone[:5], reason="user_restored")
    project = await svc.revert(project, ordered[1].entry_id, 1)
    cross = await svc.get(ordered[200].entry_id)
    user_entry = (await svc.entries(heads[USER]))[0]
    await svc.relate(await svc.head(heads[USER].memory_id), user_entry.entry_id, cross.entry_id, "relates-to")
    return {"entries": entries}


__all__ = ["RecordsConformance", "TickingClock", "build_large_store", "content_hashes"]
