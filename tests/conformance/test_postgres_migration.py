"""A PostgreSQL store at schema 5 (postings keyed by two text ids) opens at the latest schema: migration 6 keys the
postings by the head row's ``projection_id``, and search, ``verify`` and later writes go on as before; migration 7
then sets the new posting table's autovacuum insert threshold (issue 13)."""

from __future__ import annotations

import asyncio
import json

import psycopg

from memstone import EntryInput, open_service
from memstone.backends.postgres import schema as pg_schema
from memstone.domain.model import ArtifactRef

# The posting table and its term index as migration 1 made them (unchanged up to schema 5), cut from its DDL.
V5_POSTINGS = pg_schema.BASE[
    pg_schema.BASE.index("CREATE TABLE IF NOT EXISTS memory_entry_postings (") : pg_schema.BASE.index(
        "CREATE TABLE IF NOT EXISTS memory_fts_stats"
    )
]
# A store made before migration 6: the same postings, keyed by (memory_artifact_id, entry_id) again.
TO_SCHEMA_5 = f"""
CREATE TEMP TABLE kept AS SELECT h.memory_artifact_id, h.entry_id, p.term, p.tf, p.dl
    FROM memory_entry_postings p JOIN memory_entry_heads h ON h.projection_id = p.projection_id;
DROP TABLE memory_entry_postings;
{V5_POSTINGS}
INSERT INTO memory_entry_postings (memory_artifact_id, entry_id, term, tf, dl) SELECT * FROM kept;
UPDATE store_meta SET value = '5' WHERE key = 'schema_version';
"""


def _columns(url: str) -> list[str]:
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_name = 'memory_entry_postings' "
            "ORDER BY ordinal_position"
        ).fetchall()
    return [r[0] for r in rows]


def _autovacuum(url: str) -> list[str]:
    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT reloptions FROM pg_class WHERE relname = 'memory_entry_postings'").fetchone()
    return list(row[0] or []) if row else []


async def test_a_store_at_schema_5_migrates_to_postings_by_projection_id(postgres_url: str) -> None:
    assert pg_schema.LATEST == 7
    async with open_service(postgres_url, embedding=None) as svc:
        rev = await svc.remember(
            None,
            entries=[EntryInput(kind="fact", text=f"Harbour crane number {i} lifts containers.") for i in range(8)],
        )
        assert rev is not None
        rev = await svc.forget(rev.ref, entries=[rev.changes[0].entry_id])  # a row dropped from the head too
        before = await svc.search("crane containers", memories=[rev.ref], mode="fts", limit=20)
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(TO_SCHEMA_5)
    assert _columns(postgres_url)[:2] == ["memory_artifact_id", "entry_id"]

    async with open_service(postgres_url, embedding=None) as svc:
        assert svc.backend.state.applied_migrations == (6, 7)
        assert svc.backend.state.schema_version == 7
        assert _columns(postgres_url) == ["projection_id", "term", "tf", "dl"]
        assert _autovacuum(postgres_url) == ["autovacuum_vacuum_insert_scale_factor=0.02"]  # migration 7, new table
        after = await svc.search("crane containers", memories=[rev.ref], mode="fts", limit=20)
        assert [(h.entry_id, round(h.score, 9)) for h in after.hits] == [
            (h.entry_id, round(h.score, 9)) for h in before.hits
        ]
        assert len(after.hits) == len(before.hits) > 0
        assert (await svc.verify()).ok
        later = await svc.remember(rev.ref, entries=[EntryInput(kind="fact", text="A crane added after migrating.")])
        assert later is not None
        found = await svc.search("crane", memories=[later.ref], mode="fts", limit=20)
        assert len(found.hits) == len(before.hits) + 1
        assert (await svc.verify()).ok


def test_memstone_migrate_brings_a_schema_5_store_to_the_latest(postgres_url: str) -> None:
    from click.testing import CliRunner

    from memstone.cli.main import cli

    async def write() -> ArtifactRef:
        async with open_service(postgres_url, embedding=None) as svc:
            rev = await svc.remember(None, entries=[EntryInput(kind="fact", text="Migrate me with the CLI.")])
            assert rev is not None
            return rev.ref

    async def check(ref: ArtifactRef) -> None:
        async with open_service(postgres_url, embedding=None) as svc:
            assert svc.backend.state.applied_migrations == ()
            assert len((await svc.search("migrate", memories=[ref], mode="fts")).hits) == 1
            assert (await svc.verify()).ok

    ref = asyncio.run(write())
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(TO_SCHEMA_5)
    migrated = CliRunner().invoke(cli, ["--url", postgres_url, "migrate", "--json"])
    assert migrated.exit_code == 0, migrated.stderr
    assert json.loads(migrated.stdout) == {"schema_version": 7, "applied": [6, 7]}
    assert _columns(postgres_url) == ["projection_id", "term", "tf", "dl"]
    asyncio.run(check(ref))
