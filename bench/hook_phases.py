"""Where a served hook's time goes: ``python bench/hook_phases.py [--runs 200] [--event user-prompt-submit]``.

Times each phase of ``memstone hook EVENT`` answered by the warm hook server, over many runs, in the way
``bench/bench_hooks.py`` calls it (same store shape, same payloads, a fresh client process each run), and prints
which phase owns the slow runs. The client is the console script's own path (:func:`memstone.cli.entry.main`'s
steps, with clock reads between them); the server is :func:`memstone.agents.hook_server.serve` in a process of
this script's, with clock reads around the forked child's steps. Clocks: ``CLOCK_MONOTONIC`` (one clock for
every process), CPU time per process, context switches (``nivcsw``: involuntary, the CPU taken away), minor page
faults (copy-on-write after the fork), and the garbage collector's pauses in the child.

Phases (ms): ``spawn`` (exec and interpreter start-up, to the client's first line), ``client imports``
(memstone.cli.hook_run, memstone.agents.hook_client), ``connect`` (the socket's path, the
connection), ``send+fork`` (the call sent, the server's checks, the fork),
``child setup`` (the child's descriptors, environment, imports), ``settings``, ``open store``, ``reads`` (the
hook's queries), ``close+save`` (the rest of run_hook), ``reply`` (writing the answer, spawning the capture child),
``exit`` (the child's exit seen by the client), ``client exit`` (the client's exit seen by this script).
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_hooks import build
from corpus import Corpus

from memstone.agents.project import project_scope

CLIENT = r"""
import time
_c = lambda: time.clock_gettime(time.CLOCK_MONOTONIC) * 1000
t0 = _c()
import os, sys, resource
log = os.environ.pop("PROBE_CLIENT_LOG")
from memstone.cli.hook_run import parse_hook_argv
from memstone.agents import hook_client
t1 = _c()
marks = {}
real = hook_client._socket
class Sock(real.socket):
    def connect(self, addr):
        super().connect(addr)
        marks["connected"] = _c()
    def recv(self, size):
        data = super().recv(size)
        marks["started" if "started" not in marks else "exit"] = _c()
        return data
class Shim:
    def __getattr__(self, name):
        return Sock if name == "socket" else getattr(real, name)
hook_client._socket = Shim()
sys.argv = ["memstone", *sys.argv[1:]]
assert parse_hook_argv(sys.argv[1:]) is not None
code = hook_client.forward(sys.argv[1:])
t2 = _c()
ru = resource.getrusage(resource.RUSAGE_SELF)
with open(log, "a") as out:  # repr, not json: importing json would be the client's slowest step
    cpu = (ru.ru_utime + ru.ru_stime) * 1000
    out.write(repr({"t0": t0, "t1": t1, "t2": t2, **marks, "code": code, "cpu": cpu, "nivcsw": ru.ru_nivcsw}))
sys.exit(0 if code is not None else 3)
"""

SERVER = r"""
import gc, json, os, resource, sys, time
_c = lambda: time.clock_gettime(time.CLOCK_MONOTONIC) * 1000
LOG = os.environ["PROBE_SERVER_LOG"]
from memstone.agents import hook_server, hooks, hook_reads
from memstone.cli import hook_run
marks = {}
def cpu():
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return (ru.ru_utime + ru.ru_stime) * 1000
def mark(name):
    marks[name] = _c(); marks["cpu " + name] = cpu()
gcpause = [0.0, 0]
def gccb(phase, info, _s=[0.0]):
    if phase == "start": _s[0] = _c()
    else: gcpause[0] += _c() - _s[0]; gcpause[1] += 1
real_child = hook_server._child
def child(conn, fds, call, env, keep):
    mark("forked"); gc.callbacks.append(gccb)
    real_child(conn, fds, call, env, keep)
hook_server._child = child
real_run = hook_run.run_hook_command
def run(*a, **k):
    mark("running")
    try:
        return real_run(*a, **k)
    finally:
        mark("replied")
        ru = resource.getrusage(resource.RUSAGE_SELF)
        with open(LOG, "a") as out:
            out.write(json.dumps({**marks, "minflt": ru.ru_minflt, "majflt": ru.ru_majflt, "nivcsw": ru.ru_nivcsw,
                                  "gc_ms": gcpause[0], "gcs": gcpause[1], "pid": os.getpid()}) + "\n")
hook_run.run_hook_command = run
real_load = hooks.AgentSettings.load
def load(*a, **k):
    mark("settings from"); out = real_load(*a, **k); mark("settings"); return out
hooks.AgentSettings.load = load
real_service = hooks._hook_service
from contextlib import asynccontextmanager
@asynccontextmanager
async def service(*a, **k):
    mark("open from")
    async with real_service(*a, **k) as svc:
        mark("opened")
        yield svc
        mark("reads done")
    mark("closed")
hooks._hook_service = service
real_spawn = hooks.spawn_capture
def spawn(result):
    mark("spawn from"); return real_spawn(result)
