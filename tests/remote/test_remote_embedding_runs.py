"""``reembed --org`` and ``embed --backfill --org`` through a team server (issue 13, items 4 and 6): a real
``memstone serve`` in token mode on PostgreSQL, two organizations with models of different dimensions, and the CLI
with ``--url http://…`` and a token, never the database's URL. The server runs the work; the CLI follows it.
"""

from __future__ import annotations

import asyncio
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from memstone.domain.errors import MaintenanceBusyError, NotFound
from memstone.domain.model import EntryInput
from memstone.embedding import load_model
from memstone.remote.client import RemoteClient
from memstone.service import open_service
from memstone.testing.team import MEMSTONE, Result, isolated_env, memstone, serve_process

ACME = "memstone://orgs/acme/projects/web"
GLOBEX = "memstone://orgs/globex"
ACME_FACTS = ("The nightly database backup runs at two in the morning.", "Our web frontend is written in React.")
GLOBEX_FACTS = (
    "The cafeteria serves vegetarian lunch every Friday.",
    "Security badges must be worn visibly inside the building.",
    "The quarterly sales report is due two weeks after quarter end.",
)
Cli = Callable[..., Result]


def stored(url: str, scope: str, org: str | None) -> dict[Any, Any]:
    """Every stored vector of ``scope``'s current versions, read from the database (the test's own eyes)."""

    async def read() -> dict[Any, Any]:
        async with open_service(url, embedding=None) as svc:
            head = await svc.resolve(scope)
            assert head is not None
            ids = tuple(v.entry_version_id for v in await svc.entries(head))
            return dict(await svc.backend.stored_vectors(ids, org=org))  # type: ignore[attr-defined]

    return asyncio.run(read())


def lease(url: str, key: str, run_id: str, *, take: bool) -> str | None:
    """Take (or drop) an embedding lease as another server's run would."""

    async def go() -> str | None:
        async with open_service(url, embedding=None) as svc:
            backend: Any = svc.backend
            if take:
                return await backend.lease_maintenance(key, run_id, "elsewhere:1", 60.0)  # type: ignore[no-any-return]
            await backend.release_maintenance(key, run_id)
            return None

    return asyncio.run(go())


def token(local: Cli, user: str, org: str, grant: str) -> str:
    made = local("token", "create", "--user", user, "--org", org, "--grant", grant)
    assert made.code == 0, made.stderr
    return str(made.data["token"])


