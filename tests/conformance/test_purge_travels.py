"""Tombstones travel (issue 12): an export of a store with a purged entry imports into a fresh store on any engine
with every hash and tombstone kept and nothing of the purged text; a re-import after a later purge at the source
purges the destination too. Before this, the import failed with ``integrity`` (the purged body did not hash)."""

from __future__ import annotations

from pathlib import Path

from memstone import EntryInput, open_service
from memstone.domain.model import EntryPatch
from memstone.domain.purge import PURGED_TEXT

SCOPE = "memstone://orgs/acme/projects/web"
SECRET = "Customer Qzxwvjoy card 4111 belongs to qzxwvjoy-ltd"


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


async def test_an_export_of_a_purged_store_imports_exactly(engine_url: str, tmp_path: Path) -> None:
    source = f"sqlite:///{tmp_path / 'source.db'}"
    async with open_service(source, embedding=None, author="alice") as svc:
        await svc.remember(scope=SCOPE, entries=[EntryInput(kind="fact", text="We deploy with uv.")])
        said = await svc.record_source("note", "The user said: " + SECRET)  # erased by the purge of v1
        first = await svc.remember(
            scope=SCOPE, sources=[said], entries=[EntryInput(kind="fact", text=SECRET, tags=["qzxwvtag"])]
        )
        assert first is not None
        eid = first.changes[0].entry_id
        await svc.update(eid, EntryPatch(text="The card was removed from this note."))
        await svc.purge(eid, reason="card number")
        await svc.export_markdown(tmp_path / "export")
        source_heads = sorted((h.memory_id, h.revision, h.content_hash) for h in await svc.memories())
    files = _tree(tmp_path / "export")
    assert not any(b"qzxwvjoy" in data.lower() for data in files.values())

    async with open_service(engine_url, embedding=None) as dst:
        report = await dst.import_markdown(tmp_path / "export")
        assert report.revisions_written == 4  # the purge forgot the entry first
        assert sorted((h.memory_id, h.revision, h.content_hash) for h in await dst.memories()) == source_heads
        history = await dst.history(eid)
        assert [i.version.text for i in history] == [PURGED_TEXT, PURGED_TEXT]
        assert [(t.version, t.reason, t.author) for t in await dst.tombstones(eid)] == [
            (1, "card number", "alice"),
            (2, "card number", "alice"),
        ]
        assert (await dst.verify()).ok
        assert [s.content for s in await dst.sources([said.source_id])] == [PURGED_TEXT]
        await dst.export_markdown(tmp_path / "again")
    assert _tree(tmp_path / "again") == files


async def test_a_reimport_after_a_later_purge_purges_the_destination(engine_url: str, tmp_path: Path) -> None:
    source = f"sqlite:///{tmp_path / 'source.db'}"
    async with open_service(source, embedding=None) as svc:
        first = await svc.remember(scope=SCOPE, entries=[EntryInput(kind="fact", text=SECRET)])
        assert first is not None
        eid = first.changes[0].entry_id
        await svc.export_markdown(tmp_path / "before")
        await svc.purge(eid, reason="card number")  # forgets it (revision 2), then purges v1
        await svc.export_markdown(tmp_path / "after")
    async with open_service(engine_url, embedding=None) as dst:
        await dst.import_markdown(tmp_path / "before")
        assert (await dst.get(eid)).text == SECRET
        report = await dst.import_markdown(tmp_path / "after")
        assert (report.revisions_present, report.revisions_written) == (1, 1)
        assert [i.version.text for i in await dst.history(eid)] == [PURGED_TEXT]
        assert len(await dst.tombstones(eid)) == 1
        assert (await dst.verify()).ok
        hits = await dst.search("qzxwvjoy", scopes=[SCOPE], mode="fts")
        assert hits.hits == ()
