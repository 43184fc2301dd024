"""Sections 8–10 of the record-surface suite: Markdown both ways (source, export, import), closed kinds and
citations."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from ..domain.errors import Conflict, IntegrityError, InvalidCitationError, InvalidInput
from ..domain.ledger import INDEX_NAME
from ..service import MemoryService
from .record_fixtures import (
    KINDS,
    ORG,
    PROJECT,
    USER,
    RecordFixtures,
    TickingClock,
    build_store_of_every_kind,
    by_text,
    content_hashes,
    entry,
    stale_citations,
    tree,
)


class MarkdownCitationConformance(RecordFixtures):
    """Sections 8–10 of the record-surface suite (needs the ``svc`` and ``store_url`` fixtures)."""

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
    async def test_export_import_export_is_byte_identical_on_a_store_of_every_kind(
        self, store_url: str, empty_store_url: str, tmp_path: Path
    ) -> None:
        clock = TickingClock()
        async with self.ticking(store_url, clock=clock) as svc:
            summary = await build_store_of_every_kind(svc)
            assert summary["entries"] == 128
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
        for bad in stale_citations(hit, r1, r2):
            with pytest.raises(InvalidCitationError):
                await svc.verify_citation(bad)


__all__ = ["MarkdownCitationConformance"]
