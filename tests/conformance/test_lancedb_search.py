"""Search on LanceDB's own indexes (docs/engines/lancedb.md, "Search"), chosen with ``?search=gated`` (the default,
``search=replica``, searches the replica alone and feeds nothing): after maintenance feeds the search tables,
candidates come from LanceDB's FTS and vector indexes; a write after the feed (above the watermark) is found at
once; the hits are those of the replica's own exact search. The whole conformance suite also runs with the search
tables fed on every write (``?search=eager``, ``test_lancedb.py``)."""

from __future__ import annotations

import secrets
from pathlib import Path

import pytest

from memstone.domain.model import EntryInput, EntryPatch, Revision
from memstone.service import MemoryService, open_service
from memstone.testing.s3server import S3Server

pytest.importorskip("lancedb")

from memstone.backends.lance.search import TEXT_TABLE
from memstone.backends.lance.store import LanceMemoryBackend

WORDS = ["backup", "deploy", "postgres", "kafka", "ledger", "invoice", "router", "cache", "shard", "replica"]


def lance(svc: MemoryService) -> LanceMemoryBackend:
    backend = svc.backend
    assert isinstance(backend, LanceMemoryBackend)
    return backend


def texts(n: int, salt: str = "") -> list[EntryInput]:
    return [
        EntryInput(kind="fact", text=f"The {WORDS[i % 10]} of system {i} uses {WORDS[(i * 3) % 10]} nightly {salt}")
        for i in range(n)
    ]


async def hit_ids(svc: MemoryService, rev: Revision, query: str, mode: str) -> list[tuple[str, str, float]]:
    """The hits of a search: entry, version and score (scores equal to the last bit on both paths)."""
    found = await svc.search(query, memories=[rev.memory_id], mode=mode, limit=20)  # type: ignore[arg-type]
    return [(h.entry_id, h.entry_version_id, h.score) for h in found.hits]


async def test_fts_candidates_come_from_lancedb_after_the_feed_and_a_later_write_is_found(tmp_path: Path) -> None:
    async with open_service(f"lancedb:///{tmp_path / 's'}?search=gated", embedding=None) as svc:
        rev = await svc.remember(None, entries=texts(60))
        assert rev is not None
        engine = lance(svc).lance
        queries = ["postgres backup", "kafka", "invoice router shard"]
        before = [await hit_ids(svc, rev, q, "fts") for q in queries]
        assert engine.stats["text_index"] == 0 and engine.stats["text_replica"] >= 3  # no search tables yet
        assert all(before)

        done = await lance(svc).maintain_storage()
        assert done["search_text_fed"] == 60
        assert engine.search_tables.indexes()[TEXT_TABLE] == ["FTS"]
        replica_before = engine.stats["text_replica"]
        after = [await hit_ids(svc, rev, q, "fts") for q in queries]
        assert after == before  # the same hits, order and scores as the replica's own search
        assert engine.stats["text_index"] >= 3 and engine.stats["text_replica"] == replica_before

        # Above the watermark: a write after the feed is found at once, though LanceDB's table does not hold it.
        rev2 = await svc.remember(rev, entries=[EntryInput(kind="fact", text="The zeppelin hangar opens at dawn")])
        assert rev2 is not None
        used = engine.stats["text_index"]
        found = await svc.search("zeppelin", memories=[rev2.memory_id], mode="fts")
        assert [h.text for h in found.hits] == ["The zeppelin hangar opens at dawn"]
        assert engine.stats["text_index"] == used + 1
        table = engine.search_tables._open(TEXT_TABLE)
        assert table.count_rows(f"entry_version_id = '{found.hits[0].entry_version_id}'") == 0

        # A version superseded after the feed: LanceDB still lists its row; the replica's check drops it.
        old = next(h for h in (await svc.search("kafka", memories=[rev2.memory_id], mode="fts", limit=1)).hits)
        await svc.update(old, EntryPatch(text="The abacus counts beads"))
        hits = (await svc.search("kafka", memories=[rev2.memory_id], mode="fts", limit=50)).hits
        assert old.entry_id not in {h.entry_id for h in hits}
        assert [h.entry_id for h in (await svc.search("abacus", memories=[rev2.memory_id], mode="fts")).hits] == [
            old.entry_id
        ]


