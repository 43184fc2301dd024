"""What a search's statements read on a kept PostgreSQL speed store, and the table state behind it (issue 13).

    PYTHONPATH=src nice .venv/bin/python bench/pg_search_explain.py postgresql://…/bench_speed_minilm_l6_int8_100000_<fp>
        [--queries 3] [--settle]

The store is one ``bench_retrieval.py --parts speed --url postgresql://…`` builds and keeps (its Memory is read from
its ``bench_built`` row). ``auto_explain`` (``ANALYZE``, ``BUFFERS``) is set on that database for the run and
reset after; each query is searched once per mode to warm the caches, then again with the log read: one line per
full-text (``WITH st``) and HNSW (``SELECT n.d``) statement of memstone's searches, then the raw floor's full-text
statement (``engines.RawEngine.fts``), with its server time (inflated by ``auto_explain``'s timing), heap fetches
and shared buffers. Before that, the visibility map and the last (auto)vacuum and (auto)analyze of the tables a
search reads (``pg_class``, ``pg_stat_user_tables``). ``--settle`` first runs what a bulk operation ends with
(``service/settle.py``: the engine's storage upkeep) and prints its time. Needs the server's superuser (the test
server's ``postgres``).
"""

from __future__ import annotations

import argparse
import asyncio
import re
import sys
import time
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import engines
import psycopg

import memstone
from memstone.embedding import load_model
from memstone.service.settle import SETTLE_ROWS, settle

QUERIES = (
    "always start function argument names with",
    "function that merges two sorted lists",
    "how do we deploy the service",
    "which editor does the mentor use",
    "what is the naming convention for methods",
)
TABLES = ("memory_entry_heads", "memory_entry_postings", "memory_entry_vectors", "memory_entry_vector_metadata")
EXPLAIN = {
    "session_preload_libraries": "auto_explain",
    "auto_explain.log_min_duration": "0",
    "auto_explain.log_analyze": "on",
    "auto_explain.log_buffers": "on",
    "auto_explain.log_nested_statements": "on",
}


def table_state(url: str) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT s.relname, c.relallvisible, c.relpages, s.last_vacuum, s.last_autovacuum, s.last_analyze, "
            "s.last_autoanalyze, s.n_ins_since_vacuum FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid "
            "WHERE s.relname = ANY(%s) ORDER BY 1",
            (list(TABLES),),
        ).fetchall()
    print("| table | all-visible pages | pages | last vacuum | last autovacuum | last analyze | last autoanalyze "
          "| inserted since vacuum |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        cells = [str(c)[:19] if isinstance(c, datetime) else str(c) if c is not None else "-" for c in r]
        print("| " + " | ".join(cells) + " |")


async def searches(url: str, memory_id: str, queries: list[str], log: Path) -> int:
    model = load_model("minilm-l6-int8")
    async with memstone.open_service(url, embedding=model) as svc:
        for q in queries:
            for mode in ("fts", "vector", "hybrid"):
                await svc.search(q, memories=[memory_id], mode=mode, limit=10)
        start = log.stat().st_size
        for q in queries:
            for mode in ("fts", "vector", "hybrid"):
                await svc.search(q, memories=[memory_id], mode=mode, limit=10)
    raw = engines.RawEngine(url, None, memory_id)
    try:
        for q in queries:
            raw.fts(q, 10)
    finally:
        raw.close()
    return start


def summary(text: str) -> None:
    print("\n| statement | rows asked | ms (auto_explain) | heap fetches | shared buffers |\n|---|---|---|---|---|")
    for block in re.split(r"\n(?=\S.*LOG:  duration)", text):
        took = re.search(r"duration: ([\d.]+) ms", block)
        query = re.search(r"Query Text: (WITH st|SELECT n\.d)", block)
        if not took or not query:
            continue
        asked = re.search(r"\$2 = '(\d+)'", block) if query.group(1) == "WITH st" else None
        fetches = sum(int(x) for x in re.findall(r"Heap Fetches: (\d+)", block))
        buffers = re.search(r"Buffers: shared hit=(\d+)(?: read=(\d+))?", block)
        shared = int(buffers.group(1)) + int(buffers.group(2) or 0) if buffers else 0
        kind = "BM25" if query.group(1) == "WITH st" else "HNSW"
        print(f"| {kind} | {asked.group(1) if asked else '-'} | {float(took.group(1)):.2f} | {fetches} | {shared} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("url", help="the kept speed store's database URL")
    ap.add_argument("--queries", type=int, default=3)
    ap.add_argument("--settle", action="store_true", help="run the bulk operation's upkeep first")
    args = ap.parse_args()
    memory_id = engines.built_memory(args.url)
    if memory_id is None:
        sys.exit(f"{args.url}: not a finished bench_retrieval speed store (no bench_built row)")
    if args.settle:

        async def upkeep() -> None:
            async with memstone.open_service(args.url, embedding=None) as svc:
                started = time.perf_counter()
                await settle(svc.backend, SETTLE_ROWS)
                print(f"upkeep of a bulk write: {time.perf_counter() - started:.2f} s\n")

        asyncio.run(upkeep())
    table_state(args.url)
    with psycopg.connect(args.url, autocommit=True) as conn:
        database = conn.execute("SELECT current_database()").fetchone()
        data = conn.execute("SHOW data_directory").fetchone()
        assert database is not None and data is not None
        for name, value in EXPLAIN.items():
            conn.execute(f"ALTER DATABASE {database[0]} SET {name} = '{value}'")
    log = Path(str(data[0])).parent / "server.log"  # memstone.testing.servers starts the server with -l there
    try:
        start = asyncio.run(searches(args.url, memory_id, list(QUERIES[: args.queries]), log))
    finally:
        with psycopg.connect(args.url, autocommit=True) as conn:
            conn.execute(f"ALTER DATABASE {database[0]} RESET ALL")
    summary(log.read_bytes()[start:].decode("utf-8", "replace"))


if __name__ == "__main__":
    main()
