"""Where the 100k SQLite FTS search spends its time, and what did not remove it (issue 15; a probe).

    PYTHONPATH=src nice .venv/bin/python bench/fts_rank_probe.py bench/.cache/speed-none-100000-<fp>.db
        [--passes 3] [--detail]

The store is the one ``bench_retrieval.py --parts speed --speed-models none`` builds (it is copied twice into a
temporary folder and never written); the queries are its 200 speed queries, reduced to their informative terms.
Parts 1 to 3 time the queries that take the common-term split of ``backends/sqlite/fts.py`` (rare and common
terms, and the rare terms alone find ``2 x depth`` rows); thread CPU, passes interleaved:

1. **statements** on the store as built: ``two``, the split's two ranked statements as the search runs them;
   ``match`` the same two MATCHes returning row ids only; ``aux`` the same with a Python FTS5 auxiliary function
   returning a constant, ``docsize`` one returning the row's token count (FTS5's ``%_docsize`` lookup that
   ``bm25()`` makes for every row it scores); ``idf-common`` the common terms' rows counted, one statement each
   (what ``bm25()``'s per-statement IDF pass reads for them); ``rare-not-common``, the first statement ranked
   without the rows the second scores again (``(rare) NOT (common)``); two exact Python rankings that use the
   per-connection term counts instead of FTS5's per-statement IDF pass: ``py-one`` (one statement,
   ``(rare) AND (rare OR common)``, BM25 in a Python auxiliary function) and ``py-postings`` (one statement per
   term returning its frequency, the token counts read from ``%_docsize``, BM25 summed in Python). Both are
   compared with ``bm25()`` of the whole query over the rows holding a rare term: (row id, score) bit for bit.
2. **segments**: the index as built (one FTS5 segment per write transaction, merged by FTS5's automerge) against
   a copy after FTS5 ``optimize`` (one segment: what the maintenance daemon's storage upkeep does,
   ``backends/sqlite/upkeep.py``): ``two`` on each, then ``search(mode="fts")`` through the service on each copy,
   alternating, wall and thread-CPU p50 / p95.
3. ``--detail``: the same index rebuilt with ``detail=column`` and ``detail=none`` on the optimized copy, ``two``
   on each against the ``detail=full`` index, with top-10 agreement.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import apsw
import bench_retrieval as br

import memstone
from memstone.backends.sqlite.fts import _RANKED, COMMON_ROWS, COMMON_SHARE, match_expression
from memstone.backends.sqlite.schema import FTS_TOKENIZE
from memstone.domain.analyzer import informative_terms, query_terms

FTS = "memory_entry_search_fts"
K1, B, WIDE = 1.2, 0.75, 80


@dataclass
class Stats:
    row_count: int
    tokens: int

    def column_total_size(self, col: int = -1) -> int:
        return self.tokens


Case = tuple[list[str], list[str], list[str]]  # the query's terms, its rare terms, its common terms


def p(xs: Sequence[float], q: float) -> float:
    return sorted(xs)[min(len(xs) - 1, int(q * len(xs)))]


def segments(conn: apsw.Connection, table: str = FTS) -> int:
    """FTS5 segments of the index: a ``%_data`` row id holds its segment id above bit 37."""
    return int(
        conn.execute(f"SELECT count(DISTINCT id >> 37) FROM {table}_data WHERE id >= (1 << 37)").fetchall()[0][0]
    )


class Probe:
    def __init__(self, conn: apsw.Connection, table: str = FTS) -> None:
        self.conn, self.t = conn, table
        self.rows = int(conn.execute(f"SELECT count(*) FROM {table}_docsize").fetchall()[0][0])
        self.df: dict[str, int] = {}
        self.terms: list[str] = []
        conn.register_fts5_function("probe_const", lambda api, *a: 0)
        conn.register_fts5_function("probe_docsize", lambda api, *a: api.column_size(-1))
        conn.register_fts5_function("probe_bm25", self._bm25)
        conn.register_fts5_function("probe_tf", lambda api, *a: len(api.phrase_column_offsets(0, 0)))
        self.stats: Stats | None = None
        conn.register_fts5_function("probe_stats", self._stats)

    def _stats(self, api: Any, *args: Any) -> int:
        self.stats = Stats(api.row_count, api.column_total_size(-1))
        return 0

    def count(self, t: str) -> int:
        if t not in self.df:
            sql = f"SELECT count(*) FROM {self.t} WHERE {self.t} MATCH ?"
            self.df[t] = int(self.conn.execute(sql, [match_expression([t])]).fetchall()[0][0])
        return self.df[t]

    def case(self, terms: list[str]) -> Case | None:
        """The query's rare and common terms when the search's split applies (``fts.SQLiteFullText._ranked``)."""
        if len(terms) < 2:
            return None
        rare = [t for t in terms if self.count(t) / self.rows <= COMMON_SHARE]
        common = [t for t in terms if self.count(t) / self.rows > COMMON_SHARE]
        if not (rare and common and sum(self.df[t] for t in common) >= COMMON_ROWS):
            return None
        sql = f"SELECT count(*) FROM {self.t} WHERE {self.t} MATCH ?"
        if int(self.conn.execute(sql, [match_expression(rare)]).fetchall()[0][0]) < WIDE:
            return None  # the rare terms find fewer than 2 x depth rows: the search runs the full MATCH
        return terms, rare, common

    def ranked(self, match: str) -> list[tuple[int, float]]:
        return [(int(k), float(v)) for k, v in self.conn.execute(_RANKED.replace(FTS, self.t), [match, WIDE])]

    def two(self, c: Case) -> list[tuple[int, float]]:
        _, rare, common = c
        first = self.ranked(match_expression(rare))
        scores = dict(first)
        scores.update(self.ranked(f"({match_expression(common)}) AND ({match_expression(rare)})"))
        return sorted(scores.items(), key=lambda kv: (kv[1], kv[0]))[:WIDE]

    def idf_pass(self, c: Case) -> None:
        """What bm25()'s IDF pass reads for the common terms: each one's rows, counted."""
        for t in c[2]:
            self.conn.execute(
                f"SELECT count(*) FROM {self.t} WHERE {self.t} MATCH ?", [match_expression([t])]
            ).fetchall()

    def rare_not_common(self, c: Case) -> None:
        """The first statement without the rows the second one scores again (``rare NOT common``)."""
        _, rare, common = c
        self.ranked(f"({match_expression(rare)}) NOT ({match_expression(common)})")

    def scan(self, c: Case, fn: str) -> None:
        _, rare, common = c
        for m in (match_expression(rare), f"({match_expression(common)}) AND ({match_expression(rare)})"):
            self.conn.execute(f"SELECT rowid{fn} FROM {self.t} WHERE {self.t} MATCH ?", [m]).fetchall()

    def idf(self, api: Any, terms: Sequence[str]) -> tuple[list[tuple[str, float]], float]:
        """FTS5's bm25() IDF, from the kept term counts (no pass over the doclists), and the mean row length."""
        n_rows = api.row_count
        out = []
        for t in terms:
            n = self.df[t]
            x = math.log((n_rows - n + 0.5) / (n + 0.5))
            out.append((t, x if x > 0.0 else 1e-6))
        return out, api.column_total_size(-1) / n_rows

    def _bm25(self, api: Any, *args: Any) -> float:
        """fts5Bm25Function of SQLite 3.54 in Python, the same operations in the same order; the phrase of a term
        repeated in the expression is read once."""
        d = api.aux_data
        if d is None:
            first: dict[str, int] = {}
            for i, ph in enumerate(api.phrases):
                first.setdefault(ph[0], i)
            idf, avgdl = self.idf(api, self.terms)
            d = api.aux_data = ([(first[t], w) for t, w in idf], avgdl)
        slots, avgdl = d
        norm = K1 * (1 - B + B * api.column_size(-1) / avgdl)
        score = 0.0
        for i, w in slots:
            f = len(api.phrase_column_offsets(i, 0))
            score += w * ((f * (K1 + 1.0)) / (f + norm))
        return -1.0 * score

    def py_one(self, c: Case) -> list[tuple[int, float]]:
        self.terms, rare, common = c
        m = f"({match_expression(rare)}) AND ({match_expression(rare)} OR {match_expression(common)})"
        return self.ranked_by("probe_bm25", m)

    def ranked_by(self, fn: str, match: str) -> list[tuple[int, float]]:
        sql = f"SELECT rowid, {fn}({self.t}) AS s FROM {self.t} WHERE {self.t} MATCH ? ORDER BY s, rowid LIMIT ?"
        return [(int(k), float(v)) for k, v in self.conn.execute(sql, [match, WIDE])]

    def py_postings(self, c: Case) -> list[tuple[int, float]]:
        terms, rare, common = c
        tfs: dict[int, dict[str, int]] = {}
        sql = f"SELECT rowid, probe_tf({self.t}) FROM {self.t} WHERE {self.t} MATCH ?"
        for t in rare:
            for k, f in self.conn.execute(sql, [match_expression([t])]):
                tfs.setdefault(int(k), {})[t] = int(f)
        for t in common:
            for k, f in self.conn.execute(sql, [f"{match_expression([t])} AND ({match_expression(rare)})"]):
                tfs[int(k)][t] = int(f)
        keys = list(tfs)
        size = {
            int(k): varint(bytes(sz))
            for k, sz in self.conn.execute(
                f"SELECT id, sz FROM {self.t}_docsize WHERE id IN ({','.join('?' * len(keys))})", keys
            )
        }
        if self.stats is None:  # the index's row and token counts, as bm25() reads them (once: read-only)
            sql = f"SELECT probe_stats({self.t}) FROM {self.t} WHERE {self.t} MATCH ? LIMIT 1"
            self.conn.execute(sql, [match_expression([terms[0]])]).fetchall()
        assert self.stats is not None
        idf, avgdl = self.idf(self.stats, terms)
        out = []
        for k, d in tfs.items():
            norm = K1 * (1 - B + B * size[k] / avgdl)
            score = 0.0
            for t, w in idf:
                f = d.get(t, 0)
                score += w * ((f * (K1 + 1.0)) / (f + norm))
            out.append((-1.0 * score, k))
        out.sort()
        return [(k, s) for s, k in out[:WIDE]]

    def reference(self, c: Case) -> list[tuple[int, float]]:
        """bm25() of the whole query over the rows holding a rare term, ties by row id."""
        terms, rare, _ = c
        holding = {
            int(r[0])
            for r in self.conn.execute(f"SELECT rowid FROM {self.t} WHERE {self.t} MATCH ?", [match_expression(rare)])
        }
        rows = self.conn.execute(
            f"SELECT rowid, bm25({self.t}) FROM {self.t} WHERE {self.t} MATCH ?", [match_expression(terms)]
        )
        return sorted(((int(k), float(v)) for k, v in rows if int(k) in holding), key=lambda kv: (kv[1], kv[0]))[:WIDE]


