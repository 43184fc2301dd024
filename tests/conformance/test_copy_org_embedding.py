"""``memstone copy`` carries the organizations' own embedding profiles and their vectors (issue 13, items 5 and 6).

PostgreSQL → PostgreSQL: the target records each org's profile by its own org model migration (which creates the
vector table of that dimension) and takes the org's stored vectors as they are; both orgs then search with vectors
on the target, and a rerun writes nothing. A target whose org keeps another profile is refused before anything is
written; one with the same profile takes the vectors. PostgreSQL → SQLite (no per-org tables) copies the entries,
says which orgs' vectors stay behind, and a backfill with the store's model makes them searchable there.
Before, the copy carried no org profile and no org vector, and said nothing about them.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from memstone import EntryInput, open_service
from memstone.backends import open_store
from memstone.cli.main import cli
from memstone.domain.errors import ProfileMismatchError
from memstone.domain.ids import EntryVersionId
from memstone.embedding import load_model
from memstone.ports import MemoriesQuery
from memstone.service.copy import CopyReport, copy_urls
from memstone.testing import servers

ACME = "memstone://orgs/acme/projects/web"
GLOBEX = "memstone://orgs/globex"
ME = "memstone://users/alice"
STORE, ACME_MODEL, GLOBEX_MODEL = "hashing-32", "hashing-48", "hashing-64"
FACTS = {
    ACME: ("The nightly database backup runs at two.", "Our web frontend is written in React."),
    GLOBEX: ("The cafeteria serves vegetarian lunch on Friday.", "Security badges are worn inside the building."),
    ME: ("I prefer tea over coffee.",),
}
QUERIES = {ACME: "database backup", GLOBEX: "vegetarian lunch", ME: "tea or coffee"}


@pytest.fixture
def second_postgres_url(postgres_server_url: str) -> Iterator[str]:
    with servers.postgres_database(postgres_server_url) as url:
        yield url


class _Stop(Exception):
    pass


async def _seed(url: str, *, migrate: bool = True) -> dict[str, tuple[EntryVersionId, ...]]:
    """Two orgs and a user scope; with ``migrate`` acme and globex then move to their own profiles (48-d, 64-d)."""
    out: dict[str, tuple[EntryVersionId, ...]] = {}
    async with open_service(url, embedding=load_model(STORE)) as svc:
        for scope, facts in FACTS.items():
            rev = await svc.remember(scope=scope, entries=[EntryInput(kind="fact", text=t) for t in facts])
            assert rev is not None
            out[scope] = tuple(v.entry_version_id for v in await svc.entries(rev))
        if migrate:
            await _migrate(url)
    return out


async def _migrate(url: str) -> None:
    async with open_service(url, embedding=load_model(STORE)) as svc:
        await svc.reembed(load_model(ACME_MODEL), org="acme")
        await svc.reembed(load_model(GLOBEX_MODEL), org="globex")


async def _vectors(url: str, ids: dict[str, tuple[EntryVersionId, ...]]) -> dict[str, Any]:
    store = (await open_store(url, create=False)).memory
    try:
        orgs = {ACME: "acme", GLOBEX: "globex", ME: None}
        return {s: await store.stored_vectors(ids[s], org=orgs[s]) for s in ids}  # type: ignore[attr-defined]
    finally:
        await store.aclose()


async def _copy(src_url: str, dst_url: str) -> CopyReport:
    """What ``memstone copy`` runs; the source verifies too."""
    report, source_ok = await copy_urls(src_url, dst_url)
    assert source_ok
    return report


async def _searches(url: str, scopes: Sequence[str]) -> None:
    async with open_service(url, embedding=load_model(STORE)) as svc:
        for scope in scopes:
            found = await svc.search(QUERIES[scope], scopes=[scope], mode="vector")
            assert found.mode == "vector", (scope, found.fallback_reason)
            assert found.hits[0].text == FACTS[scope][0], scope
        assert (await svc.verify()).ok


async def test_postgres_to_postgres_carries_both_org_profiles_and_their_vectors(
    postgres_url: str, second_postgres_url: str
) -> None:
    ids = await _seed(postgres_url)
    before = await _vectors(postgres_url, ids)
    dims = {s: {len(w) for chunks in v.values() for w in chunks} for s, v in before.items()}
    assert dims == {ACME: {48}, GLOBEX: {64}, ME: {32}}

    def stop_after_one(phase: str, done: int, total: int) -> None:
        if phase == "revisions" and done >= 1:
            raise _Stop

    with pytest.raises(_Stop):  # interrupted after the org profiles and the first Memory were written
        await copy_urls(postgres_url, second_postgres_url, progress=stop_after_one)
    report = await _copy(postgres_url, second_postgres_url)
    assert report.verify_ok, report.damage
    assert (report.revisions_present, report.revisions_written) == (1, 2)
    assert report.vectors == 5 and report.notes == ()  # every vector carried, nothing left to embed
    async with open_service(second_postgres_url, embedding=None) as dst:
        profiles = await dst.org_profiles()
        assert {o: p.profile_id for o, p in profiles.items()} == {"acme": ACME_MODEL, "globex": GLOBEX_MODEL}
        assert await dst.vector_backlog() == 0
    assert await _vectors(second_postgres_url, ids) == before  # the same float32 values, in the org's tables
    await _searches(second_postgres_url, [ACME, GLOBEX, ME])

    again = await _copy(postgres_url, second_postgres_url)  # a rerun writes nothing
    assert (again.revisions_written, again.vectors, again.notes, again.verify_ok) == (0, 0, (), True)
    assert await _vectors(second_postgres_url, ids) == before
    async with open_service(postgres_url, embedding=None) as src:
        assert (await src.verify()).ok


async def test_an_org_with_another_profile_in_the_target_is_refused_and_the_same_profile_takes_the_vectors(
    postgres_url: str, second_postgres_url: str
) -> None:
    ids = await _seed(postgres_url)
    await _choose(second_postgres_url, "acme", "hashing-40")  # acme chose another profile in the target
    with pytest.raises(ProfileMismatchError, match=r"organization acme.*hashing-40.*hashing-48"):
        await _copy(postgres_url, second_postgres_url)
    store = (await open_store(second_postgres_url, create=False)).memory
    try:
        assert not await store.read(MemoriesQuery())  # refused before anything was written
        assert (await store.org_profiles())["acme"].profile_id == "hashing-40"
    finally:
        await store.aclose()
    await _choose(second_postgres_url, "acme", ACME_MODEL)  # now the source's profile
    report = await _copy(postgres_url, second_postgres_url)
    assert report.verify_ok and report.vectors == 5 and report.notes == ()
    assert await _vectors(second_postgres_url, ids) == await _vectors(postgres_url, ids)
    await _searches(second_postgres_url, [ACME, GLOBEX])


async def _choose(url: str, org: str, model: str) -> None:
    async with open_service(url, embedding=load_model(STORE)) as svc:
        await svc.reembed(load_model(model), org=org)


def test_the_cli_refuses_an_org_with_another_profile_in_the_target(postgres_url: str, second_postgres_url: str) -> None:
    asyncio.run(_seed(postgres_url))
    asyncio.run(_choose(second_postgres_url, "globex", "hashing-40"))
    result = CliRunner().invoke(cli, ["copy", postgres_url, second_postgres_url, "--json"])
    assert result.exit_code == 2, result.output
    error = json.loads(result.output)["error"]
    assert error["code"] == "profile_mismatch" and "organization globex" in error["message"]
    assert "reembed --org globex --profile hashing-64" in error["hint"]


async def test_an_org_that_chose_its_profile_after_a_first_copy_moves_the_target_on_the_next(
    postgres_url: str, second_postgres_url: str
) -> None:
    ids = await _seed(postgres_url, migrate=False)
    first = await _copy(postgres_url, second_postgres_url)  # every Memory on the store's profile
    assert first.vectors == 5 and first.notes == ()
    await _migrate(postgres_url)
    # The target holds acme's and globex's Memories on the store's profile: its org migration is staged with the
    # source's stored vectors, so they arrive as they are, in the tables of 48 and 64 dimensions.
    report = await _copy(postgres_url, second_postgres_url)
    assert report.verify_ok and report.revisions_written == 0 and report.notes == ()
    assert await _vectors(second_postgres_url, ids) == await _vectors(postgres_url, ids)
    await _searches(second_postgres_url, [ACME, GLOBEX, ME])


async def test_postgres_to_sqlite_leaves_the_org_vectors_for_backfill_and_says_so(
    postgres_url: str, tmp_path: Path
) -> None:
    ids = await _seed(postgres_url)
    target = f"sqlite:///{tmp_path / 'laptop.db'}"
    report = await _copy(postgres_url, target)
    assert report.verify_ok, report.damage
    assert report.vectors == 1  # the user scope's, on the store's profile; never an org's under the wrong one
    notes = "\n".join(report.notes)
    assert "2 entries of organization acme: vectors not carried, its own profile hashing-48 (48-d)" in notes
    assert "2 entries of organization globex" in notes and "`memstone embed --backfill`" in notes
    assert "4 entries have no vector in the target" in notes
    async with open_service(target, embedding=None) as dst:
        assert await dst.org_profiles() == {}
        stored = await dst.backend.stored_vectors(ids[ACME] + ids[GLOBEX])  # type: ignore[attr-defined]
        assert stored == {}
    async with open_service(target, embedding=load_model(STORE)) as dst:
        assert await dst.backfill() == 4  # with the store's model
    await _searches(target, [ACME, GLOBEX, ME])
    again = await _copy(postgres_url, target)
    assert (again.revisions_written, again.vectors) == (0, 0)
