"""A team server (issue 13): two real ``memstone serve`` processes on one PostgreSQL or OceanBase (seekdb) store
serve one team.

Each process is stateless between requests: what one writes the other reads at once, a stale update through
either is a 409 (never a lost write), and concurrent writers through both leave one unbroken history. Access
control runs on both engines too (the principal store lives in the same database). Every test runs on each
engine (the ``two`` fixture is parametrized).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx2
import pytest

from memstone.testing.team import isolated_env, memstone, serve_process

SCOPE = "memstone://orgs/acme/projects/web"


@dataclass(frozen=True, slots=True)
class TwoServers:
    urls: tuple[str, str]
    token: str
    token_id: str
    store: str


@pytest.fixture(params=["postgres", "oceanbase"])
def two(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[TwoServers]:
    store = str(request.getfixturevalue(f"{request.param}_url"))  # a fresh database on that engine's test server
    env = isolated_env(tmp_path)
    made = memstone("--url", store, "token", "create", "--user", "alice", "--org", "acme",
                    "--grant", f"{SCOPE}=write", env=env, cwd=tmp_path)  # fmt: skip
    assert made.code == 0, made.stderr
    with (
        serve_process(store, env=env, cwd=tmp_path, auth="token") as a,
        serve_process(store, env=env, cwd=tmp_path, auth="token") as b,
    ):
        info = made.data["token_info"]
        assert isinstance(info, dict)
        yield TwoServers((a, b), str(made.data["token"]), str(info["token_id"]), store)


def clients(two: TwoServers) -> tuple[httpx2.AsyncClient, httpx2.AsyncClient]:
    headers = {"Authorization": f"Bearer {two.token}"}
    a, b = (httpx2.AsyncClient(base_url=u, headers=headers, timeout=60) for u in two.urls)
    return a, b


async def test_each_process_reads_what_the_other_wrote_and_a_stale_update_is_409(two: TwoServers) -> None:
    a, b = clients(two)
    async with a, b:
        made = await a.post("/api/memories", params={"scope": SCOPE}, json={"kind": "fact", "text": "We use uv."})
        assert made.status_code == 201, made.text
        entry, etag = made.json()["record"]["entry_id"], made.headers["etag"]
        seen = await b.get(f"/api/memories/{entry}")
        assert seen.status_code == 200 and seen.json()["record"]["text"] == "We use uv."
        found = await b.get("/api/memories/search", params={"q": "uv", "scope": SCOPE})
        assert [h["entry_id"] for h in found.json()["hits"]] == [entry]
        # B revises with the ETag it read; A's update based on the same ETag is now stale on its own process.
        won = await b.patch(f"/api/memories/{entry}", json={"text": "We use uv 0.9."}, headers={"If-Match": etag})
        assert won.status_code == 200, won.text
        lost = await a.patch(f"/api/memories/{entry}", json={"text": "We use pip."}, headers={"If-Match": etag})
        assert lost.status_code == 409 and lost.json()["error"]["code"] == "revision_conflict"
        assert lost.json()["current"]["text"] == "We use uv 0.9."  # the 409 carries what won
        for client in (a, b):
            chain = (await client.get(f"/api/memories/{entry}/versions")).json()["items"]
            assert [(v["version"], v["text"]) for v in chain] == [(1, "We use uv."), (2, "We use uv 0.9.")]


async def test_concurrent_writers_through_both_processes_lose_nothing(two: TwoServers) -> None:
    a, b = clients(two)
    async with a, b:
        texts = [f"Service {i} deploys from the release branch." for i in range(24)]
        answers = await asyncio.gather(
            *(
                (a if i % 2 else b).post("/api/memories", params={"scope": SCOPE}, json={"kind": "fact", "text": t})
                for i, t in enumerate(texts)
            )
        )
        assert [r.status_code for r in answers] == [201] * len(texts), [r.text for r in answers if r.status_code != 201]
        ids = {r.json()["record"]["entry_id"] for r in answers}
        revisions = sorted(r.json()["revision"]["revision"] for r in answers)
        assert revisions == list(range(1, len(texts) + 1))  # one Revision each, none skipped, none shared
        for client in (a, b):
            listed = (await client.get("/api/memories", params={"scope": SCOPE, "limit": 200})).json()
            assert {r["entry_id"] for r in listed["items"]} == ids
        # Ten updates of one entry on the same ETag, through both processes at once: one wins, nine are 409.
        entry = sorted(ids)[0]
        etag = (await a.get(f"/api/memories/{entry}")).headers["etag"]
        racing = await asyncio.gather(
            *(
                (a if i % 2 else b).patch(f"/api/memories/{entry}", json={"text": f"Racer {i}."},
                                          headers={"If-Match": etag})
                for i in range(10)
            )
        )  # fmt: skip
        assert sorted(r.status_code for r in racing) == [200] + [409] * 9
        winner = next(r.json()["record"]["text"] for r in racing if r.status_code == 200)
        chain = (await b.get(f"/api/memories/{entry}/versions")).json()["items"]
        assert [v["version"] for v in chain] == [1, 2] and chain[-1]["text"] == winner


def test_the_store_verifies_after_both_processes_wrote(two: TwoServers, tmp_path: Path) -> None:
    env = isolated_env(tmp_path, MEMSTONE_TOKEN=two.token)
    for i, url in enumerate(two.urls):
        done = memstone("--url", url, "--scope", SCOPE, "remember", "--kind", "fact", "--text", f"From server {i}.",
                        env=env, cwd=tmp_path)  # fmt: skip
        assert done.code == 0, done.data
    other = memstone("--url", two.urls[1], "--scope", SCOPE, "search", "server", env=env, cwd=tmp_path)
    assert sorted(h["text"] for h in other.data["hits"]) == ["From server 0.", "From server 1."]  # type: ignore[union-attr]
    verified = memstone("--url", two.store, "verify", env=isolated_env(tmp_path), cwd=tmp_path)
    assert verified.code == 0, verified.data
    # A revoked token is refused by both processes at their next request (the principals live in the database).
    revoked = memstone("--url", two.store, "token", "revoke", two.token_id, env=isolated_env(tmp_path), cwd=tmp_path)
    assert revoked.code == 0, revoked.data
    for url in two.urls:
        refused = memstone("--url", url, "--scope", SCOPE, "search", "server", env=env, cwd=tmp_path)
        assert (refused.code, refused.error_code) == (7, "unauthenticated")
