"""What a PostgreSQL write binds: its postings' terms and frequencies, and its manifest nodes, as array literals
(text) the engine builds, so psycopg never dumps a Python list element by element on a write's path (issue 13:
that dump cost a write's client more instructions than the statement it fed), and every value reads back as it
was: the postings of the write's text, the nodes' stored bytes."""

from __future__ import annotations

import zlib
from collections.abc import Iterator

import psycopg
import pytest
from psycopg.types.array import ListDumper

from memstone import EntryInput, open_service
from memstone.backends.postgres.arrays import bytea_array, int_array, text_array
from memstone.backends.postgres.fts import DOC_MARK, _postings
from memstone.backends.sql.rows import _node_body
from memstone.domain.analyzer import searchable_text
from memstone.domain.manifest import LEAF_MAX

# Terms no analyzer gives today, but a literal must carry: quotes, backslashes, braces, commas, spaces, NULL.
_AWKWARD = [DOC_MARK, "plain", 'say "hi"', "back\\slash", "\\", '"', "{a,b}", "a b", "NULL", "null", "ümlaut", "東京"]


def test_array_literals_read_back_as_the_terms_and_frequencies_they_carry(postgres_url: str) -> None:
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        for terms in (_AWKWARD, [DOC_MARK, "{a,b}", "a b", "NULL", ""], [DOC_MARK], [DOC_MARK, "one"], []):
            tfs = list(range(len(terms)))
            row = conn.execute("SELECT %s::text[], %s::int[]", (text_array(terms), int_array(tfs))).fetchone()
            assert row == (terms, tfs), (terms, row)
        blobs = [b"", b"\\x00", bytes(range(256)), zlib.compress(b"a manifest node", 6)]
        row = conn.execute("SELECT %s::bytea[], %s::bigint[]", (bytea_array(blobs), int_array([2**40, -1]))).fetchone()
        assert row == (blobs, [2**40, -1])


@pytest.fixture
def list_dumps(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[object]]:
    """Every Python list psycopg dumps as an array parameter (text format: how a write's parameters travel)."""
    dumped: list[object] = []
    dump = ListDumper.dump

    def spied(self: ListDumper, obj: list[object]) -> object:
        dumped.append(obj)
        return dump(self, obj)

    monkeypatch.setattr(ListDumper, "dump", spied)
    yield dumped


async def test_a_write_binds_no_list_and_stores_the_postings_of_its_text(
    postgres_url: str, list_dumps: list[object]
) -> None:
    text = "The nightly backup of the orders database runs at two, and the backup is checked at three."
    async with open_service(postgres_url, embedding=None) as svc:
        first = await svc.remember(None, entries=[EntryInput(kind="fact", text="The first fact of the Memory.")])
        assert first is not None
        list_dumps.clear()
        second = await svc.remember(first, entries=[EntryInput(kind="fact", text=text)])
        assert second is not None
        assert list_dumps == []  # the old code dumped the postings' terms and frequencies as two lists
    terms, tfs, length = _postings(searchable_text("", text, ""))
    with psycopg.connect(postgres_url) as conn:
        rows = conn.execute(
            "SELECT p.term, p.tf, p.dl FROM memory_entry_postings p JOIN memory_entry_heads h "
            "ON h.projection_id = p.projection_id WHERE h.memory_artifact_id = %s AND h.head_revision = 2",
            (second.memory_id,),
        ).fetchall()
        totals = conn.execute(
            "SELECT docs, total_len FROM memory_fts_stats WHERE memory_artifact_id = %s", (second.memory_id,)
        ).fetchone()
    assert sorted(rows) == sorted((t, f, length) for t, f in zip(terms, tfs, strict=True))
    assert ("backup", 2, length) in rows and (DOC_MARK, 0, length) in rows
    first_length = len(searchable_text("", "The first fact of the Memory.", "").split())
    assert totals == (2, first_length + length)


async def test_a_write_of_many_entries_sends_its_nodes_in_one_statement_and_stores_their_bytes(
    postgres_url: str, list_dumps: list[object]
) -> None:
    """A bulk write's hundreds of manifest nodes: one ``unnest`` statement of two parameters (the old code: a
    ``VALUES`` list chunked at 500 parameters), each node stored as its body compressed, and ``verify`` clean."""
    entries = [
        EntryInput(kind="fact", text=f"Fact number {i} of a bulk write, about topic {i % 37}.") for i in range(600)
    ]
    async with open_service(postgres_url, embedding=None) as svc:
        head = await svc.remember(None, entries=entries)
        assert head is not None
        head = await svc.remember(head, entries=[EntryInput(kind="fact", text="One more fact after the bulk.")])
        assert head is not None
        assert list_dumps == []
        report = await svc.verify()
        assert report.ok, report
    with psycopg.connect(postgres_url) as conn:
        nodes = conn.execute("SELECT node_hash, body FROM manifest_nodes").fetchall()
    # The trie's shape depends on the ids' milliseconds (how fast the machine made them): CI once saw 39 nodes
    # where the test asked for more than 50. What holds on every machine: 601 entries in leaves of at most LEAF_MAX
    # need at least ceil(601 / LEAF_MAX) leaves and a branch above them.
    assert len(nodes) >= -(-601 // LEAF_MAX) + 1
    for _, body in nodes:
        assert body == zlib.compress(_node_body(body), 6)
