"""A store written by ``remember`` keeps its FTS5 index in one segment (``backends/sqlite/fts.py``, issue 15).

FTS5 adds a segment per write transaction and merges only four of one level at a time, so a store written in
batches kept one segment per batch (15 at 100k), and every query read each term's postings in each of them. The
engine merges the index in the write's transaction once the new segments hold 1/``TAIL_SHARE`` of the largest's
pages; a small write after that leaves its segment for later."""

from __future__ import annotations

from pathlib import Path

import apsw

from memstone import EntryInput, open_service
from memstone.backends.sqlite.engine import SQLiteConn
from memstone.backends.sqlite.fts import (
    FTS_TABLES,
    MAX_SEGMENTS,
    TAIL_SHARE,
    WRITE_MERGE_PAGES,
    needs_optimize,
    segment_pages,
)


def segments(path: Path) -> dict[str, list[int]]:
    conn = apsw.Connection(str(path))
    try:
        return {fts: segment_pages(SQLiteConn(conn), fts) for fts in FTS_TABLES}
    finally:
        conn.close()


async def test_batches_written_by_remember_leave_one_segment(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    texts = [f"entry {i} about the deploy of service {i % 97} on host {i % 13}" for i in range(1500)]
    async with open_service(f"sqlite:///{path}", embedding=None) as svc:
        rev = None
        for i in range(0, len(texts), 500):
            rev = await svc.remember(rev, entries=[EntryInput(kind="note", text=t) for t in texts[i : i + 500]])
        assert rev is not None
        found = segments(path)
        assert found["memory_entry_search_fts"] == [max(found["memory_entry_search_fts"])]  # FTS5 alone: 3 segments
        assert len(found["memory_entry_archive_fts"]) <= 1, found
        # A single-entry write after it adds its own small segment: not merged at once.
        await svc.remember(rev, entries=[EntryInput(kind="note", text="one more note, about a quokka")])
        assert len(segments(path)["memory_entry_search_fts"]) == 2
        hits = (await svc.search("quokka", memories=[rev.memory_id], mode="fts", limit=3)).hits
        assert [h.text for h in hits] == ["one more note, about a quokka"]


def test_an_index_is_merged_when_its_new_segments_are_a_share_of_the_largest_or_too_many() -> None:
    assert not needs_optimize([])
    assert not needs_optimize([2500])
    assert not needs_optimize([2500, 2500 // TAIL_SHARE - 1])
    assert needs_optimize([2500, 2500 // TAIL_SHARE + 1])
    assert needs_optimize([2500, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1][: MAX_SEGMENTS + 1])
    assert not needs_optimize([2500, *[1] * (MAX_SEGMENTS - 1)])


def test_a_write_never_rewrites_an_index_too_large_to_rewrite_inside_it() -> None:
    """The rewrite grows with the index; beyond ``WRITE_MERGE_PAGES`` the daemon's upkeep merges it instead."""
    big = WRITE_MERGE_PAGES - 100
    assert needs_optimize([big, big // TAIL_SHARE + 1])
    assert not needs_optimize([WRITE_MERGE_PAGES, WRITE_MERGE_PAGES // TAIL_SHARE + 1])
    assert not needs_optimize([WRITE_MERGE_PAGES, *[1] * (MAX_SEGMENTS + 1)])
