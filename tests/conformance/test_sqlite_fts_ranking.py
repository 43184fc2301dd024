"""SQLite's two-step FTS ranking (backends/sqlite/fts.py): FTS5 ranks alone, the head projection filters after;
the ranked join runs when too few of the top matches pass. Either way the hits are the join's, in its order."""

from __future__ import annotations

from pathlib import Path

import apsw

from memstone import EntryInput, open_service


def joined(path: Path, memory_id: str, word: str, kind: str | None = None) -> list[str]:
    """The reference: the one ranked join over the searched Memory (and kind), best first."""
    conn = apsw.Connection(str(path))
    try:
        sql = (
            "SELECT h.entry_id FROM memory_entry_search_fts f CROSS JOIN memory_entry_heads h "
            "ON h.projection_id = f.rowid WHERE memory_entry_search_fts MATCH ? AND h.memory_artifact_id = ?"
        )
        args: list[object] = [f'"{word}"', memory_id]
        if kind is not None:
            sql += " AND h.kind = ?"
            args.append(kind)
        return [r[0] for r in conn.execute(sql + " ORDER BY f.rank, h.projection_id", args).fetchall()]
    finally:
        conn.close()


async def test_a_memory_whose_matches_are_outranked_by_another_memorys_still_gets_them_all(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    async with open_service(f"sqlite:///{path}", embedding=None) as svc:
        # The other Memory holds 200 short, strongly matching entries; ours 5 long, weakly matching ones. FTS5's
        # own top 64 are all the other Memory's, so the first step finds none of ours.
        loud = await svc.remember(
            None, entries=[EntryInput(kind="fact", text=f"deploy deploy {i}") for i in range(200)]
        )
        quiet = await svc.remember(
            None,
            entries=[
                EntryInput(
                    kind="lesson" if i % 2 else "fact", text=f"note {i}: " + "filler words here " * 20 + "deploy"
                )
                for i in range(5)
            ],
        )
        assert loud is not None and quiet is not None
        found = await svc.search("deploy", memories=[quiet], mode="fts", limit=10)
        assert [h.entry_id for h in found.hits] == joined(path, quiet.memory_id, "deploy")
        assert len(found.hits) == 5
        lessons = await svc.search("deploy", memories=[quiet], mode="fts", limit=10, kinds=["lesson"])
        assert [h.entry_id for h in lessons.hits] == joined(path, quiet.memory_id, "deploy", "lesson")
        assert len(lessons.hits) == 2
        # The other Memory's own search is served by the first step and agrees with the join too.
        top = await svc.search("deploy", memories=[loud], mode="fts", limit=10)
        assert [h.entry_id for h in top.hits] == joined(path, loud.memory_id, "deploy")[:10]
