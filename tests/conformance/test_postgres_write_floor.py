"""The write floor of ``bench/bench_core.py`` (``engines.RawRemember``) writes the rows a ``remember`` writes, and
meets the database as that write did (issue 13: at 100k the old floor was 5.6× faster than the write it copied)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import psycopg
import pytest

from memstone import EntryInput, open_service
from memstone.backends.postgres.fts import _postings
from memstone.backends.sql.rows import _node_body
from memstone.domain.analyzer import searchable_text
from memstone.domain.manifest import ManifestReader


@pytest.fixture
def engines() -> Iterator[ModuleType]:
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
    try:
        import engines

        yield engines
    finally:
        sys.path.pop(0)


def _counts(conn: psycopg.Connection, memory_id: str) -> dict[str, int]:
    q = {
        "revisions": "SELECT count(*) FROM artifact_revisions WHERE artifact_id = %s",
        "versions": "SELECT count(*) FROM memory_entry_versions WHERE memory_artifact_id = %s",
        "heads": "SELECT count(*) FROM memory_entry_heads WHERE memory_artifact_id = %s",
        "postings": "SELECT count(*) FROM memory_entry_postings p JOIN memory_entry_heads h "
        "ON h.projection_id = p.projection_id WHERE h.memory_artifact_id = %s",
    }
    return {name: int(conn.execute(sql, (memory_id,)).fetchone()[0]) for name, sql in q.items()}  # type: ignore[index]


def _nodes_sent(conn: psycopg.Connection, memory_id: str, revision: int) -> list[str]:
    """The manifest nodes the write of ``revision`` (one new entry) sent: its base's manifest updated again."""

    def load(node_hash: str) -> bytes:
        row = conn.execute("SELECT body FROM manifest_nodes WHERE node_hash = %s", (node_hash,)).fetchone()
        assert row is not None
        return _node_body(row[0])

    roots: dict[int, str] = dict(
        conn.execute(
            "SELECT revision, manifest_root FROM artifact_revisions WHERE artifact_id = %s AND revision IN (%s, %s)",
            (memory_id, revision - 1, revision),
        ).fetchall()
    )
    (entry_id,) = conn.execute(
        "SELECT entry_id FROM memory_entry_heads WHERE memory_artifact_id = %s AND head_revision = %s",
        (memory_id, revision),
    ).fetchone()  # type: ignore[misc]
    reader = ManifestReader(load)
    entry = reader.lookup(roots[revision], entry_id)
    assert entry is not None
    root, nodes = reader.update(roots[revision - 1], {entry_id: entry})
    assert root == roots[revision]
    return sorted(nodes)


async def test_the_floor_copies_the_nodes_of_each_write_and_indexes_a_note_nobody_wrote(
    postgres_url: str, engines: ModuleType
) -> None:
    notes = [
        f"Fact number {i}: the deploy of service s{i} runs on host h{i % 7} at port {8000 + i}." for i in range(80)
    ]
    async with open_service(postgres_url, embedding=None) as svc:
        head = await svc.remember(None, entries=[EntryInput(kind="fact", text=n) for n in notes[:20]])
        other = await svc.remember(None, entries=[EntryInput(kind="fact", text="The floor's Memory.")])
        assert head is not None and other is not None
        floor = engines.RawRemember(postgres_url, head.memory_id, other.memory_id)
        with psycopg.connect(postgres_url, autocommit=True) as conn:
            try:
                for i, note in enumerate(notes[20:50]):  # 30 writes: the last leaf of 24 entries splits on the way
                    head = await svc.remember(head, entries=[EntryInput(kind="fact", text=note)])
                    assert head is not None
                    sent = _nodes_sent(conn, head.memory_id, head.revision)
                    unwritten = f"A note nobody wrote, number {i}, about the zebra{i} quartz{i} index."
                    before = _counts(conn, other.memory_id)
                    floor.prepare(unwritten)
                    floor.write()
                    after = _counts(conn, other.memory_id)
                    # the nodes the write sent (found by key, no scan): the same set, leaf splits included
                    assert sorted(n["node_hash"] for n in floor.nodes) == sent
                    terms, _, _ = _postings(searchable_text("", unwritten, ""))
                    assert {k: after[k] - before[k] for k in after} == {
                        "revisions": 1,
                        "versions": 1,
                        "heads": 1,
                        "postings": len(terms),
                    }
                    posted = conn.execute(
                        "SELECT p.term FROM memory_entry_postings p JOIN memory_entry_heads h "
                        "ON h.projection_id = p.projection_id WHERE h.memory_artifact_id = %s "
                        "ORDER BY h.projection_id DESC, p.term",
                        (other.memory_id,),
                    ).fetchall()[: len(terms)]
                    assert sorted(r[0] for r in posted) == sorted(terms)  # the new note's terms, not the write's
            finally:
                floor.close()
