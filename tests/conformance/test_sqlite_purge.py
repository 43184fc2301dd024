"""Purge erases the bytes: the purged text is in no file of the store (DB, WAL, FTS shadow tables, free pages),
``verify`` is clean, the revision chain intact, and the purge recorded (issue 12, "Real erasure")."""

from __future__ import annotations

from pathlib import Path

import apsw
import pytest

from memstone import EntryInput, open_service
from memstone.domain.errors import InvalidInput, NotFound
from memstone.domain.model import EntryPatch
from memstone.domain.purge import PURGED_TEXT

SCOPE = "memstone://orgs/acme/projects/web"
# Distinct words with a rare first letter, so FTS5's prefix compression of neighbouring terms cannot hide them.
SECRET_V1 = "Customer Qzxwvjoy card 4111 belongs to qzxwvjoy-ltd"
SECRET_V2 = "Customer Qzxwvjoy moved; card belongs to Qzxwvkappa"
NEEDLES = (b"qzxwvjoy", b"Qzxwvjoy", b"qzxwvkappa", b"Qzxwvkappa", b"Qzxwvtitle", b"qzxwvtag")


def store_bytes(db: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(db.parent.iterdir()) if p.name.startswith(db.name)}


def found_in(db: Path) -> list[tuple[str, bytes]]:
    return [(name, n) for name, data in store_bytes(db).items() for n in NEEDLES if n in data]


def fts_terms(db: Path) -> set[str]:
    conn = apsw.Connection(str(db))
    try:
        terms: set[str] = set()
        for table in ("memory_entry_search_fts", "memory_entry_archive_fts"):
            conn.execute(f"CREATE VIRTUAL TABLE temp.v_{table} USING fts5vocab(main, {table}, 'row')")
            terms |= {r[0] for r in conn.execute(f"SELECT term FROM temp.v_{table}")}
        return terms
    finally:
        conn.close()


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "store" / "m.db"


async def test_a_purged_entry_leaves_no_byte_in_any_file(db: Path) -> None:
    url = f"sqlite:///{db}"
    async with open_service(url, embedding=None, author="alice") as svc:
        kept = await svc.remember(scope=SCOPE, entries=[EntryInput(kind="fact", text="We deploy with uv.")])
        assert kept is not None
        evidence = await svc.record_source("note", "The user said: " + SECRET_V1)  # as capture records a prompt
        shared = await svc.record_source("note", "Shared evidence, cited by a kept entry too: Qzxwvshared.")
        await svc.remember(scope=SCOPE, sources=[shared], entries=[EntryInput(kind="fact", text="Kept, cited.")])
        first = await svc.remember(
            scope=SCOPE,
            sources=[evidence, shared],
            entries=[EntryInput(kind="fact", text=SECRET_V1, title="Qzxwvtitle", tags=["qzxwvtag"])],
        )
        assert first is not None
        eid = first.changes[0].entry_id
        await svc.update(eid, EntryPatch(text=SECRET_V2))  # v1 is now in the archive projection
        for n in range(30):  # more pages, and a WAL that holds old copies of them
            await svc.remember(scope=SCOPE, entries=[EntryInput(kind="fact", text=f"Filler fact number {n}.")])
        assert found_in(db), "the test must see the text before the purge"
        assert {"qzxwvjoy", "qzxwvkappa"} <= fts_terms(db)
        head_before = await svc.head(first)

        report = await svc.purge(eid, reason="customer data written by mistake")

        assert [t.version for t in report.tombstones] == [1, 2]
        assert report.forgotten_in_revision == head_before.revision + 1
        history = await svc.history(eid)
        assert [(i.version.text, i.version.title, i.version.content.tags) for i in history] == [
            (PURGED_TEXT, None, ()),
            (PURGED_TEXT, None, ()),
        ]
        tombstones = await svc.tombstones(eid)
        assert [(t.version, t.reason, t.author) for t in tombstones] == [
            (1, "customer data written by mistake", "alice"),
            (2, "customer data written by mistake", "alice"),
        ]
        # the original hashes are kept: every manifest and Revision that names the versions still verifies
        assert [t.entry_content_hash for t in tombstones] == [i.version.entry_content_hash for i in history]
        report_ok = await svc.verify()
        assert report_ok.ok, report_ok.to_dict()
        assert [s.content for s in await svc.sources([evidence.source_id, shared.source_id])] == [
            PURGED_TEXT, shared.content,
        ]  # fmt: skip
        hits = await svc.search("deploy uv", scopes=[SCOPE], mode="fts")
        assert [h.entry_id for h in hits.hits] == [kept.changes[0].entry_id]
        assert (await svc.search("qzxwvjoy", scopes=[SCOPE], mode="fts")).hits == ()
        with pytest.raises(InvalidInput, match="purged"):
            await svc.reactivate(await svc.head(first), entries=[eid])
    assert found_in(db) == []
    assert not {"qzxwvjoy", "qzxwvkappa", "qzxwvtitle", "qzxwvtag"} & fts_terms(db)
    async with open_service(url, embedding=None) as svc:
        assert (await svc.verify()).ok
        assert len(await svc.tombstones(eid)) == 2


