"""``/api/embedding/runs`` in-process (the ASGI app, local mode) on PostgreSQL: a run answers while it works, a
second start for the same org while it runs is refused with the holding run's id, progress reaches done = total, a
run whose server stopped reads failed, and malformed requests are 422 before anything starts."""

from __future__ import annotations

import asyncio
from typing import Any

from api_support import ServerFactory

from memstone.capture.store import capture_store_of
from memstone.domain.model import EntryInput
from memstone.embedding import load_model
from memstone.maintenance.embedding_runs import RECORD
from memstone.service import open_service

GLOBEX = "memstone://orgs/globex"


async def _poll(client: Any, run_id: str) -> dict[str, Any]:
    for _ in range(600):
        run: dict[str, Any] = (await client.get(f"/api/embedding/runs/{run_id}")).json()["run"]
        if run["state"] != "running":
            return run
        await asyncio.sleep(0.05)
    raise AssertionError(f"run {run_id} did not end")


async def test_one_run_per_org_while_it_runs_and_its_progress(make_server: ServerFactory, postgres_url: str) -> None:
    facts = [EntryInput(kind="fact", text=f"Meeting room {i} seats {i + 2} people.") for i in range(200)]
    async with open_service(postgres_url, embedding=load_model("hashing-32")) as svc:
        await svc.remember(None, scope=GLOBEX, entries=facts)
    server = await make_server(url=postgres_url, embedding="hashing-32")
    c = server.client
    start = {"kind": "reembed", "profile": "hashing-48", "batch": 1}
    first = await c.post("/api/embedding/runs", params={"org": "globex"}, json=start)
    assert first.status_code == 202, first.text
    run = first.json()["run"]
    assert run["state"] == "running" and run["org"] == "globex" and 1 <= run["done"] < 200, run
    # A second start for globex while the first holds its embedding lease: refused, naming the run to follow.
    second = await c.post("/api/embedding/runs", params={"org": "globex"}, json={"kind": "backfill"})
    assert second.status_code == 409 and second.json()["error"]["code"] == "maintenance_busy"
    assert run["run_id"] in second.json()["error"]["hint"]
    ended = await _poll(c, run["run_id"])
    assert (ended["state"], ended["done"], ended["total"], ended["error"]) == ("completed", 200, 200, None)
    assert ended["profile"] == "hashing-48" and ended["finished_at"]
    # The lease was released: the next start runs (nothing is missing, so it has ended by its answer).
    after = await c.post("/api/embedding/runs", params={"org": "globex"}, json={"kind": "backfill"})
    assert after.status_code == 202 and after.json()["run"]["state"] == "completed"
    assert (after.json()["run"]["done"], after.json()["run"]["profile"]) == (0, "hashing-48")
    assert {o: p.profile_id for o, p in (await server.state.service.org_profiles()).items()} == {"globex": "hashing-48"}

    # A record left running by a server that stopped (no heartbeat for a minute) reads failed, with a hint.
    store = capture_store_of(server.state.service.backend)
    left = dict(ended, run_id="erun_gone", state="running", updated_at="2020-01-01T00:00:00.000Z", finished_at=None)
    await store.put_setting(RECORD + "erun_gone", left, "2020-01-01T00:00:00.000Z")
    gone = (await c.get("/api/embedding/runs/erun_gone")).json()["run"]
    assert gone["state"] == "failed" and gone["error"]["code"] == "backend_unavailable", gone


async def test_malformed_starts_are_refused_before_anything_runs(make_server: ServerFactory, postgres_url: str) -> None:
    server = await make_server(url=postgres_url, embedding="hashing-32")
    c = server.client
    for params, body, code in (
        ({"org": "globex"}, {"kind": "reembed"}, "invalid_input"),  # no profile to migrate to
        ({"org": "globex"}, {"kind": "backfill", "profile": "hashing-48"}, "invalid_input"),
        ({"org": "globex"}, {"kind": "rebuild"}, "invalid_input"),
        ({"org": "not an org"}, {"kind": "backfill"}, "invalid_input"),
        ({"org": "globex"}, {"kind": "reembed", "profile": "nope"}, "invalid_input"),
        ({"org": "globex"}, {"kind": "reembed", "profile": "hashing-4001"}, "capability_not_supported"),
    ):
        answer = await c.post("/api/embedding/runs", params=params, json=body)
        assert answer.json()["error"]["code"] == code, (params, body, answer.text)
    assert await server.state.service.org_profiles() == {}  # nothing was recorded
    assert (await c.get("/api/embedding/runs/erun_none")).status_code == 404
    assert (await c.get("/api/embedding/runs/mrun_x")).status_code == 404  # not an embedding run id: no route
