"""Sections 1–3 of the record-surface suite: scopes, records (title, tags, slug, flags) and catalogues."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from ..domain.errors import AlreadyExists, InvalidInput, NotFound
from ..domain.scopes import canonical_scope, parse_scope
from ..service import MemoryService
from .record_fixtures import (
    ORG,
    PROJECT,
    USER,
    RecordFixtures,
    asyncio_run,
    by_text,
    entry,
    tree,
)


class ScopeRecordConformance(RecordFixtures):
    """Sections 1–3 of the record-surface suite (needs the ``svc`` and ``store_url`` fixtures)."""

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


__all__ = ["ScopeRecordConformance"]