async def test_vector_candidates_come_from_lancedbs_vector_index_once_built(tmp_path: Path) -> None:
    url = f"lancedb:///{tmp_path / 's'}?search=gated"
    async with open_service(url, embedding="hashing-64") as svc:
        rev = await svc.remember(None, entries=texts(300))
        assert rev is not None
        engine = lance(svc).lance
        engine.search_tables.vector_index_rows = 256  # the gate builds the index once this many vectors exist
        queries = ["postgres backup nightly", "kafka router"]
        before = [await hit_ids(svc, rev, q, "vector") for q in queries]
        assert engine.stats["vector_index"] == 0 and all(before)

        done = await lance(svc).maintain_storage()
        assert done["search_vectors_fed"] == 300
        state = engine.search_tables.state()
        assert state is not None and state.vector_mark > 0
        assert engine.search_tables.indexes()[state.vector_table] == ["IvfHnswSq"]
        after = [await hit_ids(svc, rev, q, "vector") for q in queries]
        # LanceDB's index chooses the candidates; the replica's exact distances order them: the same hits here.
        assert after == before
        assert engine.stats["vector_index"] >= 2

        rev2 = await svc.remember(rev, entries=[EntryInput(kind="fact", text="zeppelin hangar dawn")])
        assert rev2 is not None
        used = engine.stats["vector_index"]
        found = await svc.search("zeppelin hangar dawn", memories=[rev2.memory_id], mode="vector", limit=1)
        assert [h.text for h in found.hits] == ["zeppelin hangar dawn"]
        assert engine.stats["vector_index"] == used + 1
        hybrid = await svc.search("zeppelin hangar", memories=[rev2.memory_id], mode="hybrid", limit=1)
        assert [h.text for h in hybrid.hits] == ["zeppelin hangar dawn"]


async def test_a_replica_behind_the_feed_searches_itself(tmp_path: Path) -> None:
    url = f"lancedb:///{tmp_path / 's'}?search=gated"
    async with open_service(url, embedding=None) as reader, open_service(url, embedding=None) as writer:
        rev = await writer.remember(None, entries=texts(20))
        assert rev is not None
        assert await hit_ids(reader, rev, "kafka", "fts")  # the reader's replica stands at rev
        # The writer supersedes an entry and feeds past the reader's position.
        first = (await writer.search("kafka", memories=[rev.memory_id], mode="fts", limit=1)).hits[0]
        await writer.update(first, EntryPatch(text="The abacus counts beads"))
        await lance(writer).maintain_storage()
        engine = lance(reader).lance
        assert engine.search_tables.state() is not None
        # The reader catches up before it reads, so it stands at the feed and takes LanceDB's candidates.
        used = engine.stats["text_index"]
        assert first.entry_id not in {e for e, _, _ in await hit_ids(reader, rev, "kafka", "fts")}
        assert engine.stats["text_index"] == used + 1


async def test_the_index_path_on_s3(s3_env: S3Server) -> None:
    url = s3_env.url("lancedb+s3", f"t-{secrets.token_hex(6)}") + "?search=gated"
    async with open_service(url, embedding="hashing-64") as svc:
        rev = await svc.remember(None, entries=texts(30))
        assert rev is not None
        before = await hit_ids(svc, rev, "postgres backup", "hybrid")
        await lance(svc).maintain_storage()
        engine = lance(svc).lance
        assert await hit_ids(svc, rev, "postgres backup", "hybrid") == before
        assert engine.stats["text_index"] >= 1 and engine.stats["vector_index"] >= 1
        rev2 = await svc.remember(rev, entries=[EntryInput(kind="fact", text="The zeppelin hangar opens at dawn")])
        assert rev2 is not None
        found = await svc.search("zeppelin", memories=[rev2.memory_id], mode="fts")
        assert [h.text for h in found.hits] == ["The zeppelin hangar opens at dawn"]


async def test_by_default_maintenance_feeds_nothing_and_the_replica_answers(tmp_path: Path) -> None:
    async with open_service(f"lancedb:///{tmp_path / 's'}", embedding=None) as svc:
        rev = await svc.remember(None, entries=texts(30))
        assert rev is not None
        before = await hit_ids(svc, rev, "postgres backup", "fts")
        done = await lance(svc).maintain_storage()
        assert done["search_text_fed"] == 0 and TEXT_TABLE not in lance(svc).lance.search_tables.indexes()
        assert await hit_ids(svc, rev, "postgres backup", "fts") == before
        assert lance(svc).lance.stats["text_index"] == 0