async def test_purging_one_old_version_keeps_the_current_one(db: Path) -> None:
    async with open_service(f"sqlite:///{db}", embedding=None) as svc:
        first = await svc.remember(scope=SCOPE, entries=[EntryInput(kind="fact", text=SECRET_V1)])
        assert first is not None
        eid = first.changes[0].entry_id
        await svc.update(eid, EntryPatch(text="Customer moved; the card number was removed."))
        report = await svc.purge(eid, versions=[1], reason="card number")
        assert report.forgotten_in_revision is None
        assert (await svc.get(eid)).text == "Customer moved; the card number was removed."
        assert (await svc.history(eid))[0].version.text == PURGED_TEXT
        assert (await svc.verify()).ok
        again = await svc.purge(eid, versions=[1], reason="card number")
        assert again.tombstones == () and len(again.already_purged) == 1
        assert (await svc.rebuild_projections()).ok  # a rebuild accepts the tombstoned version too
        assert (await svc.verify()).ok
    assert found_in(db) == []


async def test_purge_refuses_what_it_cannot_do(db: Path) -> None:
    async with open_service(f"sqlite:///{db}", embedding=None) as svc:
        first = await svc.remember(scope=SCOPE, entries=[EntryInput(kind="fact", text="Something.")])
        assert first is not None
        eid = first.changes[0].entry_id
        with pytest.raises(InvalidInput, match="reason"):
            await svc.purge(eid, reason="  ")
        with pytest.raises(NotFound):
            await svc.purge(eid, versions=[7], reason="x")
        with pytest.raises(NotFound):
            await svc.purge("ent_01J00000000000000000000000", reason="x")
        with pytest.raises(InvalidInput, match="NUL"):  # the purge mark cannot be forged by a write
            await svc.remember(scope=SCOPE, entries=[EntryInput(kind="fact", text="\x00memstone:purged:abc")])
        assert await svc.tombstones(eid) == ()


async def test_verify_reports_a_forged_purge_mark(db: Path) -> None:
    async with open_service(f"sqlite:///{db}", embedding=None) as svc:
        first = await svc.remember(scope=SCOPE, entries=[EntryInput(kind="fact", text="An honest fact.")])
        assert first is not None
        vid = first.changes[0].to_entry_version_id
        h = (await svc.get(first.changes[0].entry_id)).entry_content_hash
    conn = apsw.Connection(str(db))
    conn.execute("DROP TRIGGER trg_memory_entry_versions_no_update")
    conn.execute(
        "UPDATE memory_entry_versions SET text = ? WHERE entry_version_id = ?", ("\x00memstone:purged:" + h, vid)
    )
    conn.close()
    async with open_service(f"sqlite:///{db}", embedding=None) as svc:
        report = await svc.verify()
    assert not report.ok
    assert any("does not match its content hash" in d for d in report.authority_damage)