def varint(b: bytes) -> int:
    """The first SQLite varint of ``b`` (a ``%_docsize.sz`` holds one per column)."""
    v = 0
    for x in b:
        v = (v << 7) | (x & 0x7F)
        if x < 0x80:
            break
    return v


def timed(methods: dict[str, Callable[[Case], object]], cases: list[Case], passes: int) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {k: [] for k in methods}
    for _ in range(passes):
        for c in cases:
            for k, f in methods.items():
                t = time.thread_time()
                f(c)
                out[k].append((time.thread_time() - t) * 1000)
    return out


def report(title: str, res: dict[str, list[float]], loads: list[float]) -> None:
    print(f"\n## {title} (ms thread CPU; load 1m {min(loads):.1f}-{max(loads):.1f})\n")
    print("| method | p50 | p95 | mean |\n|---|---|---|---|")
    for k, v in res.items():
        print(f"| {k} | {statistics.median(v):.2f} | {p(v, 0.95):.2f} | {statistics.mean(v):.2f} |")


async def service(paths: dict[str, Path], memory_id: str, queries: list[str], passes: int) -> None:
    svcs = {}
    for name, path in paths.items():
        cm = memstone.open_service(f"sqlite:///{path}", embedding=None)
        svc = await cm.__aenter__()
        head = await svc.head(memory_id)
        for q in queries[:10]:
            await svc.search(q, memories=[head], limit=10, mode="fts")
        svcs[name] = (cm, svc, head)
    cpu: dict[str, list[float]] = {k: [] for k in paths}
    wall: dict[str, list[float]] = {k: [] for k in paths}
    loads = []
    for _ in range(passes):
        for name, (_, svc, head) in svcs.items():
            loads.append(os.getloadavg()[0])
            for q in queries:
                t, c = time.perf_counter(), time.thread_time()
                await svc.search(q, memories=[head], limit=10, mode="fts")
                cpu[name].append((time.thread_time() - c) * 1000)
                wall[name].append((time.perf_counter() - t) * 1000)
    for cm, _, _ in svcs.values():
        await cm.__aexit__(None, None, None)
    print(f"\n## search(mode='fts') through the service, {len(queries)} queries x {passes} passes, alternating")
    print(f"(ms; load 1m {min(loads):.1f}-{max(loads):.1f})\n")
    print("| index | wall p50 / p95 | thread CPU p50 / p95 |\n|---|---|---|")
    for k in paths:
        print(
            f"| {k} | {statistics.median(wall[k]):.2f} / {p(wall[k], 0.95):.2f} | "
            f"{statistics.median(cpu[k]):.2f} / {p(cpu[k], 0.95):.2f} |"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("store", type=Path, help="a speed-none-100000-<fp>.db of bench_retrieval.py")
    ap.add_argument("--passes", type=int, default=3)
    ap.add_argument("--detail", action="store_true", help="also rebuild the index with detail=column and none")
    args = ap.parse_args()
    memory_id = json.loads(args.store.with_suffix(".json").read_text())["memory_id"]
    queries = br.speed_queries(200)
    with tempfile.TemporaryDirectory(prefix="fts-rank-probe-") as tmp:
        built, optimized = Path(tmp) / "built.db", Path(tmp) / "optimized.db"
        shutil.copy(args.store, built)
        shutil.copy(args.store, optimized)
        raw = apsw.Connection(str(optimized))
        raw.execute(f"INSERT INTO {FTS} ({FTS}) VALUES ('optimize')")
        raw.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        raw.close()
        conns = {
            k: apsw.Connection(str(v), flags=apsw.SQLITE_OPEN_READONLY)
            for k, v in (("built", built), ("optimized", optimized))
        }
        probes = {k: Probe(c) for k, c in conns.items()}
        a = probes["built"]
        cases = [c for c in (a.case(informative_terms(query_terms(q))) for q in queries) if c is not None]
        for c in cases:
            for t in c[0]:
                probes["optimized"].count(t)
        print(
            f"# fts_rank_probe: {args.store.name}, {len(queries)} speed queries, {len(cases)} take the split; "
            f"segments: built {segments(conns['built'])}, optimized {segments(conns['optimized'])}"
        )
        exact = {"py-one": 0, "py-postings": 0, "two (row ids)": 0}
        for c in cases:
            ref = a.reference(c)
            exact["py-one"] += a.py_one(c) == ref
            exact["py-postings"] += a.py_postings(c) == ref
            exact["two (row ids)"] += [k for k, _ in a.two(c)] == [k for k, _ in ref]
        print(
            "\nequal to bm25() over the rows holding a rare term: "
            + ", ".join(f"{k} {v}/{len(cases)}" for k, v in exact.items())
        )
        loads = [os.getloadavg()[0]]
        res = timed(
            {
                "two": a.two,
                "match": lambda c: a.scan(c, ""),
                "aux": lambda c: a.scan(c, f", probe_const({FTS})"),
                "docsize": lambda c: a.scan(c, f", probe_docsize({FTS})"),
                "idf-common": a.idf_pass,
                "rare-not-common": a.rare_not_common,
                "py-one": a.py_one,
                "py-postings": a.py_postings,
            },
            cases,
            args.passes,
        )
        loads.append(os.getloadavg()[0])
        report(f"1. statements, index as built ({len(cases)} split queries x {args.passes} passes)", res, loads)
        b = probes["optimized"]
        loads = [os.getloadavg()[0]]
        res = timed({"two, as built": a.two, "two, optimized": b.two}, cases, args.passes)
        loads.append(os.getloadavg()[0])
        report("2. segments: the split's two statements", res, loads)
        for c in conns.values():
            c.close()
        asyncio.run(service({"as built": built, "optimized": optimized}, memory_id, queries, args.passes))
        if args.detail:
            detail(optimized, cases, args.passes)


def detail(path: Path, cases: list[Case], passes: int) -> None:
    raw = apsw.Connection(str(path))
    for d in ("column", "none"):
        t = f"probe_fts_{d}"
        raw.execute(
            f"CREATE VIRTUAL TABLE {t} USING fts5(searchable_text, content='memory_entry_heads', "
            f"content_rowid='projection_id', tokenize=\"{FTS_TOKENIZE}\", detail={d})"
        )
        raw.execute(f"INSERT INTO {t} ({t}) VALUES ('rebuild')")
        raw.execute(f"INSERT INTO {t} ({t}) VALUES ('optimize')")
    probes = {d: Probe(raw, t) for d, t in (("full", FTS), ("column", "probe_fts_column"), ("none", "probe_fts_none"))}
    for pr in probes.values():
        pr.df = probes["full"].df
        pr.rows = probes["full"].rows
    for c in cases:
        for t in c[0]:
            probes["full"].count(t)
    full = [[k for k, _ in probes["full"].two(c)][:10] for c in cases]
    for d in ("column", "none"):
        got = [[k for k, _ in probes[d].two(c)][:10] for c in cases]
        agree = statistics.mean(len(set(x) & set(y)) / len(y) if y else 1.0 for x, y in zip(got, full, strict=True))
        print(f"\ndetail={d}: top-10 agreement with detail=full {agree:.3f} over {len(cases)} split queries")
    loads = [os.getloadavg()[0]]
    res = timed({f"two, detail={d}": pr.two for d, pr in probes.items()}, cases, passes)
    loads.append(os.getloadavg()[0])
    report("3. the index's detail option (optimized copy)", res, loads)
    raw.close()


if __name__ == "__main__":
    main()
