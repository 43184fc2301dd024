"""memstone_rank's top-k pruning on the 100k speed stores (issue 15; a probe, not the service's code path).

    PYTHONPATH=src nice .venv/bin/python bench/fts_topk_probe.py bench/.cache/speed-none-100000-<fp>.db
        [--passes 3] [--base /work/main]

The store is one ``bench_retrieval.py --parts speed`` builds (copied into a temporary folder first, never written);
the queries are its 200 speed queries, reduced to their informative terms as the search does, each asking the
SQLite head search's first step, the top ``2 x depth`` (80) of ``backends/sqlite/fts.py``'s ``_ranked``. This
tree's ``memstone_rank.c`` is compiled into a temporary folder with ``-DMEMSTONE_RANK_PROBE`` (a counter of the rows
scored exactly and pruned, and an SQL function that reads it: not in the shipped build) and loaded into the
service's connection in place of the installed library. Per query:

1. **identity**: ``_ranked`` with the library (the pruned statement) against ``_ranked`` without it (``bm25()``,
   the fallback): (row id, score) bit for bit, ties included;
2. **rows**: the rows the statement scored exactly and the rows it pruned (their ``%_docsize`` read skipped), and
   the rows a perfect bound (the exact score) would still score: those not strictly below the heap's worst when
   seen (``oracle``), what a tighter bound could save at most;
3. **speed** (``--base``): the ``memstone_rank`` statements of the base tree (its ``memstone_rank.c`` compiled the
   same way, without the probe counter, called as its ``fts.py`` calls it: no LIMIT argument) and of this tree,
   on two read-only connections to the copy, alternating query by query, ``--passes`` passes; thread CPU per
   query, p50 / p95, with the load average.
"""

from __future__ import annotations

import argparse
import asyncio
import heapq
import os
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import apsw
import bench_retrieval as br

from memstone import open_service
from memstone.backends.sqlite import fts
from memstone.backends.sqlite._rank import build
from memstone.domain.analyzer import informative_terms, query_terms
from memstone.domain.search import candidate_depth

WIDE = candidate_depth(br.LIMIT) * 2


