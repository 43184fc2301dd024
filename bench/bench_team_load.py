"""Team-server load: ``python bench/bench_team_load.py [--url postgresql://…] [--clients 16] [--seconds 60]``.

Two ``memstone serve`` processes (token mode, 127.0.0.1) on ONE PostgreSQL store; CLIENTS client threads, each
with one keep-alive connection to one of the processes (round robin), run for SECONDS: searches (60 %), reads of
one entry (20 %), new entries (15 %) and CAS updates (5 %: read the ETag, PATCH with If-Match; another client may
win first, a documented 409). Without ``--url`` it starts the embedded PostgreSQL of ``memstone.testing.servers``
and uses a fresh database (dropped afterwards).

Prints throughput, p50/p95/p99 per kind and overall, every status by kind, the errors other than documented
409s, then checks that nothing was lost and the history is unbroken: every acknowledged new entry is listed
afterwards (read through the other process), every entry's versions run 1..n with the count of acknowledged
updates, the Revisions of the scope run 1..N with N = every acknowledged write, and ``memstone verify`` is clean.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import statistics
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import httpx2

from memstone.testing.team import isolated_env, memstone, serve_process

SCOPE = "memstone://orgs/load/projects/web"
WORDS = ["deploy", "staging", "retry", "backoff", "cache", "schema", "index", "token", "review", "release", "rollback",
         "monitor", "alert"]  # fmt: skip
Sample = tuple[str, int, float]


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def text(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(12)) + f" {rng.random():.9f}"


@contextlib.contextmanager
def store(url: str | None) -> Iterator[str]:
    if url:
        yield url
        return
    from memstone.testing import servers

    with servers.postgres_server() as server, servers.postgres_database(server, "team_load") as fresh:
        yield fresh


class Ledger:
    """What the clients were told: entries created, updates acknowledged (per entry)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.created: list[str] = []
        self.updated: Counter[str] = Counter()


def client(base: str, token: str, seconds: float, seed: int, ids: list[str], out: list[Sample], led: Ledger) -> None:
    rng = random.Random(seed)
    headers = {"Authorization": f"Bearer {token}"}
    with httpx2.Client(base_url=base, timeout=60, headers=headers) as http:
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
                if r.status_code == 201:
                    with led.lock:
                        led.created.append(r.json()["record"]["entry_id"])
            else:
                kind = "update"
                entry = rng.choice(ids)
                current = http.get(f"/api/memories/{entry}")
                r = current
                if current.status_code == 200:
                    r = http.patch(
                        f"/api/memories/{entry}", json={"text": text(rng)},
                        headers={"If-Match": current.headers["etag"]},
                    )  # fmt: skip
                    if r.status_code == 200:
                        with led.lock:
                            led.updated[entry] += 1
            out.append((kind, r.status_code, (time.perf_counter() - t) * 1000))


