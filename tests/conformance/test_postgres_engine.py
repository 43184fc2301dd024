"""What the PostgreSQL engine promises beyond the shared suite: per-Memory locks (no store-wide lock), opening a new
database from several processes at once, a read never creating a store, and the ``postgres://`` alias."""

from __future__ import annotations

import asyncio
import json

import psycopg
import pytest

from memstone import EntryInput, open_service
from memstone.backends import open_store
from memstone.backends.postgres import schema as pg_schema
from memstone.domain.errors import NotFound


def _tables(url: str) -> list[str]:
    with psycopg.connect(url) as conn:
        rows = conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY 1").fetchall()
    return [r[0] for r in rows]


async def test_a_read_only_open_of_an_empty_database_creates_nothing(postgres_url: str) -> None:
    with pytest.raises(NotFound, match="no memstone store"):
        await open_store(postgres_url, create=False)
    assert _tables(postgres_url) == []


async def test_two_opens_of_a_new_database_at_once_both_succeed(postgres_url: str) -> None:
    first, second = await asyncio.gather(open_store(postgres_url), open_store(postgres_url))
    try:
        assert {first.state.schema_version, second.state.schema_version} == {pg_schema.LATEST}
        migrated = sorted(first.state.applied_migrations + second.state.applied_migrations)
        assert migrated == list(range(1, pg_schema.LATEST + 1))  # exactly one migrated
    finally:
        await first.aclose()
        await second.aclose()


async def test_a_writer_of_one_memory_never_blocks_a_writer_of_another(postgres_url: str) -> None:
    async with open_service(postgres_url, embedding=None) as svc:
        a = await svc.remember(None, entries=[EntryInput(kind="fact", text="Memory A starts here.")])
        b = await svc.remember(None, entries=[EntryInput(kind="fact", text="Memory B starts here.")])
        assert a is not None and b is not None
        # Another session holds Memory A's write lock, as a commit in progress would.
        with psycopg.connect(postgres_url) as holder:
            holder.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (f"memory:{a.memory_id}",))
            blocked = asyncio.create_task(
                svc.remember(a.ref, entries=[EntryInput(kind="fact", text="A second fact for A.")])
            )
            b2 = await asyncio.wait_for(
                svc.remember(b.ref, entries=[EntryInput(kind="fact", text="A second fact for B.")]), timeout=30
            )
            assert b2 is not None and b2.revision == 2  # B committed while A's lock was held
            await asyncio.sleep(0.5)
            assert not blocked.done()  # A waits for its lock
            holder.rollback()  # releases the transaction-scoped lock
        a2 = await asyncio.wait_for(blocked, timeout=30)
        assert a2 is not None and a2.revision == 2
        assert (await svc.verify()).ok


async def test_the_postgres_scheme_is_an_alias(postgres_url: str) -> None:
    alias = "postgres://" + postgres_url.partition("://")[2]
    async with open_service(alias, embedding=None) as svc:
        rev = await svc.remember(None, entries=[EntryInput(kind="fact", text="Written through the alias.")])
        assert rev is not None
    async with open_service(postgres_url, embedding=None) as svc:
        assert (await svc.head(rev.memory_id)).revision == 1


def test_the_cli_writes_and_reads_a_postgres_store(postgres_url: str) -> None:
    from click.testing import CliRunner

    from memstone.cli.main import cli

    run = CliRunner()
    wrote = run.invoke(
        cli, ["--url", postgres_url, "remember", "--kind", "fact", "--text", "The CLI writes to PostgreSQL."]
    )
    assert wrote.exit_code == 0, wrote.stderr
    listed = run.invoke(cli, ["--url", postgres_url, "list", "--json"])
    assert listed.exit_code == 0, listed.stderr
    assert "The CLI writes to PostgreSQL." in listed.stdout


def test_a_server_that_is_down_is_named_at_once_with_the_reason() -> None:
    from click.testing import CliRunner

    from memstone.cli.main import cli

    result = CliRunner().invoke(cli, ["--url", "postgresql://memstone@127.0.0.1:1/x", "list", "--json"])
    assert result.exit_code != 0
    error = json.loads(result.stdout)["error"]
    assert error["code"] == "backend_unavailable"
    assert "cannot reach PostgreSQL at 127.0.0.1:1/x" in error["message"] and "refused" in error["message"]
