"""A bulk write leaves a PostgreSQL store vacuumed and analyzed (issue 13, ``service/settle.py``).

Before, ``memstone copy`` and ``backfill`` left the rows they wrote with no visibility map (only ``VACUUM`` sets it;
the full-text statement's index-only scans of the postings then read every posting's heap row too) and with the
planner's statistics of the empty tables, until autovacuum came by after 20 % of a table was new. Now both end with
the engine's storage upkeep, ``VACUUM (ANALYZE)`` of the tables they filled; a write of a few rows leaves it to
autovacuum. Read from the server's own statistics (``pg_stat_user_tables``, ``pg_class``)."""

from __future__ import annotations

from pathlib import Path

import psycopg

from memstone import EntryInput, open_service
from memstone.embedding.hashing import HashingEmbedder
from memstone.service.copy import copy_urls
from memstone.service.settle import SETTLE_ROWS

SCOPE = "memstone://users/u"


def _settled(url: str, tables: tuple[str, ...]) -> dict[str, tuple[bool, bool, int]]:
    """Per table: (vacuumed by hand, analyzed by hand, pages marked all-visible). Autovacuum is not counted."""
    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT s.relname, s.last_vacuum IS NOT NULL, s.last_analyze IS NOT NULL, c.relallvisible "
            "FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid WHERE s.relname = ANY(%s)",
            (list(tables),),
        ).fetchall()
    return {str(r[0]): (bool(r[1]), bool(r[2]), int(r[3])) for r in rows}


def _entries(n: int) -> list[EntryInput]:
    return [
        EntryInput(kind="note", text=f"Note {i}: the canary of service {i % 37} was promoted after check {i}.")
        for i in range(n)
    ]


async def test_a_copy_into_postgres_of_a_thousand_entries_ends_vacuumed_and_analyzed(
    postgres_url: str, tmp_path: Path
) -> None:
    source = f"sqlite:///{tmp_path / 'source.db'}"
    async with open_service(source, embedding=HashingEmbedder(dimension=32)) as svc:
        await svc.remember(scope=SCOPE, entries=_entries(SETTLE_ROWS + 200))
    phases: list[tuple[str, int, int]] = []
    report, source_ok = await copy_urls(source, postgres_url, progress=lambda *p: phases.append(p))
    assert report.verify_ok and source_ok and report.vectors == SETTLE_ROWS + 200
    assert ("upkeep", 0, 1) in phases and phases[-1] != ("upkeep", 0, 1)  # shown while it runs
    tables = ("memory_entry_heads", "memory_entry_postings", "memory_entry_vector_metadata", "memory_entry_vectors")
    settled = _settled(postgres_url, tables)
    assert sorted(settled) == sorted(tables)
    assert all(v and a and visible > 0 for v, a, visible in settled.values()), settled
    async with open_service(postgres_url, embedding=HashingEmbedder(dimension=32)) as svc:
        hits = (await svc.search("canary promoted check 1005", scopes=[SCOPE], mode="fts")).hits
        assert hits and "check 1005." in hits[0].text


async def test_a_backfill_of_a_thousand_vectors_settles_and_a_small_write_leaves_it_to_autovacuum(
    postgres_url: str,
) -> None:
    async with open_service(postgres_url, embedding=None) as svc:
        await svc.remember(
            scope=SCOPE, entries=[EntryInput(kind="fact", text=f"Fact {i}: deploy with uv.") for i in range(3)]
        )
    assert not any(v or a for v, a, _ in _settled(postgres_url, ("memory_entry_postings",)).values())
    async with open_service(postgres_url, embedding=None) as svc:
        await svc.remember(scope=SCOPE, entries=_entries(SETTLE_ROWS))  # remember alone: autovacuum's
    async with open_service(postgres_url, embedding=HashingEmbedder(dimension=32)) as svc:
        assert await svc.backfill(batch=500) == SETTLE_ROWS + 3
    settled = _settled(postgres_url, ("memory_entry_postings", "memory_entry_vectors"))
    assert all(v and a and visible > 0 for v, a, visible in settled.values()), settled


async def test_an_import_into_postgres_of_a_thousand_entries_ends_vacuumed_and_analyzed(
    postgres_url: str, tmp_path: Path
) -> None:
    """``import_markdown`` replays an export Revision by Revision; past ``SETTLE_ROWS`` versions it ends with the
    upkeep too (the conformance round trip no longer imports a thousand entries, so this is its test)."""
    source = f"sqlite:///{tmp_path / 'source.db'}"
    async with open_service(source, embedding=None) as svc:
        await svc.remember(scope=SCOPE, entries=_entries(SETTLE_ROWS + 10))
        await svc.export_markdown(tmp_path / "export")
    async with open_service(postgres_url, embedding=None) as svc:
        report = await svc.import_markdown(tmp_path / "export")
        assert report.memories == 1
        hits = (await svc.search("canary promoted check 1005", scopes=[SCOPE], mode="fts")).hits
        assert hits and "check 1005." in hits[0].text
    settled = _settled(postgres_url, ("memory_entry_heads", "memory_entry_postings"))
    assert sorted(settled) == ["memory_entry_heads", "memory_entry_postings"]
    assert all(v and a and visible > 0 for v, a, visible in settled.values()), settled