hooks.spawn_capture = spawn
hook_server.serve()
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument(
        "--event", default="user-prompt-submit", choices=("user-prompt-submit", "session-start", "stop")
    )
    parser.add_argument("--gap", type=float, default=0.0, help="seconds between runs")
    parser.add_argument("--json", dest="json_out")
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="memstone-hook-phases-", ignore_cleanup_errors=True) as tmp:
        root = Path(tmp)
        project = root / "web"
        (project / ".git").mkdir(parents=True)
        scope = project_scope(project)
        assert scope is not None
        url = f"sqlite:///{root / 'store' / 'memstone.db'}"
        asyncio.run(build(url, scope, entries=opts.entries, mandatory=10, important=30, embedding="none"))
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env.update(MEMSTONE_URL=url, HOME=str(root), PYTHONPYCACHEPREFIX=str(root / "pycache"), TMPDIR=str(root))
        env["MEMSTONE_HOOK_SERVER"] = "30"
        client_log, server_log = root / "client.jsonl", root / "server.jsonl"
        server_env = {**env, "PROBE_SERVER_LOG": str(server_log)}
        server = subprocess.Popen(
            [sys.executable, "-P", "-c", SERVER],
            env=server_env,
            cwd="/",
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        corpus = Corpus(seed=9)
        argv = ["hook", opts.event, "--agent", "claude-code"]

        def payload(i: int) -> str:
            body: dict[str, object] = {"session_id": "probe", "cwd": str(project), "hook_event_name": opts.event}
            if opts.event == "session-start":
                body.update(session_id=f"probe-{i}", source="startup")
            elif opts.event == "stop":
                body.update(stop_hook_active=False, last_assistant_message=f"Done: {corpus.note()} (turn {i})")
            else:
                body["prompt"] = f"{corpus.query()} — can you check this (run {i})?"
            return json.dumps(body)

        def call(i: int) -> dict[str, float]:
            client_log.unlink(missing_ok=True)
            server_log.unlink(missing_ok=True)
            spawned = time.clock_gettime(time.CLOCK_MONOTONIC) * 1000
            done = subprocess.run(
                [sys.executable, "-c", CLIENT, *argv],
                input=payload(i), capture_output=True, text=True, env={**env, "PROBE_CLIENT_LOG": str(client_log)},
            )  # fmt: skip
            ended = time.clock_gettime(time.CLOCK_MONOTONIC) * 1000
            if done.returncode != 0:
                raise SystemExit(f"run {i}: exit {done.returncode} {done.stderr}")
            c = ast.literal_eval(client_log.read_text())
            for _ in range(100):  # the child writes its line before its reply is reaped; allow for slow disks
                if server_log.exists() and server_log.read_text().endswith("\n"):
                    break
                time.sleep(0.01)
            s = json.loads(server_log.read_text())
            return {
                "total": ended - spawned,
                "spawn": c["t0"] - spawned,
                "client imports": c["t1"] - c["t0"],
                "connect": c["connected"] - c["t1"],
                "send+fork": s["forked"] - c["connected"],
                "child setup": s["running"] - s["forked"],
                "settings": s["settings"] - s["running"],
                "open store": s.get("opened", 0.0) - s.get("open from", 0.0),
                "reads": s.get("reads done", 0.0) - s.get("opened", 0.0),
                "close+save": s.get("spawn from", s["replied"]) - s.get("reads done", s["settings"]),
                "reply": s["replied"] - s.get("spawn from", s["replied"]),
                "exit": c.get("exit", c["started"]) - s["replied"],
                "client exit": ended - c["t2"],
                "client cpu": c["cpu"],
                "client nivcsw": c["nivcsw"],
                "child cpu": s["cpu replied"] - s["cpu forked"],
                "child open cpu": s.get("cpu opened", 0.0) - s.get("cpu open from", 0.0),
                "child reads cpu": s.get("cpu reads done", 0.0) - s.get("cpu opened", 0.0),
                "child nivcsw": s["nivcsw"],
                "child minflt": s["minflt"],
                "child gc ms": s["gc_ms"],
                "loadavg": os.getloadavg()[0],
                "run": i,
            }

        for i in range(3):  # the server is up and warm, the OS cache too
            time.sleep(1.0)
            with contextlib.suppress(SystemExit, FileNotFoundError, KeyError):
                call(-1 - i)
        rows = []
        for i in range(opts.runs):
            rows.append(call(i))
            if opts.gap:
                time.sleep(opts.gap)
        server.terminate()
        server.wait()
    report(rows, opts)


def report(rows: list[dict[str, float]], opts: argparse.Namespace) -> None:
    keys = [k for k in rows[0] if k not in ("run",)]
    slow_cut = sorted(r["total"] for r in rows)[int(0.9 * len(rows))]
    slow = [r for r in rows if r["total"] >= slow_cut]
    fast = [r for r in rows if r["total"] <= statistics.median(r["total"] for r in rows)]
    print(f"\n{opts.event}, {len(rows)} runs, load {os.getloadavg()[0]:.2f}")
    print(f"{'phase':<16} {'p50':>7} {'p95':>7} {'max':>7} {'fast half':>10} {'slowest 10%':>12}")
    for k in keys:
        vals = [r[k] for r in rows]
        p95 = sorted(vals)[min(len(vals) - 1, int(0.95 * len(vals)))]
        print(f"{k:<16} {statistics.median(vals):>7.1f} {p95:>7.1f} {max(vals):>7.1f} "
              f"{statistics.mean(r[k] for r in fast):>10.1f} {statistics.mean(r[k] for r in slow):>12.1f}")  # fmt: skip
    print("slowest runs (index):", sorted(int(r["run"]) for r in slow))
    if opts.json_out:
        Path(opts.json_out).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
