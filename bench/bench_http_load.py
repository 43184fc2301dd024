"""HTTP load on loopback: ``python bench/bench_http_load.py [--clients 20] [--seconds 60] [--seed-entries 200]``.

Starts ``memstone serve`` (local mode, 127.0.0.1, a free port, a fresh store in a temporary directory), seeds it,
then runs CLIENTS concurrent clients (one thread and one keep-alive connection each) for SECONDS: a mixed load of
searches (60 %), reads of one entry (20 %), new entries (15 %) and CAS updates of a seeded entry (5 %, which may
meet a documented 409 when another client updated it first). Prints the throughput, p50/p99 latency per kind of
request and overall, and every status by kind; then runs ``memstone verify`` on the store. Loopback only.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

import httpx2

SCOPE = "memstone://orgs/load/projects/web"
WORDS = [
    "deploy",
    "staging",
    "retry",
    "backoff",
    "cache",
    "schema",
    "index",
    "token",
    "review",
    "release",
    "rollback",
    "monitor",
    "alert",
]


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def start_server(url: str) -> tuple[subprocess.Popen[str], str]:
    cmd = [sys.executable, "-m", "memstone.cli.main", "--url", url, "--scope", SCOPE, "serve", "--port", "0", "--json"]
    env = {**os.environ, "MEMSTONE_EMBEDDING": "none"}
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
    assert proc.stdout is not None
    text = ""
    for line in proc.stdout:  # the URLs, as one (indented) JSON object, once the server listens
        text += line
        try:
            base = str(json.loads(text)["url"]).rstrip("/")
            break
        except ValueError:
            continue
    else:
        proc.kill()
        raise SystemExit(f"the server did not start: {text!r}")
    return proc, base


def text(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(12)) + f" {rng.random():.9f}"


def client(base: str, seconds: float, seed: int, ids: list[str], out: list[tuple[str, int, float]]) -> None:
    rng = random.Random(seed)
    with httpx2.Client(base_url=base, timeout=30) as http:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            roll = rng.random()
            t = time.perf_counter()
            if roll < 0.60:
                kind = "search"
                r = http.get("/api/memories/search", params={"q": " ".join(rng.sample(WORDS, 2)), "scope": SCOPE})
            elif roll < 0.80:
                kind = "read"
                r = http.get(f"/api/memories/{rng.choice(ids)}")
            elif roll < 0.95:
                kind = "create"
                r = http.post("/api/memories", params={"scope": SCOPE}, json={"kind": "fact", "text": text(rng)})
            else:
                kind = "update"
                entry = rng.choice(ids)
                current = http.get(f"/api/memories/{entry}")
                if current.status_code == 200:
                    r = http.patch(
                        f"/api/memories/{entry}",
                        json={"text": text(rng)},
                        headers={"If-Match": current.headers.get("etag", "*")},
                    )
                else:
                    r = current
            out.append((kind, r.status_code, (time.perf_counter() - t) * 1000))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--clients", type=int, default=20)
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--seed-entries", type=int, default=200)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="memstone-load-") as tmp:
        url = f"sqlite:///{Path(tmp) / 'load.db'}"
        proc, base = start_server(url)
        try:
            rng = random.Random(1)
            ids = []
            with httpx2.Client(base_url=base, timeout=30) as http:
                for _ in range(args.seed_entries):
                    r = http.post("/api/memories", params={"scope": SCOPE}, json={"kind": "fact", "text": text(rng)})
                    r.raise_for_status()
                    ids.append(r.json()["record"]["entry_id"])
            results: list[tuple[str, int, float]] = []
            threads = [
                threading.Thread(target=client, args=(base, args.seconds, i, ids, results)) for i in range(args.clients)
            ]
            t0 = time.perf_counter()
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            elapsed = time.perf_counter() - t0
        finally:
            proc.terminate()
            proc.wait(timeout=30)
        verify = subprocess.run(
            [sys.executable, "-m", "memstone.cli.main", "--url", url, "verify", "--json"],
            capture_output=True,
            text=True,
            env={**os.environ, "MEMSTONE_EMBEDDING": "none"},
        )
    print(f"{args.clients} clients, {args.seconds:.0f} s, loopback, {os.cpu_count()} cores")
    print(f"requests {len(results)}, throughput {len(results) / elapsed:.0f} req/s")
    print("| kind | requests | p50 (ms) | p99 (ms) | statuses |")
    print("|---|---|---|---|---|")
    for kind in ("search", "read", "create", "update", "all"):
        rows = [r for r in results if kind in ("all", r[0])]
        lat = [r[2] for r in rows]
        statuses = Counter(r[1] for r in rows)
        shown = ", ".join(f"{s}: {n}" for s, n in sorted(statuses.items()))
        print(f"| {kind} | {len(rows)} | {statistics.median(lat) if lat else 0:.1f} | {pct(lat, 0.99):.1f} | {shown} |")
    errors = Counter(s for k, s, _ in results if s >= 400 and not (k == "update" and s == 409))
    print(f"errors other than documented CAS conflicts: {sum(errors.values())} {dict(errors)}")
    report = json.loads(verify.stdout or "{}")
    print(f"verify after: {'clean' if report.get('ok') else 'NOT clean: ' + verify.stdout[:300]}")
    sys.exit(1 if errors or not report.get("ok") else 0)


if __name__ == "__main__":
    main()
