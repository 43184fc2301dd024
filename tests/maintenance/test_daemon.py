"""The maintenance daemon (issue #14, item 7): due-time gate per scope, storage upkeep, the persisted queue,
health (endpoint, the record in the store, doctor, maintenance status), a loop that cannot continue exits
non-zero, SIGTERM stops it cleanly. Real store and processes; the model is a fake HTTP server at the process
edge."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from maintenance_support import DIM, fake_model_server

import memstone
from memstone import EntryInput, MemoryService
from memstone.embedding import OpenAICompatibleEmbedder
from memstone.maintenance import runs
from memstone.maintenance.daemon import Daemon, DaemonSettings, daemon_records
from memstone.maintenance.queue import enqueue

WEB = "memstone://orgs/acme/projects/web"
API = "memstone://orgs/acme/projects/api"
GONE = "memstone://orgs/acme/projects/gone"


async def write(svc: MemoryService, scope: str, *texts: str) -> None:
    for t in texts:
        await svc.remember(scope=scope, entries=[EntryInput(kind="convention", text=t)])


async def test_one_pass_dry_runs_a_scope_over_its_threshold_carries_out_requests_and_skips_empty_ones(
    svc: MemoryService, tmp_path: Path
) -> None:
    await write(svc, WEB, "Deploy with uv.", "Lint with ruff.", "Pin every dependency.")
    await write(svc, API, "Serve with uvicorn.")
    await write(svc, GONE, "Temporary note.")
    head = await svc.resolve(GONE)
    assert head is not None
    await svc.forget(head, entries=[v.entry_id for v in await svc.entries(head)])
    request = await enqueue(svc, scope=API, mode="apply")
    daemon = Daemon(svc, DaemonSettings(threshold=3, once=True))
    assert await daemon.run(asyncio.Event()) == 0
    (web_run,) = await runs(svc, scope=WEB)
    assert web_run.mode == "DRY_RUN" and web_run.status == "COMPLETED"  # 3 writes since no run: due
    (api_run,) = await runs(svc, scope=API)
    assert api_run.run_id == request.run_id and api_run.status == "COMPLETED"  # the queued request, carried out
    assert await runs(svc, scope=GONE) == []
    (record,) = await daemon_records(svc)  # the health record lives in the store itself
    assert record["status"] == "stopped" and record["daemon_id"] == daemon.daemon_id
    loops = {x["name"]: x for x in record["loops"]}  # type: ignore[attr-defined]
    pairs = [f"{kind} {scope}" for scope in (WEB, API) for kind in ("embedding", "maintenance")]
    # a pair per non-empty scope (GONE, emptied, has none), the storage loop and the Memories outside a scope
    assert sorted(loops) == sorted(["storage", "embedding (no scope)", *pairs])
    assert loops[f"embedding {WEB}"]["last_action"] == "no embedding model: nothing to embed"
    assert "queued run" in loops[f"maintenance {API}"]["last_action"]
    assert "dry run" in loops[f"maintenance {WEB}"]["last_action"]
    again = Daemon(svc, DaemonSettings(threshold=3, once=True))
    assert await again.run(asyncio.Event()) == 0
    assert len(await runs(svc, scope=WEB)) == 1  # the dry run reset the counter: nothing is due now
    latest = next(r for r in await daemon_records(svc) if r["daemon_id"] == again.daemon_id)
    actions = {x["name"]: x["last_action"] for x in latest["loops"]}  # type: ignore[attr-defined]
    assert actions[f"maintenance {WEB}"] == "nothing due"


async def test_two_daemons_on_one_store_embed_each_scope_once_and_the_second_finds_the_lease_held(
    db_url: str,
) -> None:
    async with memstone.open_service(db_url, embedding=None) as plain:  # the hooks write without a model
        await write(plain, WEB, "Deploy with uv.", "Lint with ruff.", "Pin every dependency.")
        await write(plain, API, "Serve with uvicorn.", "Log as JSON.")
        await write(plain, GONE, "Temporary note.")
        head = await plain.resolve(GONE)
        assert head is not None
        await plain.forget(head, entries=[v.entry_id for v in await plain.entries(head)])
    with fake_model_server(hold=True) as fake:  # the first daemon's embedding waits at the model
        model = OpenAICompatibleEmbedder(fake.url, "fake", DIM)
        cfg = DaemonSettings(once=True, threshold=10**6)
        async with (
            memstone.open_service(db_url, embedding=model) as one,
            memstone.open_service(db_url, embedding=model) as two,
        ):
            first = Daemon(one, cfg)
            running = asyncio.create_task(first.run(asyncio.Event()))
            deadline = time.monotonic() + 30
            while fake.requests < 2 and time.monotonic() < deadline:  # both scopes' embeddings are at the model
                await asyncio.sleep(0.05)
            second = Daemon(two, cfg)
            assert await asyncio.wait_for(second.run(asyncio.Event()), timeout=30) == 0
            fake.release.set()
            assert await asyncio.wait_for(running, timeout=30) == 0
            for scope in (WEB, API):
                held = second.loops[f"embedding {scope}"].last_action
                assert held == f"held by embed_{first.daemon_id}: its daemon embeds this scope", held
            assert first.loops[f"embedding {WEB}"].last_action == "embedded 3 of 3 entries without a vector"
            assert first.loops[f"embedding {API}"].last_action == "embedded 2 of 2 entries without a vector"
            assert not [name for name in {*first.loops, *second.loops} if GONE in name]  # an empty scope: no loops
            assert fake.texts == 5  # each entry embedded once, by one daemon
            assert await one.backend.vector_backlog() == 0
            third = Daemon(two, cfg)  # the lease was released: the next check finds nothing left to do
            assert await third.run(asyncio.Event()) == 0
            assert third.loops[f"embedding {WEB}"].last_action == "every entry has its vector"
            assert fake.texts == 5


async def test_a_memory_bound_to_no_scope_is_embedded_by_the_daemon_too(db_url: str) -> None:
    async with memstone.open_service(db_url, embedding=None) as plain:  # the library, no scope, no model
        await plain.remember(None, entries=[EntryInput(kind="fact", text="Unscoped note about uv.")])
        await write(plain, WEB, "Deploy with uv.")
    with fake_model_server() as fake:
        model = OpenAICompatibleEmbedder(fake.url, "fake", DIM)
        async with memstone.open_service(db_url, embedding=model) as svc:
            daemon = Daemon(svc, DaemonSettings(once=True, threshold=10**6))
            assert await daemon.run(asyncio.Event()) == 0
            actions = {name: loop.last_action for name, loop in daemon.loops.items()}
            assert actions["embedding (no scope)"] == "embedded 1 of 1 entries without a vector", actions
            assert actions[f"embedding {WEB}"] == "embedded 1 of 1 entries without a vector", actions
            assert await svc.vector_backlog() == 0 and fake.texts == 2


async def test_a_loop_that_cannot_continue_stops_the_daemon_with_a_failure(db_url: str, tmp_path: Path) -> None:
    async with memstone.open_service(db_url, embedding=None) as plain:
        await write(plain, WEB, "Deploy with uv.")  # written without a model: it waits for a vector
    with fake_model_server(fail_first=1000) as fake:
        model = OpenAICompatibleEmbedder(fake.url, "fake", DIM)
        async with memstone.open_service(db_url, embedding=model) as svc:
            cfg = DaemonSettings(embed_every_s=0.05, maintain_every_s=60, max_failures=2)
            code = await asyncio.wait_for(Daemon(svc, cfg).run(asyncio.Event()), timeout=30)
            (report,) = await daemon_records(svc)
    assert code == 1 and fake.requests == 2
    assert report["status"] == "failed" and f"embedding {WEB} failed 2 times" in str(report["fatal"])


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_the_daemon_process_serves_health_doctor_reports_it_and_sigterm_stops_it(db_url: str, tmp_path: Path) -> None:
    env = {**os.environ, "MEMSTONE_EMBEDDING": "none", "HOME": str(tmp_path)}
    cli = [sys.executable, "-c", "from memstone.cli.main import main; main()", "--url", db_url]
    subprocess.run([*cli, "--scope", WEB, "remember", "--kind", "fact", "--text", "Deploy with uv."], env=env,
                   check=True, capture_output=True)  # fmt: skip
    port = free_port()
    proc = subprocess.Popen(
        [*cli, "daemon", "--health-port", str(port), "--maintain-every", "0.2", "--embed-every", "0.2"],
        env=env, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        deadline, body = time.monotonic() + 60, None
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as r:
                    body = json.loads(r.read())
                    if any(x["scope"] == WEB and x["checks"] for x in body["loops"]):
                        break
            except OSError:
                pass
            time.sleep(0.1)
        assert body is not None and body["status"] == "ok" and body["pid"] == proc.pid
        doctor = subprocess.run([*cli, "doctor", "--json"], env=env, capture_output=True, text=True)
        daemon = json.loads(doctor.stdout)["daemon"]
        assert daemon["health"]["pid"] == proc.pid and daemon["health"]["status"] == "ok"  # read from the store
        status = subprocess.run([*cli, "maintenance", "status", "--scope", WEB, "--json"], env=env,
                                capture_output=True, text=True)  # fmt: skip
        assert [d["pid"] for d in json.loads(status.stdout)["daemons"]] == [proc.pid]
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        assert proc.stderr is not None
        proc.stderr.close()


async def test_storage_upkeep_runs_when_due_and_only_after_writes(svc: MemoryService) -> None:
    await write(svc, WEB, "Deploy with uv.")
    first = Daemon(svc, DaemonSettings(once=True, upkeep_every_s=0))
    assert await first.run(asyncio.Event()) == 0
    action = first.loops["storage"].last_action or ""
    assert action.startswith("storage upkeep in"), action
    done = first.upkeep["done"]  # type: ignore[index]
    if svc.backend.capabilities.persistent and "fts_optimized" in done:  # SQLite
        assert done["fts_optimized"] == ["memory_entry_search_fts", "memory_entry_archive_fts"]
        assert done["checkpoint"] is not None and not done["checkpoint"]["busy"]
    else:  # PostgreSQL
        assert "memory_entry_heads" in done["vacuumed"]
    second = Daemon(svc, DaemonSettings(once=True, upkeep_every_s=0))  # a new daemon reads the last upkeep
    assert await second.run(asyncio.Event()) == 0
    assert second.loops["storage"].last_action == "nothing written since the last upkeep"
    await write(svc, WEB, "Lint with ruff.")
    third = Daemon(svc, DaemonSettings(once=True, upkeep_every_s=3600))
    assert await third.run(asyncio.Event()) == 0
    assert (third.loops["storage"].last_action or "").startswith("upkeep due in")
    assert (await svc.search("ruff", scopes=[WEB])).hits  # the index still answers after optimize


async def test_a_health_record_without_a_heartbeat_for_too_long_reads_stale(svc: MemoryService) -> None:
    from datetime import datetime, timedelta

    await write(svc, WEB, "Deploy with uv.")
    daemon = Daemon(svc, DaemonSettings(embed_every_s=1, maintain_every_s=1))
    await daemon.write_health()  # as a running daemon records it, then (kill -9) never again
    (now,) = await daemon_records(svc)
    assert now["status"] == "ok" and now["stale_after_s"] == 63
    later = datetime.now().astimezone() + timedelta(seconds=64)
    (then,) = await daemon_records(svc, now=later)
    assert then["status"] == "stale" and then["last_status"] == "ok"
