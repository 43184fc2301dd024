"""Why each version was written: ``history(entry, reasons=True)`` reads it from the Revisions, a range per run of
nearby Revisions (``revision_runs``), and matches each version to the Change that wrote it."""

from __future__ import annotations

from pathlib import Path

from memstone import EntryInput, open_service
from memstone.domain.history import revision_runs
from memstone.domain.model import EntryPatch

SCOPE = "memstone://orgs/acme/projects/web"


async def test_reasons_come_from_the_revision_that_wrote_each_version(tmp_path: Path) -> None:
    async with open_service(f"sqlite:///{tmp_path / 'm.db'}", embedding=None) as svc:
        rev = await svc.remember(None, entries=[EntryInput(kind="fact", text="Port 8000.")], scope=SCOPE)
        assert rev is not None
        eid = rev.changes[0].entry_id
        other = (await svc.remember(rev, entries=[EntryInput(kind="fact", text="Other.")])).changes[0].entry_id
        await svc.update(eid, EntryPatch(text="Port 9000.", reason="the proxy took 8000"))
        for i in range(12):  # a long gap of other writes: the last version is in a run of its own
            await svc.update(other, EntryPatch(text=f"Other {i}.", reason=f"other {i}"))
        await svc.flag(await svc.head(rev.memory_id), eid, important=True)
        await svc.forget(await svc.head(rev.memory_id), entries=[eid], reason="obsolete")

        plain = await svc.history(eid)
        chain = await svc.history(eid, reasons=True)
        assert [h.reason for h in plain] == [None, None, None]  # not read unless asked for
        assert [(h.version.version, h.reason, h.status) for h in chain] == [
            (1, None, "superseded"),
            (2, "the proxy took 8000", "superseded"),
            (3, "flag", "deleted"),  # the forget's own reason belongs to no version
        ]
        runs = revision_runs([h.version for h in chain])  # revisions 1 and 3 in one read, 16 in another
        assert [(first, last) for _, first, last in runs] == [(1, 3), (16, 16)]


def test_revision_runs_join_nearby_revisions_only() -> None:
    from memstone.domain.ids import EntryId, EntryVersionId, MemoryId
    from memstone.domain.model import EntryContent, EntryVersion

    def at(memory: str, n: int) -> EntryVersion:
        return EntryVersion(
            memory_id=MemoryId(memory),
            entry_id=EntryId("ent_x"),
            entry_version_id=EntryVersionId(f"ver_{memory}{n}"),
            version=n,
            previous_version_id=None,
            content=EntryContent(kind="fact", text="x"),
            entry_content_hash="0" * 64,
            created_in_revision=n,
        )

    versions = [at("mem_a", n) for n in (1, 2, 9, 18, 40)] + [at("mem_b", 3)]
    assert revision_runs(versions) == [("mem_a", 1, 9), ("mem_a", 18, 18), ("mem_a", 40, 40), ("mem_b", 3, 3)]
    assert revision_runs(versions, max_gap=20) == [("mem_a", 1, 18), ("mem_a", 40, 40), ("mem_b", 3, 3)]
    assert revision_runs([]) == []