def compile_rank(source: Path, folder: Path, *defines: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    out = folder / build.LIBRARY
    cmd = [build.compiler() or "cc", *build.FLAGS, *defines, "-o", str(out), str(source), "-lm"]
    subprocess.run(cmd, check=True)
    return out


def bits(rows: Any) -> list[tuple[int, str]]:
    return [(int(k), struct.pack("<d", float(v)).hex()) for k, v in rows]


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


async def identity_and_rows(store: Path, lib: Path, queries: list[list[str]]) -> tuple[int, list[tuple[int, int]]]:
    fts.RANK_LIBRARY = lib
    differ = 0
    rows: list[tuple[int, int]] = []
    async with open_service(f"sqlite:///{store}", embedding=None) as svc:
        engine = svc.backend.engine
        ranker = engine.fts
        assert ranker.ranking.startswith("memstone_rank (C"), ranker.ranking
        for terms in queries:
            ranker._rank = True
            engine.raw.execute("SELECT memstone_rank_counts()").fetchall()
            pruned = bits(ranker._ranked(engine.conn, terms, WIDE))
            exact, skipped = (int(x) for x in engine.raw.execute("SELECT memstone_rank_counts()").get.split())
            ranker._rank = False
            plain = bits(ranker._ranked(engine.conn, terms, WIDE))
            differ += pruned != plain
            rows.append((exact, skipped))
    return differ, rows


def statements(
    conn: apsw.Connection, terms: list[str], df: dict[str, int], limit_arg: bool
) -> list[tuple[str, list[object]]]:
    """The statement(s) ``_ranked_once`` runs for ``terms``, with (``limit_arg``) or without the LIMIT argument."""
    rows = df[""]
    shares = [df[t] / rows for t in terms]
    rare = [t for t, s in zip(terms, shares, strict=True) if s <= fts.COMMON_SHARE]
    common = [t for t, s in zip(terms, shares, strict=True) if s > fts.COMMON_SHARE]
    head: list[object] = [WIDE] if limit_arg else []
    sql = fts._RANKED.replace("bm25(memory_entry_search_fts)", "memstone_rank(memory_entry_search_fts{})")
    out: list[tuple[str, list[object]]] = []
    if len(terms) > 1 and rare and common and sum(df[t] for t in common) >= fts.COMMON_ROWS:
        n = len(common) + 2 * len(rare)
        both = f"({fts.match_expression(common + rare)}) AND ({fts.match_expression(rare)})"
        args = [*head, *(df[t] for t in common + rare), *([None] * len(rare)), both, WIDE]
        out.append((sql.format(", ?" * (n + len(head))), args))
    args = [*head, *(df[t] for t in terms), fts.match_expression(terms), WIDE]
    out.append((sql.format(", ?" * (len(terms) + len(head))), args))
    return out


def oracle(conn: apsw.Connection, stmts: list[tuple[str, list[object]]]) -> int:
    """Rows scored exactly if the bound were the exact score, in the statement's row id order (with a NULL LIMIT)."""
    for sql, args in stmts:
        every = sql.replace(" AS s ", " ").replace(" ORDER BY s, rowid LIMIT ?", " ORDER BY rowid")
        got = conn.execute(every, [None, *args[1:-1]]).fetchall()
        if len(got) >= WIDE or (sql, args) == stmts[-1]:
            break
    heap: list[float] = []
    n = 0
    for _, score in got:
        v = -float(score)
        if len(heap) < WIDE or not v < heap[0]:
            n += 1
            (heapq.heappush if len(heap) < WIDE else heapq.heappushpop)(heap, v)
    return n


def run(conn: apsw.Connection, stmts: list[tuple[str, list[object]]]) -> float:
    t0 = time.thread_time()
    for sql, args in stmts:  # the split's statement, then the full MATCH only when it found fewer than WIDE
        if len(conn.execute(sql, args).fetchall()) >= WIDE:
            break
    return (time.thread_time() - t0) * 1000


def speed(store: Path, base_lib: Path, lib: Path, queries: list[list[str]], passes: int) -> dict[str, list[float]]:
    conns = {}
    for name, path in (("base", base_lib), ("branch", lib)):
        c = apsw.Connection(str(store), flags=apsw.SQLITE_OPEN_READONLY)
        c.enable_load_extension(True)
        c.load_extension(str(path))
        conns[name] = c
    c = conns["base"]
    df: dict[str, int] = {"": int(c.execute("SELECT count(*) FROM memory_entry_search_fts_docsize").get)}
    for t in {t for q in queries for t in q}:
        df[t] = int(
            c.execute(
                "SELECT count(*) FROM memory_entry_search_fts WHERE memory_entry_search_fts MATCH ?",
                [fts.match_expression([t])],
            ).get
        )
    plans = {name: [statements(conns[name], q, df, name == "branch") for q in queries] for name in conns}
    best = [oracle(conns["branch"], p) for p in plans["branch"]]
    print(f"oracle (a perfect bound) exact: {sum(best)}, per query p50 {statistics.median(best):.0f} max {max(best)}")
    for i in range(len(queries)):  # warm-up, and the two libraries' last statements give the same top rows
        tops = [bits(conns[name].execute(*plans[name][i][-1]).fetchall()) for name in conns]
        assert tops[0] == tops[1], queries[i]
    got: dict[str, list[float]] = {name: [] for name in conns}
    for k in range(passes):
        order = ["base", "branch"] if k % 2 == 0 else ["branch", "base"]
        for i in range(len(queries)):
            for name in order:
                got[name].append(run(conns[name], plans[name][i]))
    return got


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("store", type=Path)
    ap.add_argument("--passes", type=int, default=3)
    ap.add_argument("--base", type=Path, help="a tree whose memstone_rank.c to time against (e.g. /work/main)")
    a = ap.parse_args()
    here = Path(__file__).resolve().parent.parent
    queries = [t for t in (informative_terms(query_terms(q)) for q in br.speed_queries(200)) if t]
    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "s.db"
        shutil.copy(a.store, store)
        lib = compile_rank(
            here / "src/memstone/backends/sqlite/_rank/memstone_rank.c", Path(tmp) / "probe", "-DMEMSTONE_RANK_PROBE"
        )
        differ, rows = asyncio.run(identity_and_rows(store, lib, queries))
        exact = [e for e, _ in rows]
        pruned = [p for _, p in rows]
        total = sum(exact) + sum(pruned)
        print(f"{a.store.name}: {len(queries)} queries, top {WIDE} (row id, score) differing from bm25(): {differ}")
        print(
            f"rows scored: exact {sum(exact)} ({100 * sum(exact) / max(1, total):.1f} %), pruned {sum(pruned)}; "
            f"per query exact p50 {statistics.median(exact):.0f} max {max(exact)}, "
            f"pruned p50 {statistics.median(pruned):.0f} max {max(pruned)}"
        )
        if a.base:
            base_lib = compile_rank(a.base / "src/memstone/backends/sqlite/_rank/memstone_rank.c", Path(tmp) / "base")
            branch_lib = compile_rank(here / "src/memstone/backends/sqlite/_rank/memstone_rank.c", Path(tmp) / "branch")
            before = load()
            got = speed(store, base_lib, branch_lib, queries, a.passes)
            for name, xs in got.items():
                xs.sort()
                print(
                    f"{name}: CPU p50 {statistics.median(xs):.3f} ms, p95 {xs[int(0.95 * len(xs))]:.3f} ms "
                    f"({len(xs)} statements runs)"
                )
            print(f"load {before} -> {load()}")


if __name__ == "__main__":
    main()
