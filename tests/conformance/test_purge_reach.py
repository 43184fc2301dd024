"""What a purge reaches beyond its own store handle (issue 12): another open of the same store stops serving the
purged text at its next read (the decoded-version cache is dropped by the purge generation), and vectors a model
migration has staged for a purged version are deleted with it. On SQLite and PostgreSQL."""

from __future__ import annotations

import pytest

from memstone import EntryInput, open_service
from memstone.backends.sql.core import StoreCore
from memstone.domain.errors import InvalidInput
from memstone.domain.model import EntryPatch
from memstone.domain.purge import PURGED_TEXT
from memstone.embedding.hashing import HashingEmbedder

SCOPE = "memstone://orgs/acme/projects/web"
SECRET = "Customer Qzxwvjoy card 4111 belongs to qzxwvjoy-ltd"


async def test_another_open_of_the_store_stops_serving_purged_text_at_its_next_read(engine_url: str) -> None:
    async with open_service(engine_url, embedding=None, author="alice") as a:
        first = await a.remember(scope=SCOPE, entries=[EntryInput(kind="fact", text=SECRET)])
        assert first is not None
        eid = first.changes[0].entry_id
        await a.update(eid, EntryPatch(text="The card number was removed."))
        async with open_service(engine_url, embedding=None) as b:  # its own backend: a process of its own
            old = await b.revision(first.memory_id, first.revision)
            v1 = first.changes[0].to_entry_version_id
            for _ in range(2):  # the second read is served from b's cache of decoded versions
                assert (await b.get(v1)).text == SECRET
                assert [v.text for v in await b.entries(old)] == [SECRET]

            await a.purge(eid, versions=[1], reason="card number")

            assert (await b.get(v1)).text == PURGED_TEXT
            assert [v.text for v in await b.entries(old)] == [PURGED_TEXT]
            assert (await b.version(f"{eid}@1")).text == PURGED_TEXT
            assert [i.version.text for i in await b.history(eid)] == [PURGED_TEXT, "The card number was removed."]
            assert (await b.version(f"{eid}@2")).text == "The card number was removed."
            await a.purge(eid, reason="all of it")  # a second purge, a second generation: seen too
            assert (await b.version(f"{eid}@2")).text == PURGED_TEXT
            assert (await b.verify()).ok


def _staged_ids(svc_backend: object) -> set[str]:
    assert isinstance(svc_backend, StoreCore)
    parts = svc_backend.parts  # the store's own rows, read through its own engine (no fake)
    with parts.engine.read_txn():
        return {vid for vid, _vectors in parts.proj.staged()}


async def test_a_purge_deletes_the_vectors_a_model_migration_staged_for_the_version(engine_url: str) -> None:
    old, new = HashingEmbedder(dimension=32), HashingEmbedder(dimension=48)
    async with open_service(engine_url, embedding=old, author="alice") as svc:
        first = await svc.remember(scope=SCOPE, entries=[EntryInput(kind="fact", text=SECRET)])
        assert first is not None
        eid = first.changes[0].entry_id
        v1 = first.changes[0].to_entry_version_id
        await svc.update(eid, EntryPatch(text="The card number was removed."))
        backend = svc.backend
        assert isinstance(backend, StoreCore) and v1 is not None
        await backend.start_migration(new.profile)  # a reembed in progress (in another process, say)
        try:
            embedded = await new.embed((SECRET,))
            staged = {v1: (embedded.vectors[0],)}
            with pytest.raises(InvalidInput, match="not the current version"):
                await backend.stage_vectors(staged)  # staging takes only current versions now
            # A staging row for it written by an earlier release, which staged any version it was given:
            parts = backend.parts
            with parts.engine.write_txn():
                (version,) = parts.rows.versions(None, [v1])
                parts.proj.stage(version, staged[v1])
            assert v1 in _staged_ids(backend), "the test must see the staged vector before the purge"

            await svc.purge(eid, versions=[1], reason="card number")  # an old version: no write, so no wait

            assert v1 not in _staged_ids(backend)
        finally:
            await backend.abort_migration()
        assert (await svc.verify()).ok
