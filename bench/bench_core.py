"""Core write/search benchmark on one Memory: ``python bench/bench_core.py [--sizes 1000,10000,100000]``.

Prints a table: bulk load rate, remember p50/p95, storage added per single-entry write, FTS search p50/p95
through memstone, and the engine's raw full-text statement over the same rows (the physical floor), plus database
size. SQLite by default (a file in a temporary folder; the floor is a bare FTS5 MATCH). ``--url postgresql://…``
runs on that PostgreSQL server, in a fresh database per size (dropped afterwards; the floor is the engine's BM25
statement run on its own connection); ``--start-postgres`` starts the test server of ``memstone.testing.servers``.
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
from corpus import Corpus

import memstone
from memstone import EntryInput
from memstone.domain.analyzer import query_terms


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def file_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.parent.glob(path.name + "*"))


def checkpoint(path: Path) -> None:
    conn = apsw.Connection(str(path))
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()


def pg_bytes(url: str) -> int:
    import psycopg

    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT pg_database_size(current_database())").fetchone()
        assert row is not None
        return int(row[0])


def pg_raw_fts(url: str, memory_id: str, queries: list[str]) -> list[float]:
    """The engine's own BM25 candidate statement, on a bare connection (no store core around it)."""
    import psycopg

    from memstone.backends.postgres.engine import PostgresConn
    from memstone.backends.postgres.fts import PostgresFullText

    fts = PostgresFullText()
    lat = []
    with psycopg.connect(url, autocommit=True) as raw:
        conn = PostgresConn(raw)
        for i, q in enumerate(queries):
            t = time.perf_counter()
            fts.head_candidates(conn, [memory_id], query_terms(q), 8, ["h.memory_artifact_id IN (?)"], [memory_id])
            if i >= 20:
                lat.append((time.perf_counter() - t) * 1000)
    return lat


@contextlib.contextmanager
def store_for(n: int, workdir: Path, server: str | None, durability: str) -> Iterator[tuple[str, Path | None]]:
    if server is None:
        path = workdir / f"bench-{n}.db"
        yield f"sqlite:///{path}" + ("?durability=fast" if durability == "fast" else ""), path
        return
    from memstone.testing.servers import postgres_database

    with postgres_database(server) as url:
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
    if path is None:
        return pg_bytes(url)
    checkpoint(path)
    return file_bytes(path)


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
        lat = []
        for _ in range(writes):
            text = corpus.note()
            t = time.perf_counter()
            head = await svc.remember(head, entries=[EntryInput(kind="fact", text=text)])
            lat.append((time.perf_counter() - t) * 1000)
        result["remember_p50_ms"] = statistics.median(lat)
        result["remember_p95_ms"] = pct(lat, 0.95)
        result["bytes_per_write"] = (size_of(url, path) - before) / writes
        assert head is not None
        qs = [corpus.query() for _ in range(queries + 20)]
        lat = []
        hits = 0
        for i, q in enumerate(qs):
            t = time.perf_counter()
            res = await svc.search(q, memories=[head], limit=8, mode="fts")
            if i >= 20:
                lat.append((time.perf_counter() - t) * 1000)
                hits += len(res)
        result["search_p50_ms"] = statistics.median(lat)
        result["search_p95_ms"] = pct(lat, 0.95)
        result["search_mean_hits"] = hits / queries
    if path is None:
        lat = pg_raw_fts(url, head.memory_id, qs)
        result["raw_fts5_p50_ms"] = statistics.median(lat)
        result["raw_fts5_p95_ms"] = pct(lat, 0.95)
        result["db_bytes"] = pg_bytes(url)
        return result
    conn = apsw.Connection(str(path))
    lat = []
    for i, q in enumerate(qs):
        match = " OR ".join(f'"{t}"' for t in query_terms(q))
        t = time.perf_counter()
        conn.execute(
            "SELECT rowid, rank FROM memory_entry_search_fts WHERE memory_entry_search_fts MATCH ? "
            "ORDER BY rank LIMIT 8",
            (match,),
        ).fetchall()
        if i >= 20:
            lat.append((time.perf_counter() - t) * 1000)
    conn.close()
    result["raw_fts5_p50_ms"] = statistics.median(lat)
    result["raw_fts5_p95_ms"] = pct(lat, 0.95)
    result["db_bytes"] = file_bytes(path)
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
    ap.add_argument("--url", help="A postgresql:// server URL: run there, in a fresh database per size.")
    ap.add_argument("--start-postgres", action="store_true", help="Start the embedded PostgreSQL test server.")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    rows = []
    with contextlib.ExitStack() as stack:
        server = args.url
        if args.start_postgres:
            from memstone.testing.servers import postgres_server

            server = stack.enter_context(postgres_server())
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
    cols = [
        ("entries", "{:.0f}"),
        ("bulk_load_entries_per_s", "{:.0f}"),
        ("remember_p50_ms", "{:.2f}"),
        ("remember_p95_ms", "{:.2f}"),
        ("bytes_per_write", "{:.0f}"),
        ("search_p50_ms", "{:.2f}"),
        ("search_p95_ms", "{:.2f}"),
        ("raw_fts5_p50_ms", "{:.2f}"),
        ("raw_fts5_p95_ms", "{:.2f}"),
        ("search_mean_hits", "{:.1f}"),
        ("db_bytes", "{:.0f}"),
    ]
    engine = "PostgreSQL (raw_fts5 = the engine's BM25 statement)" if server else f"SQLite {apsw.sqlite_lib_version()}"
    print(f"machine: {os.cpu_count()} cores, python {sys.version.split()[0]}, {engine}, durability {args.durability}")
    print("| " + " | ".join(c for c, _ in cols) + " |")
    print("|" + "---|" * len(cols))
    for r in rows:
        print("| " + " | ".join(f.format(r[c]) for c, f in cols) + " |")
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
