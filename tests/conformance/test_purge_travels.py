"""Tombstones travel (issue 12): an export of a store with a purged entry imports into a fresh store on any engine
with every hash and tombstone kept and nothing of the purged text; a re-import after a later purge at the source
purges the destination too. Before this, the import failed with ``integrity`` (the purged body did not hash)."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from memstone import EntryInput, open_service
from memstone.domain.errors import IntegrityError
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


async def test_import_refuses_a_version_that_cites_erased_evidence_but_was_not_purged(tmp_path: Path) -> None:
    """An export mixed from two times (the entry from before the purge, its evidence from after it) is refused
    before anything is written: only a purged version may cite evidence a purge erased."""
    source = f"sqlite:///{tmp_path / 'source.db'}"
    async with open_service(source, embedding=None) as svc:
        said = await svc.record_source("note", "The user said: " + SECRET)
        first = await svc.remember(scope=SCOPE, sources=[said], entries=[EntryInput(kind="fact", text=SECRET)])
        assert first is not None
        await svc.export_markdown(tmp_path / "before")
        await svc.purge(first.changes[0].entry_id, reason="card number")
        await svc.export_markdown(tmp_path / "after")
    mixed = tmp_path / "mixed"
    shutil.copytree(tmp_path / "before", mixed)
    rel = f"sources/{said.source_id}.md"
    shutil.copyfile(tmp_path / "after" / rel, mixed / rel)  # the erased evidence, with its index line
    index = json.loads((mixed / "memstone-export.json").read_text())
    for item in index["files"]:
        if item["path"] == rel:
            item["sha256"] = hashlib.sha256((mixed / rel).read_bytes()).hexdigest()
    (mixed / "memstone-export.json").write_text(json.dumps(index))
    async with open_service(f"sqlite:///{tmp_path / 'dst.db'}", embedding=None) as dst:
        await dst.import_markdown(tmp_path / "before")  # the control: the untouched export imports
    async with open_service(f"sqlite:///{tmp_path / 'mixed.db'}", embedding=None) as dst:
        with pytest.raises(IntegrityError, match="cites an erased source but was not purged") as refused:
            await dst.import_markdown(mixed)
        assert refused.value.hint == "restore the files from the original export"
        assert await dst.memories() == ()
        assert await dst.sources([said.source_id]) == ()
