"""Core write/search benchmark on one Memory: ``python bench/bench_core.py [--sizes 1000,10000,100000]``.

Prints a table: bulk load rate, remember p50/p95, storage added per single-entry write, FTS search p50/p95
through memstone, and the engine's raw full-text statement over the same rows (the physical floor), plus database
size. SQLite by default (a file in a temporary folder; the floor is a bare FTS5 MATCH). ``--url postgresql://…``
or ``--url oceanbase://…`` runs on that server, in a fresh database per size (dropped afterwards; the floor is the
engine's own full-text statement, ``bench/engines.py``, run on its own connection); ``--start-postgres`` /
``--start-oceanbase`` start the test server of ``memstone.testing.servers`` (PostgreSQL runs there with
``fsync=off``; seekdb with its defaults).

Writes have two floors: ``raw_commit`` is one bare row committed on its own (the floor of any durable write;
"raw write" in earlier tables), and on PostgreSQL ``raw_remember`` is the same rows a single-entry ``remember``
writes, inserted by plain SQL in one pipelined transaction (``engines.RawRemember``), timed in pairs with a second
series of ``remember`` calls (``remember_paired``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import contextlib
from collections.abc import Iterator

import apsw
import engines
from corpus import Corpus

import memstone
from memstone import EntryInput


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def file_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.parent.glob(path.name + "*"))


def checkpoint(path: Path) -> None:
    conn = apsw.Connection(str(path))
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()


@contextlib.contextmanager
def store_for(n: int, workdir: Path, server: str | None, durability: str) -> Iterator[tuple[str, Path | None]]:
    if server is None:
        path = workdir / f"bench-{n}.db"
        yield f"sqlite:///{path}" + ("?durability=fast" if durability == "fast" else ""), path
        return
    with engines.server_database(server) as (url, _):
        yield url, None


async def run_size(
    n: int,
    workdir: Path,
    writes: int,
    queries: int,
    embedding: str | None,
    durability: str = "full",
    server: str | None = None,
) -> dict[str, float]:
    with store_for(n, workdir, server, durability) as (url, path):
        return await measure(n, url, path, writes, queries, embedding)


def size_of(url: str, path: Path | None) -> int:
    if path is not None:
        checkpoint(path)
    return engines.database_bytes(url, path)


async def measure(
    n: int, url: str, path: Path | None, writes: int, queries: int, embedding: str | None
) -> dict[str, float]:
    corpus = Corpus(seed=n)
    result: dict[str, float] = {"entries": n}
    async with memstone.open_service(url, embedding=embedding) as svc:
        batch = 1000 if n >= 1000 else n
        head = None
        t0 = time.perf_counter()
        done = 0
        while done < n:
            k = min(batch, n - done)
            head = await svc.remember(head, entries=[EntryInput(kind="fact", text=corpus.note()) for _ in range(k)])
            done += k
            print(f"\r  load {n:>7}: {done:>7}/{n}", end="", file=sys.stderr, flush=True)
        load_s = time.perf_counter() - t0
        print(file=sys.stderr)
        assert head is not None
        result["bulk_load_entries_per_s"] = n / load_s
        # Single-entry writes: warm up, then measure; storage is measured after a WAL checkpoint.
        for _ in range(20):
            head = await svc.remember(head, entries=[EntryInput(kind="fact", text=corpus.note())])
        before = size_of(url, path)
        raw = engines.RawEngine(url, path, head.memory_id)
        lat, raw_lat = [], []
        for _ in range(writes):  # timed in pairs with the engine's bare single-row commit (same load for both)
            text = corpus.note()
            t = time.perf_counter()
            head = await svc.remember(head, entries=[EntryInput(kind="fact", text=text)])
            t1 = time.perf_counter()
            raw.write(text)
            lat.append((t1 - t) * 1000)
            raw_lat.append((time.perf_counter() - t1) * 1000)
        result["remember_p50_ms"] = statistics.median(lat)
        result["remember_p95_ms"] = pct(lat, 0.95)
        result["raw_commit_p50_ms"] = statistics.median(raw_lat)  # "raw write" before: one bare row committed
        result["raw_commit_p95_ms"] = pct(raw_lat, 0.95)
        result["bytes_per_write"] = (size_of(url, path) - before) / writes
        assert head is not None
        if engines.engine_of(url) == "postgresql":
            # Then in pairs with the same rows written by plain SQL (engines.RawRemember), after the bytes above.
            other = await svc.remember(None, entries=[EntryInput(kind="fact", text=corpus.note())])
            assert other is not None
            floor = engines.RawRemember(url, head.memory_id, other.memory_id)
            lat, raw_lat = [], []
            for _ in range(writes):
                t = time.perf_counter()
                head = await svc.remember(head, entries=[EntryInput(kind="fact", text=corpus.note())])
                t1 = time.perf_counter()
                floor.prepare(corpus.note())  # reads the rows just written, postings of a new note (not timed)
                t2 = time.perf_counter()
                floor.write()
                lat.append((t1 - t) * 1000)
                raw_lat.append((time.perf_counter() - t2) * 1000)
            floor.close()
            result["remember_paired_p50_ms"] = statistics.median(lat)
            result["remember_paired_p95_ms"] = pct(lat, 0.95)
            result["raw_remember_p50_ms"] = statistics.median(raw_lat)
            result["raw_remember_p95_ms"] = pct(raw_lat, 0.95)
        assert head is not None
        qs = [corpus.query() for _ in range(queries + 20)]
        lat, raw_lat = [], []
        hits = 0
        for i, q in enumerate(qs):  # in pairs with the engine's own full-text statement
            t = time.perf_counter()
            res = await svc.search(q, memories=[head], limit=8, mode="fts")
            t1 = time.perf_counter()
            raw.fts(q, 8)
            if i >= 20:
                lat.append((t1 - t) * 1000)
                raw_lat.append((time.perf_counter() - t1) * 1000)
                hits += len(res)
        result["search_p50_ms"] = statistics.median(lat)
        result["search_p95_ms"] = pct(lat, 0.95)
        result["search_mean_hits"] = hits / queries
        raw.close()
    lat = raw_lat
    result["raw_fts5_p50_ms"] = statistics.median(lat)
    result["raw_fts5_p95_ms"] = pct(lat, 0.95)
    result["db_bytes"] = size_of(url, path)
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument("--writes", type=int, default=300)
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--json", dest="json_out", help="Also write the results to this JSON file.")
    ap.add_argument(
        "--embedding",
        default="none",
        help="Embedding profile for writes (default none: the core write path; bench_retrieval.py measures models).",
    )
    ap.add_argument(
        "--durability",
        choices=("full", "fast"),
        default="full",
        help="full (default): every acknowledged write survives power loss; fast: synchronous=NORMAL.",
    )
    ap.add_argument("--url", help="A postgresql:// or oceanbase:// server URL: run there, a fresh database per size.")
    ap.add_argument("--start-postgres", action="store_true", help="Start the embedded PostgreSQL test server.")
    ap.add_argument("--start-oceanbase", action="store_true", help="Start a private seekdb (OceanBase) server.")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    rows = []
    with contextlib.ExitStack() as stack:
        start = "postgres" if args.start_postgres else "oceanbase" if args.start_oceanbase else None
        server = stack.enter_context(engines.server_for(args.url, start))
        tmp = stack.enter_context(tempfile.TemporaryDirectory())
        for n in sizes:
            rows.append(
                asyncio.run(
                    run_size(
                        n,
                        Path(tmp),
                        args.writes,
                        args.queries,
                        None if args.embedding == "none" else args.embedding,
                        args.durability,
                        server,
                    )
                )
            )
            # each size's row as soon as it is measured (a later size may fail on a loaded server)
            print(json.dumps({k: round(v, 3) for k, v in rows[-1].items()}), file=sys.stderr, flush=True)
    cols = [
        ("entries", "{:.0f}"),
        ("bulk_load_entries_per_s", "{:.0f}"),
        ("remember_p50_ms", "{:.2f}"),
        ("remember_p95_ms", "{:.2f}"),
        ("raw_commit_p50_ms", "{:.2f}"),
        ("raw_commit_p95_ms", "{:.2f}"),
        ("remember_paired_p50_ms", "{:.2f}"),
        ("raw_remember_p50_ms", "{:.2f}"),
        ("raw_remember_p95_ms", "{:.2f}"),
        ("bytes_per_write", "{:.0f}"),
        ("search_p50_ms", "{:.2f}"),
        ("search_p95_ms", "{:.2f}"),
        ("raw_fts5_p50_ms", "{:.2f}"),
        ("raw_fts5_p95_ms", "{:.2f}"),
        ("search_mean_hits", "{:.1f}"),
        ("db_bytes", "{:.0f}"),
    ]
    engine = {
        "sqlite": f"SQLite {apsw.sqlite_lib_version()}",
        "postgresql": "PostgreSQL (raw_fts5 = the engine's BM25 statement)",
        "oceanbase": "OceanBase (raw_fts5 = the engine's MATCH ... AGAINST statement)",
    }[engines.engine_of(server)]
    print(
        f"machine: {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}, python {sys.version.split()[0]}, {engine}, "
        f"durability {args.durability}"
    )
    print("| " + " | ".join(c for c, _ in cols) + " |")
    print("|" + "---|" * len(cols))
    for r in rows:
        print("| " + " | ".join(f.format(r[c]) if c in r else "-" for c, f in cols) + " |")
    if len(rows) > 1:
        first, last = rows[0], rows[-1]
        print(
            f"remember p50 ratio {last['entries']:.0f}/{first['entries']:.0f}: "
            f"{last['remember_p50_ms'] / first['remember_p50_ms']:.2f}x; bytes/write ratio: "
            f"{last['bytes_per_write'] / max(first['bytes_per_write'], 1):.2f}x; search/raw FTS5 at "
            f"{last['entries']:.0f}: {last['search_p50_ms'] / last['raw_fts5_p50_ms']:.2f}x"
        )
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
