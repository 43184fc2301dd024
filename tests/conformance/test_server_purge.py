"""Purge on the server engines (issue 12): the purged words are in no row of any table (authority, sources,
projections, full-text postings, vectors), on PostgreSQL in no table file either, ``verify`` is clean, the chain
intact and the purge recorded. Before this, both engines refused purge as unsupported."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import psycopg

from memstone import EntryInput, open_service
from memstone.domain.model import EntryPatch
from memstone.domain.purge import PURGED_TEXT
from memstone.embedding.hashing import HashingEmbedder
from memstone.testing.servers import oceanbase_connect_args

SCOPE = "memstone://orgs/acme/projects/web"
SECRET_V1 = "Customer Qzxwvjoy card 4111 belongs to qzxwvjoy-ltd"
SECRET_V2 = "Customer Qzxwvjoy moved; card belongs to Qzxwvkappa"
WORDS = ("qzxwvjoy", "qzxwvkappa", "qzxwvtitle", "qzxwvtag")


async def _purge_scenario(url: str, found_before: Callable[[], list[str]]) -> str:
    """Write, revise, purge; check what the service shows. Returns the purged entry's id."""
    async with open_service(url, embedding=HashingEmbedder(dimension=64), author="alice") as svc:
        kept = await svc.remember(scope=SCOPE, entries=[EntryInput(kind="fact", text="We deploy with uv.")])
        assert kept is not None
        evidence = await svc.record_source("note", "The user said: " + SECRET_V1)
        first = await svc.remember(
            scope=SCOPE,
            sources=[evidence],
            entries=[EntryInput(kind="fact", text=SECRET_V1, title="Qzxwvtitle", tags=["qzxwvtag"])],
        )
        assert first is not None
        eid = first.changes[0].entry_id
        await svc.update(eid, EntryPatch(text=SECRET_V2))  # v1 goes to the archive projection
        await svc.backfill()
        assert [h.entry_id for h in (await svc.search("qzxwvkappa", scopes=[SCOPE], mode="fts")).hits] == [eid]
        assert found_before(), "the test must see the words before the purge"

        report = await svc.purge(eid, reason="customer data written by mistake")

        assert [t.version for t in report.tombstones] == [1, 2]
        assert [i.version.text for i in await svc.history(eid)] == [PURGED_TEXT, PURGED_TEXT]
        assert [(t.version, t.reason, t.author) for t in await svc.tombstones(eid)] == [
            (1, "customer data written by mistake", "alice"),
            (2, "customer data written by mistake", "alice"),
        ]
        report_ok = await svc.verify()
        assert report_ok.ok, report_ok.to_dict()
        assert [s.content for s in await svc.sources([evidence.source_id])] == [PURGED_TEXT]
        for word in WORDS:
            assert (await svc.search(word, scopes=[SCOPE], mode="fts")).hits == ()
        hits = await svc.search("deploy uv", scopes=[SCOPE], mode="fts")
        assert [h.entry_id for h in hits.hits] == [kept.changes[0].entry_id]
    async with open_service(url, embedding=None) as svc:
        assert (await svc.verify()).ok
        assert len(await svc.tombstones(eid)) == 2
    return eid


def _pg_rows_with_words(url: str) -> list[str]:
    found = []
    with psycopg.connect(url) as conn:
        tables = [r[0] for r in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")]
        for table in tables:
            for (row,) in conn.execute(f'SELECT t::text FROM "{table}" t'):
                found += [f"{table}: {w}" for w in WORDS if w in row.lower()]
    return found


def _pg_files_with_words(url: str) -> list[str]:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CHECKPOINT")  # what the server holds in memory is written to its files first
        data = conn.execute("SHOW data_directory").fetchone()
        oid = conn.execute("SELECT oid FROM pg_database WHERE datname = current_database()").fetchone()
    assert data is not None and oid is not None
    found = []
    for path in sorted((Path(data[0]) / "base" / str(oid[0])).iterdir()):
        if path.is_file():
            blob = path.read_bytes().lower()
            found += [f"{path.name}: {w}" for w in WORDS if w.encode() in blob]
    return found


async def test_a_purge_on_postgresql_leaves_the_words_in_no_row_and_no_table_file(postgres_url: str) -> None:
    await _purge_scenario(
        postgres_url, lambda: _pg_rows_with_words(postgres_url) and _pg_files_with_words(postgres_url)
    )
    assert _pg_rows_with_words(postgres_url) == []
    assert _pg_files_with_words(postgres_url) == []


def _ob_rows_with_words(url: str) -> list[str]:
    import pymysql

    conn = pymysql.connect(**oceanbase_connect_args(url))
    found = []
    try:
        with conn.cursor() as cur:
            cur.execute("SHOW TABLES")
            for (table,) in cur.fetchall():
                cur.execute(f"SELECT * FROM `{table}`")
                for row in cur.fetchall():
                    text = " ".join(str(v) for v in row).lower()
                    found += [f"{table}: {w}" for w in WORDS if w in text]
    finally:
        conn.close()
    return found


async def test_a_purge_on_oceanbase_leaves_the_words_in_no_row(oceanbase_url: str) -> None:
    await _purge_scenario(oceanbase_url, lambda: _ob_rows_with_words(oceanbase_url))
    assert _ob_rows_with_words(oceanbase_url) == []