def check(base: str, token: str, seeded: list[str], led: Ledger) -> list[str]:
    """What went wrong with the store afterwards (empty: nothing lost, history unbroken)."""
    problems: list[str] = []
    with httpx2.Client(base_url=base, timeout=120, headers={"Authorization": f"Bearer {token}"}) as http:
        listed: set[str] = set()
        cursor = None
        while True:
            page = http.get(
                "/api/memories", params={"scope": SCOPE, "limit": 200, **({"cursor": cursor} if cursor else {})}
            )
            page.raise_for_status()
            listed |= {r["entry_id"] for r in page.json()["items"]}
            cursor = page.json()["next_cursor"]
            if not cursor:
                break
        missing = set(led.created) - listed
        if missing:
            problems.append(f"{len(missing)} acknowledged new entries are not listed")
        for entry in seeded:
            chain = http.get(f"/api/memories/{entry}/versions", params={"limit": 200}).json()["items"]
            versions = [v["version"] for v in chain]
            if versions != list(range(1, led.updated[entry] + 2)):
                problems.append(f"{entry}: versions {versions}, acknowledged updates {led.updated[entry]}")
        revisions: list[int] = []
        since = 0
        while True:
            page = http.get("/api/memories/changes", params={"scope": SCOPE, "since": since, "limit": 200})
            page.raise_for_status()
            revisions += [d["memory_ref"]["revision"] for d in page.json()["items"]]
            if page.json()["next_since"] is None:
                break
            since = page.json()["next_since"]
        writes = len(seeded) + len(led.created) + sum(led.updated.values())
        if revisions != list(range(1, writes + 1)):
            problems.append(
                f"revisions run {revisions[:3]}…{revisions[-3:]} ({len(revisions)}), acknowledged writes {writes}"
            )
    return problems


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--url", help="postgresql://… (default: start the embedded PostgreSQL, fresh database)")
    ap.add_argument("--servers", type=int, default=2)
    ap.add_argument("--clients", type=int, default=16)
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--seed-entries", type=int, default=200)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="memstone-team-load-") as tmp, store(args.url) as url:
        here = Path(tmp)
        env = isolated_env(here)
        made = memstone("--url", url, "token", "create", "--user", "load", "--org", "load", "--grant",
                        f"{SCOPE}=write", env=env, cwd=here)  # fmt: skip
        if made.code != 0:
            raise SystemExit(f"token create failed: {made.data} {made.stderr}")
        token = str(made.data["token"])
        with contextlib.ExitStack() as stack:
            bases = [
                stack.enter_context(serve_process(url, env=env, cwd=here, auth="token")) for _ in range(args.servers)
            ]
            rng = random.Random(1)
            seeded: list[str] = []
            with httpx2.Client(base_url=bases[0], timeout=60, headers={"Authorization": f"Bearer {token}"}) as http:
                for _ in range(args.seed_entries):
                    r = http.post("/api/memories", params={"scope": SCOPE}, json={"kind": "fact", "text": text(rng)})
                    r.raise_for_status()
                    seeded.append(r.json()["record"]["entry_id"])
            results: list[Sample] = []
            led = Ledger()
            threads = [
                threading.Thread(
                    target=client, args=(bases[i % len(bases)], token, args.seconds, i, seeded, results, led)
                )
                for i in range(args.clients)
            ]
            t0 = time.perf_counter()
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            elapsed = time.perf_counter() - t0
            problems = check(bases[-1], token, seeded, led)  # read back through the last process
        verify = memstone("--url", url, "verify", env=env, cwd=here, timeout=600)
    load = os.getloadavg()[0]
    print(f"{args.servers} serve processes on one PostgreSQL, {args.clients} clients, {args.seconds:.0f} s, loopback, "
          f"{os.cpu_count()} cores, load average {load:.1f} at the end")  # fmt: skip
    print(f"requests {len(results)}, throughput {len(results) / elapsed:.1f} req/s")
    print("| kind | requests | p50 (ms) | p95 (ms) | p99 (ms) | statuses |")
    print("|---|---|---|---|---|---|")
    for kind in ("search", "read", "create", "update", "all"):
        rows = [r for r in results if kind in ("all", r[0])]
        lat = [r[2] for r in rows]
        shown = ", ".join(f"{s}: {n}" for s, n in sorted(Counter(r[1] for r in rows).items()))
        p50 = statistics.median(lat) if lat else 0.0
        print(f"| {kind} | {len(rows)} | {p50:.1f} | {pct(lat, 0.95):.1f} | {pct(lat, 0.99):.1f} | {shown} |")
    errors = Counter(s for k, s, _ in results if s >= 400 and not (k == "update" and s == 409))
    print(f"errors other than documented CAS conflicts: {sum(errors.values())} {dict(errors)}")
    print(f"acknowledged: {len(led.created)} new entries, {sum(led.updated.values())} updates (+{len(seeded)} seeded)")
    print("history: " + ("unbroken (every acknowledged write found, versions and Revisions contiguous)" if not problems
                         else "BROKEN: " + "; ".join(problems[:5])))  # fmt: skip
    clean = verify.code == 0 and verify.data.get("ok")
    print(f"verify after: {'clean' if clean else 'NOT clean: ' + str(verify.data)[:300]}")
    sys.exit(1 if errors or problems or verify.code != 0 else 0)


if __name__ == "__main__":
    main()
