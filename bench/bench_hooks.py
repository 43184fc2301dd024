"""Hook latency: ``python bench/bench_hooks.py [--entries 1000] [--runs 40] [--json out.json]``.

Builds a store of ``--entries`` memories in one project (``--mandatory`` of them mandatory, ``--important``
important) and times, as wall clock of a fresh process exactly as an agent spawns it, ``memstone hook
session-start`` and ``memstone hook user-prompt-submit`` (Claude Code payloads on stdin). Prints p50/p95/max.

Rows:

- ``memstone --version``: the floor (interpreter start + click + the CLI group, which loads every command's
  module lazily), for reference; a hook adds its own imports (the service and the store) on top.
- ``session-start``: the briefing (mandatory in full + important within the budget), a new session each run.
- ``user-prompt-submit``: per-prompt context (FTS, exclude mandatory) for varied prompts in one session; the
  prompt's capture runs afterwards in a detached child (the default), so it is not in the agent's wait.
- ``stop``: the turn's capture, deferred to a detached child (the agent waits for nothing).
- ``user-prompt-submit (capture inline)``: the same with ``MEMSTONE_HOOK_FOREGROUND=1``: Source + capture
  pipeline inside the timed process (what the hook would cost without the detached child).

Every hook row runs twice: through the warm hook server (``agents/hook_server.py``: the first hook starts it,
later ones are answered by a forked child of it; the default) and in its own process (``MEMSTONE_HOOK_SERVER=0``,
marked "own process"), which is what every hook costs where the server cannot run. ``cpu p50`` is the hook
process's own CPU time (user + system; with the server, the forked child's work is not in it, its wall time is).

Bytecode caches are on (``PYTHONPYCACHEPREFIX`` in a temp folder, warmed first), as for an installed package;
the figures depend on the machine's load, which is printed with them (``min`` approximates an idle machine).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus import Corpus

from memstone import EntryInput, open_service
from memstone.agents.project import project_scope

KINDS = ("fact", "decision", "convention", "constraint", "lesson", "procedure", "preference")


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def build(url: str, scope: str, *, entries: int, mandatory: int, important: int, embedding: str) -> None:
    corpus = Corpus(seed=5)
    rng = random.Random(3)
    model = None if embedding == "none" else embedding
    async with open_service(url, embedding=model) as svc:
        done = 0
        while done < entries:
            batch = []
            for i in range(done, min(entries, done + 100)):
                batch.append(
                    EntryInput(
                        kind=rng.choice(KINDS),
                        title=f"note {i}",
                        text=corpus.note(),
                        mandatory=i < mandatory,
                        important=mandatory <= i < mandatory + important,
                    )
                )
            head = await svc.resolve(scope)
            await svc.remember(head, entries=batch, scope=None if head else scope)
            done += len(batch)


def launcher() -> list[str]:
    script = Path(sys.executable).with_name("memstone")
    return [str(script)] if script.exists() else [sys.executable, "-m", "memstone.cli.main"]


CPU: dict[int, float] = {}  # id of a timing -> the process's CPU ms


def timed(args: list[str], stdin: str, env: dict[str, str]) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run([*launcher(), *args], input=stdin, capture_output=True, text=True, env=env, timeout=60)
    elapsed = (time.perf_counter() - started) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{args} exited {done.returncode}: {done.stderr}")
    CPU[len(CPU)] = (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000
    return elapsed


def series(runs: int, call: Callable[[int], float]) -> tuple[list[float], list[float]]:
    """Wall and CPU milliseconds of ``runs`` calls."""
    walls = []
    first = len(CPU)
    for i in range(runs):
        walls.append(call(i))
    return walls, [CPU[k] for k in range(first, len(CPU))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=1000)
    parser.add_argument("--mandatory", type=int, default=10)
    parser.add_argument("--important", type=int, default=30)
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--embedding", default="none", help="profile the store is built with (none: FTS only)")
    parser.add_argument("--json", dest="json_out", help="also write the figures here")
    opts = parser.parse_args()

    # The warm hook server and a capture child may still write bytecode there while it is removed: ignore that.
    with tempfile.TemporaryDirectory(prefix="memstone-bench-hooks-", ignore_cleanup_errors=True) as tmp:
        root = Path(tmp)
        project = root / "web"
        (project / ".git").mkdir(parents=True)
        scope = project_scope(project)
        assert scope is not None
        url = f"sqlite:///{root / 'store' / 'memstone.db'}"
        started = time.perf_counter()
        asyncio.run(
            build(
                url,
                scope,
                entries=opts.entries,
                mandatory=opts.mandatory,
                important=opts.important,
                embedding=opts.embedding,
            )
        )
        print(f"built {opts.entries} entries in {time.perf_counter() - started:.1f}s ({url})", file=sys.stderr)
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env.update(MEMSTONE_URL=url, HOME=str(root), PYTHONPYCACHEPREFIX=str(root / "pycache"))
        env["MEMSTONE_HOOK_SERVER"] = "20"  # the bench's own warm server ends 20 s after its last hook
        env["TMPDIR"] = str(root)  # and its socket lives in the bench's folder
        own = {**env, "MEMSTONE_HOOK_SERVER": "0"}
        corpus = Corpus(seed=9)

        def start_payload(i: int) -> str:
            return json.dumps(
                {
                    "session_id": f"bench-{i}",
                    "cwd": str(project),
                    "hook_event_name": "SessionStart",
                    "source": "startup",
                }
            )

        def prompt_payload(i: int) -> str:
            return json.dumps(
                {
                    "session_id": "bench-prompts",
                    "cwd": str(project),
                    "hook_event_name": "UserPromptSubmit",
                    "prompt": f"{corpus.query()} — can you check this (run {i})?",
                }
            )

        def stop_payload(i: int) -> str:
            message = f"Done: {corpus.note()} (turn {i})"
            return json.dumps(
                {
                    "session_id": "bench-prompts",
                    "cwd": str(project),
                    "hook_event_name": "Stop",
                    "stop_hook_active": False,
                    "last_assistant_message": message,
                }
            )

        for _ in range(3):  # warm the bytecode cache and the OS file cache, and start the warm server
            timed(["hook", "session-start", "--agent", "claude-code"], start_payload(-1), env)
            time.sleep(0.5)
        timed(["hook", "session-start", "--agent", "claude-code"], start_payload(10**6), env)
        start = ["hook", "session-start", "--agent", "claude-code"]
        prompt = ["hook", "user-prompt-submit", "--agent", "claude-code"]
        stop = ["hook", "stop", "--agent", "claude-code"]
        inline = {**env, "MEMSTONE_HOOK_FOREGROUND": "1"}
        n = opts.runs
        rows: dict[str, tuple[list[float], list[float]]] = {
            "memstone --version": series(n, lambda i: timed(["--version"], "", env)),
            "hook session-start": series(n, lambda i: timed(start, start_payload(i), env)),
            "hook session-start (own process)": series(n, lambda i: timed(start, start_payload(n + i), own)),
            "hook user-prompt-submit": series(n, lambda i: timed(prompt, prompt_payload(i), env)),
            "hook user-prompt-submit (own process)": series(n, lambda i: timed(prompt, prompt_payload(n + i), own)),
            "hook stop": series(n, lambda i: timed(stop, stop_payload(i), env)),
            "hook stop (own process)": series(n, lambda i: timed(stop, stop_payload(n + i), own)),
            "hook user-prompt-submit (capture inline)": series(n, lambda i: timed(prompt, prompt_payload(i), inline)),
        }
    load = os.getloadavg()
    print(
        f"\nhook latency, {opts.entries} entries ({opts.mandatory} mandatory, {opts.important} important), "
        f"{opts.runs} runs each, {os.cpu_count()} CPUs, load average {load[0]:.2f}"
    )
    print(f"{'command':<42} {'min ms':>8} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8} {'cpu p50':>8}")
    results = {}
    for name, (values, cpu) in rows.items():
        p50, p95 = pct(values, 0.5), pct(values, 0.95)
        results[name] = {"min_ms": min(values), "p50_ms": p50, "p95_ms": p95, "max_ms": max(values)}
        results[name]["cpu_p50_ms"] = pct(cpu, 0.5)
        print(f"{name:<42} {min(values):>8.0f} {p50:>8.0f} {p95:>8.0f} {max(values):>8.0f} {pct(cpu, 0.5):>8.0f}")
    if opts.json_out:
        Path(opts.json_out).write_text(
            json.dumps({"entries": opts.entries, "runs": opts.runs, "load": load, "rows": results}, indent=2)
        )


if __name__ == "__main__":
    main()
