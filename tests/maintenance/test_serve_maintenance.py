"""The maintenance daemon inside ``memstone serve`` (issue #14, item 7): on by default, its health recorded in the
store while the server answers, stopped with the server; ``--no-maintenance`` runs none. Real processes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import memstone
from memstone.maintenance import runs
from memstone.maintenance.daemon import daemon_records
from memstone.maintenance.queue import enqueue

WEB = "memstone://orgs/acme/projects/web"


def start(cli: list[str], env: dict[str, str], *extra: str) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [*cli, "serve", "--port", "0", "--json", *extra], env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        text=True,
    )  # fmt: skip
    assert proc.stdout is not None
    lines: list[str] = []
    while not lines or not lines[-1].startswith("}"):
        line = proc.stdout.readline()
        assert line, f"memstone serve exited ({proc.wait()})"
        lines.append(line)
    return proc, str(json.loads("".join(lines))["url"]).rstrip("/")


def stop(proc: subprocess.Popen[str]) -> int:
    proc.send_signal(signal.SIGTERM)
    try:
        return proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        assert proc.stdout is not None
        proc.stdout.close()


async def test_serve_runs_the_daemon_by_default_and_records_its_health_in_the_store(
    db_url: str, tmp_path: Path
) -> None:
    env = {**os.environ, "MEMSTONE_EMBEDDING": "none", "HOME": str(tmp_path)}
    cli = [sys.executable, "-c", "from memstone.cli.main import main; main()", "--url", db_url]
    subprocess.run([*cli, "--scope", WEB, "remember", "--kind", "fact", "--text", "Deploy with uv."], env=env,
                   check=True, capture_output=True)  # fmt: skip
    async with memstone.open_service(db_url, embedding=None) as svc:
        request = await enqueue(svc, scope=WEB, mode="dry-run")  # waits for whoever works the queue
    proc, base = start(cli, env, "--maintain-every", "0.2")
    try:
        deadline, found = time.monotonic() + 90, []
        async with memstone.open_service(db_url, embedding=None) as svc:
            while time.monotonic() < deadline:
                found = await daemon_records(svc)
                done = [r for r in await runs(svc, scope=WEB) if r.run_id == request.run_id]
                if found and done and done[0].status == "COMPLETED":
                    break
                time.sleep(0.1)
            assert done and done[0].status == "COMPLETED"  # the server's loops carried out the queued run
        (record,) = found
        assert record["status"] == "ok" and record["pid"] == proc.pid
        assert {x["name"] for x in record["loops"]} >= {f"embedding {WEB}", "storage", f"maintenance {WEB}"}  # type: ignore[attr-defined]
        with urllib.request.urlopen(f"{base}/api/openapi.json", timeout=10) as r:
            assert r.status == 200  # the API answers meanwhile
        status = subprocess.run([*cli, "maintenance", "status", "--scope", WEB, "--json"], env=env,
                                capture_output=True, text=True)  # fmt: skip
        assert [d["pid"] for d in json.loads(status.stdout)["daemons"]] == [proc.pid]
    finally:
        code = stop(proc)
    assert code == -signal.SIGTERM  # as without the loops: the server ends by the signal, after a clean stop
    async with memstone.open_service(db_url, embedding=None) as svc:
        (after,) = await daemon_records(svc)
    assert after["status"] == "stopped" and after["pid"] == proc.pid


async def test_serve_no_maintenance_runs_no_loops(db_url: str, tmp_path: Path) -> None:
    env = {**os.environ, "MEMSTONE_EMBEDDING": "none", "HOME": str(tmp_path)}
    cli = [sys.executable, "-c", "from memstone.cli.main import main; main()", "--url", db_url]
    subprocess.run([*cli, "--scope", WEB, "remember", "--kind", "fact", "--text", "Deploy with uv."], env=env,
                   check=True, capture_output=True)  # fmt: skip
    proc, base = start(cli, env, "--no-maintenance")
    try:
        with urllib.request.urlopen(f"{base}/api/openapi.json", timeout=10) as r:
            assert r.status == 200
        time.sleep(1.0)
        async with memstone.open_service(db_url, embedding=None) as svc:
            assert await daemon_records(svc) == []
    finally:
        assert stop(proc) == -signal.SIGTERM
