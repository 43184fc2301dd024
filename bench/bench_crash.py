"""Crash harness: ``python bench/bench_crash.py [--cycles 20] [--writers 3] [--durability full|fast]``.

Each cycle starts WRITERS processes that write single entries as fast as they can (two of them share one scope,
so they also race for its head) and print a line for every write ``remember`` acknowledged. At a random moment
every writer is killed with SIGKILL. Then ``memstone verify`` must be clean, and every acknowledged write must be
in the store with its exact text. The store is kept across cycles, so later cycles write into a store that has
already survived earlier kills. Prints one line per cycle and the totals; exits 1 if anything was lost.

A killed process is what this exercises (the WAL survives it in every durability mode); power loss is not
simulated.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import memstone
from memstone import EntryInput

SCOPES = ("memstone://orgs/crash", "memstone://orgs/crash", "memstone://orgs/crash/projects/solo")


async def _writer(url: str, scope: str, tag: str) -> None:
    async with memstone.open_service(url, embedding=None) as svc:
        i = 0
        while True:
            text = f"{tag} note {i} {random.random():.12f}"
            rev = await svc.remember(scope=scope, entries=[EntryInput(kind="fact", text=text)])
            assert rev is not None
            (change,) = [c for c in rev.changes if c.op == "add"]
            print(json.dumps({"entry": change.entry_id, "text": text, "revision": rev.revision}), flush=True)
            i += 1


def _drain(proc: subprocess.Popen[str], out: list[dict[str, object]]) -> None:
    assert proc.stdout is not None
    for line in proc.stdout:
        try:
            out.append(json.loads(line))
        except ValueError:
            return  # a line cut by the kill was never acknowledged to anyone


async def _check(url: str, acked: list[dict[str, object]]) -> tuple[bool, int]:
    lost = 0
    async with memstone.open_service(url, embedding=None) as svc:
        report = await svc.verify()
        for item in acked:
            try:
                version = await svc.get(str(item["entry"]))
            except memstone.NotFound:
                lost += 1
                continue
            if version.content.text != item["text"]:
                lost += 1
    return report.ok, lost


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--cycles", type=int, default=20)
    ap.add_argument("--writers", type=int, default=3)
    ap.add_argument("--min-s", type=float, default=0.3, help="Earliest kill after the writers start writing.")
    ap.add_argument("--max-s", type=float, default=1.5, help="Latest kill.")
    ap.add_argument("--durability", choices=("full", "fast"), default="full")
    ap.add_argument("--seed", type=int, default=12)
    ap.add_argument("--writer", nargs=3, metavar=("URL", "SCOPE", "TAG"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.writer:
        asyncio.run(_writer(*args.writer))
        return
    rng = random.Random(args.seed)
    totals = {"acknowledged": 0, "lost": 0, "verify_clean": 0}
    with tempfile.TemporaryDirectory(prefix="memstone-crash-") as tmp:
        url = f"sqlite:///{Path(tmp) / 'crash.db'}" + ("?durability=fast" if args.durability == "fast" else "")
        t0 = time.perf_counter()
        for cycle in range(1, args.cycles + 1):
            procs, acked, readers = [], [], []
            for w in range(args.writers):
                cmd = [sys.executable, __file__, "--writer", url, SCOPES[w % len(SCOPES)], f"c{cycle}w{w}"]
                proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
                reader = threading.Thread(target=_drain, args=(proc, acked), daemon=True)
                reader.start()
                procs.append(proc)
                readers.append(reader)
            started = time.monotonic()
            while not acked and time.monotonic() - started < 30:
                time.sleep(0.01)  # the interpreters start; kill only once writing began
            time.sleep(rng.uniform(args.min_s, args.max_s))
            for proc in procs:
                os.kill(proc.pid, signal.SIGKILL)
            for proc, reader in zip(procs, readers, strict=True):
                proc.wait()
                reader.join(timeout=10)
            clean, lost = asyncio.run(_check(url, acked))
            totals["acknowledged"] += len(acked)
            totals["lost"] += lost
            totals["verify_clean"] += int(clean)
            print(
                f"cycle {cycle:>3}: {len(acked):>4} acknowledged, {lost} lost, verify {'clean' if clean else 'DAMAGE'}"
            )
        elapsed = time.perf_counter() - t0
    print(
        f"cycles {args.cycles}, writers {args.writers}, durability {args.durability}: "
        f"{totals['acknowledged']} acknowledged writes, {totals['lost']} lost, "
        f"verify clean {totals['verify_clean']}/{args.cycles}, {elapsed:.0f} s"
    )
    sys.exit(1 if totals["lost"] or totals["verify_clean"] != args.cycles else 0)


if __name__ == "__main__":
    main()