def test_reembed_and_backfill_one_org_through_the_team_server(postgres_url: str, tmp_path: Path) -> None:
    env = isolated_env(tmp_path, MEMSTONE_EMBEDDING="hashing-32")

    def local(*args: str, **extra: str) -> Result:
        return memstone("--url", postgres_url, *args, env=env | extra, cwd=tmp_path)

    for scope, facts in ((ACME, ACME_FACTS), (GLOBEX, GLOBEX_FACTS)):
        for text in facts:
            assert local("--scope", scope, "remember", "--kind", "fact", "--text", text).code == 0
    # Two organizations with models of different dimensions: acme keeps a 64-d profile of its own.
    assert local("reembed", "--org", "acme", "--profile", "hashing-64").data["embedded"] == len(ACME_FACTS)
    admin = token(local, "gina", "globex", "*=admin")
    writer = token(local, "walt", "globex", f"{GLOBEX}=write")
    acme_admin = token(local, "ada", "acme", "*=admin")
    acme_before, store_before = stored(postgres_url, ACME, "acme"), stored(postgres_url, GLOBEX, None)
    assert len(acme_before) == len(ACME_FACTS) and len(store_before) == len(GLOBEX_FACTS)

    with serve_process(postgres_url, env=env, cwd=tmp_path, auth="token", extra=("--no-maintenance",)) as url:

        def remote(tok: str, *args: str) -> Result:
            return memstone("--url", url, *args, env=env | {"MEMSTONE_TOKEN": tok}, cwd=tmp_path)

        # Not an admin of globex's every scope: refused as another admin endpoint (purge) refuses it.
        entry = str(remote(writer, "--scope", GLOBEX, "search", "badges").data["hits"][0]["entry_id"])  # type: ignore[index]
        purge = remote(writer, "purge", entry, "--reason", "test", "--yes")
        for who in (writer, acme_admin):
            refused = remote(who, "reembed", "--org", "globex", "--profile", "hashing-48")
            assert (refused.code, refused.error_code) == (purge.code, purge.error_code) == (7, "forbidden"), (
                refused.data
            )
        assert remote(acme_admin, "embed", "--backfill").error_code == "forbidden"  # the whole store: operator only

        # The library's refusals, with its codes and exit codes, before anything changes.
        for profile in ("no-such-model", "hashing-5000"):
            here = local("reembed", "--org", "globex", "--profile", profile)
            there = remote(admin, "reembed", "--org", "globex", "--profile", profile)
            assert (there.code, there.error_code) == (here.code, here.error_code), profile
            assert here.error_code in ("invalid_input", "capability_not_supported"), here.data

        # One run per org across server processes: a run holding globex's embedding lease refuses a second start.
        key = "embedding:memstone://orgs/globex"
        assert lease(postgres_url, key, "erun_elsewhere", take=True) is None
        busy = remote(admin, "reembed", "--org", "globex", "--profile", "hashing-48")
        assert busy.error_code == "maintenance_busy" and "erun_elsewhere" in str(busy.data), busy.data
        assert busy.code == 3  # a conflict, as a maintenance run that holds a scope
        lease(postgres_url, key, "erun_elsewhere", take=False)
        assert stored(postgres_url, GLOBEX, None) == store_before  # nothing moved so far

        # The migration, run by the server; the CLI follows it to the end.
        done = remote(admin, "reembed", "--org", "GLOBEX", "--profile", "hashing-48")
        assert done.code == 0, done.stderr
        run_id = done.data.pop("run_id")
        assert done.data == {"embedded": len(GLOBEX_FACTS), "profile": "hashing-48", "org": "globex"}

        async def record() -> dict[str, Any]:
            async with RemoteClient(url, token=admin) as client:
                return await client.json("GET", f"/api/embedding/runs/{run_id}")

        run = asyncio.run(record())["run"]
        assert (run["state"], run["done"], run["total"], run["error"]) == ("completed", 3, 3, None)
        assert remote(acme_admin, "--scope", ACME, "search", "x").code == 0

        async def hidden() -> None:
            async with RemoteClient(url, token=acme_admin) as client:
                await client.json("GET", f"/api/embedding/runs/{run_id}")

        with pytest.raises(NotFound):  # another org's admin: no such run
            asyncio.run(hidden())

        # acme's vectors are exactly as they were; globex's moved to its own 48-d table.
        assert stored(postgres_url, ACME, "acme") == acme_before
        moved = stored(postgres_url, GLOBEX, "globex")
        assert len(moved) == len(GLOBEX_FACTS) and {len(c[0]) for c in moved.values()} == {48}
        assert not stored(postgres_url, GLOBEX, None)

        # Both orgs still search correctly by vector, each with its own model, through the server.
        for tok, scope, query, want in (
            (acme_admin, ACME, ACME_FACTS[0], ACME_FACTS[0]),
            (admin, GLOBEX, GLOBEX_FACTS[1], GLOBEX_FACTS[1]),
        ):
            found = remote(tok, "--scope", scope, "search", query, "--mode", "vector")
            assert found.code == 0 and found.data["mode"] == "vector", found.data
            assert found.data["hits"][0]["text"] == want  # type: ignore[index]

        # Writes without a model leave a gap in globex; the server's backfill fills it with globex's model, and the
        # command shows its progress as the local one does (one batch per entry here).
        for text in ("Visitors sign in at reception.", "The library closes at six."):
            gap = local("--scope", GLOBEX, "remember", "--kind", "fact", "--text", text, MEMSTONE_EMBEDDING="none")
            assert gap.code == 0, gap.stderr
        human = subprocess.run(
            [MEMSTONE, "--url", url, "embed", "--backfill", "--org", "globex", "--batch", "1"],
            env=env | {"MEMSTONE_TOKEN": admin}, cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        assert human.returncode == 0, human.stderr
        assert human.stdout.strip() == "embedded 2 entries of org globex with hashing-48"
        assert "embedded: 2/2" in human.stderr
        again = remote(admin, "embed", "--backfill", "--org", "globex")
        assert again.data["embedded"] == 0  # nothing left: a rerun is a no-op
        found = remote(admin, "--scope", GLOBEX, "search", "Visitors sign in at reception.", "--mode", "vector")
        assert found.data["hits"][0]["text"] == "Visitors sign in at reception."  # type: ignore[index]
        assert stored(postgres_url, ACME, "acme") == acme_before
    assert local("verify").data["ok"] is True


def test_one_run_per_org_across_two_server_processes(postgres_url: str, tmp_path: Path) -> None:
    """Two ``memstone serve`` on one PostgreSQL: a run started on one holds the org for both, and the other answers
    for its progress from the store."""

    async def seed() -> None:
        async with open_service(postgres_url, embedding=load_model("hashing-32")) as svc:
            facts = [EntryInput(kind="fact", text=f"Desk {i} is on floor {i % 7}.") for i in range(300)]
            await svc.remember(None, scope=GLOBEX, entries=facts)

    asyncio.run(seed())
    env = isolated_env(tmp_path, MEMSTONE_EMBEDDING="hashing-32")
    with (
        serve_process(postgres_url, env=env, cwd=tmp_path, extra=("--no-maintenance",)) as one,
        serve_process(postgres_url, env=env, cwd=tmp_path, extra=("--no-maintenance",)) as two,
    ):

        async def race() -> tuple[dict[str, Any], Exception, dict[str, Any]]:
            async with RemoteClient(one) as a, RemoteClient(two) as b:
                body = {"kind": "reembed", "profile": "hashing-48", "batch": 1}
                started = (await a.json("POST", "/api/embedding/runs", params={"org": "globex"}, json=body))["run"]
                try:
                    await b.json("POST", "/api/embedding/runs", params={"org": "globex"}, json={"kind": "backfill"})
                    raise AssertionError("the second server started a second run of globex")
                except MaintenanceBusyError as exc:
                    refused: Exception = exc
                seen = (await b.json("GET", f"/api/embedding/runs/{started['run_id']}"))["run"]
                while seen["state"] == "running":
                    await asyncio.sleep(0.2)
                    seen = (await b.json("GET", f"/api/embedding/runs/{started['run_id']}"))["run"]
                return started, refused, seen

        started, refused, ended = asyncio.run(race())
        assert started["state"] == "running" and started["done"] < 300, started
        assert started["run_id"] in str(refused)  # names the run holding the org, started on the other server
        assert (ended["state"], ended["done"], ended["total"]) == ("completed", 300, 300)
        assert ended["holder"] == started["holder"]  # carried out by the first server, answered by the second
