"""What an FTS5 ranking function in C would give the 100k SQLite fts search (issue 15; a probe, nothing ships).

    PYTHONPATH=src nice .venv/bin/python bench/fts_c_probe.py \
        bench/.cache/speed-none-100000-<fp>.db bench/.cache/speed-minilm-l6-int8-100000-<fp>.db [--passes 3]

``bench/fts_rank_c/memstone_rank.c`` is compiled to a temporary folder (gcc) and loaded into each connection. It
registers ``memstone_rank(fts, n0, n1, ...)``, SQLite 3.54's ``bm25()`` with each phrase's IDF taken from its row
count, an argument (the counts the search keeps per connection), and a phrase given NULL weighing nothing. Each
store (a ``bench_retrieval.py --parts speed`` 100k store) is copied into the temporary folder (the cache is never
written); the queries are the 200 speed queries reduced to their informative terms, as the search sends them.
The top ``2 x depth`` (80) of the head search's first step is computed three ways, interleaved per query (the
order rotating), thread CPU and wall, after one warm pass:

- ``a``: ``backends/sqlite/fts.py``'s ``_ranked`` as it is: the common-term split's two statements with ``bm25()``
  (rare terms, then ``(common) AND (rare)``, merged), or the one full MATCH when the split does not apply;
- ``b``: the same statements with ``memstone_rank`` and the kept counts (no per-statement IDF pass);
- ``c``: one statement ``(common OR rare) AND (rare)`` with ``memstone_rank``, the repeated rare phrases given
  NULL, so each row holding a rare term is scored once (the full MATCH when the split does not apply, or when the
  rare terms find fewer than 80 rows, as ``a`` does).

``b`` and ``c`` are compared with ``a`` on every query: the (row id, score) lists, bit for bit. Then
``search(mode="fts")`` through the service, with ``SQLiteFullText._ranked`` as it is and replaced by ``c`` in this
process only (alternating per query, one service, the same kept counts), wall and thread CPU, and the top-10 hits
of both compared.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import apsw
import bench_retrieval as br
from fts_rank_probe import p

import memstone
from memstone.backends.sqlite import fts as sqlite_fts
from memstone.backends.sqlite.fts import _RANKED, COMMON_ROWS, COMMON_SHARE, match_expression
from memstone.domain.analyzer import informative_terms, query_terms
from memstone.domain.search import candidate_depth

FTS = "memory_entry_search_fts"
SOURCE = Path(__file__).resolve().parent / "fts_rank_c" / "memstone_rank.c"
ENTRY = "sqlite3_memstonerank_init"
WIDE = candidate_depth(br.LIMIT) * 2  # the search's ``depth * _WIDEN``

Ranked = list[tuple[int, float]]
Query = Callable[[str, Sequence[object]], Sequence[Any]]


def compile_extension(folder: Path) -> Path:
    """``memstone_rank.c`` built as a loadable SQLite extension (SQLite's headers of the system: the FTS5 API
    structs only grow, so an older header serves the SQLite that apsw bundles)."""
    out = folder / "memstone_rank.so"
    cmd = ["gcc", "-O2", "-fPIC", "-shared", "-ffp-contract=off", "-Wall", "-o", str(out), str(SOURCE), "-lm"]
    subprocess.run(cmd, check=True)
    return out


def load(conn: apsw.Connection, ext: Path) -> None:
    conn.enable_load_extension(True)
    conn.load_extension(str(ext), ENTRY)
    conn.enable_load_extension(False)


def c_ranked_sql(phrases: int) -> str:
    counts = "".join(", ?" for _ in range(phrases))
    return _RANKED.replace(f"bm25({FTS})", f"memstone_rank({FTS}{counts})")


def split(terms: Sequence[str], df: dict[str, int], rows: int) -> tuple[list[str], list[str]] | None:
    """The rare and common terms when the search's split applies (``fts.SQLiteFullText._ranked``)."""
    if len(terms) < 2:
        return None
    rare = [t for t in terms if df[t] / max(1, rows) <= COMMON_SHARE]
    common = [t for t in terms if df[t] / max(1, rows) > COMMON_SHARE]
    if rare and common and sum(df[t] for t in common) >= COMMON_ROWS:
        return rare, common
    return None


def merged(first: Sequence[Any], both: Sequence[Any], wide: int) -> Ranked:
    scores = {int(k): float(v) for k, v in first}
    scores.update((int(k), float(v)) for k, v in both)
    return sorted(scores.items(), key=lambda kv: (kv[1], kv[0]))[:wide]


def rank_a(q: Query, terms: Sequence[str], df: dict[str, int], rows: int, wide: int) -> Ranked:
    """Today's ``_ranked``: bm25(), the split's two statements or the full MATCH."""
    s = split(terms, df, rows)
    if s is not None:
        rare, common = s
        first = q(_RANKED, [match_expression(rare), wide])
        if len(first) >= wide:
            return merged(
                first, q(_RANKED, [f"({match_expression(common)}) AND ({match_expression(rare)})", wide]), wide
            )
    return [(int(k), float(v)) for k, v in q(_RANKED, [match_expression(terms), wide])]


def rank_b(q: Query, terms: Sequence[str], df: dict[str, int], rows: int, wide: int) -> Ranked:
    """The same statements, ``memstone_rank`` with the kept counts."""
    s = split(terms, df, rows)
    if s is not None:
        rare, common = s
        first = q(c_ranked_sql(len(rare)), [*(df[t] for t in rare), match_expression(rare), wide])
        if len(first) >= wide:
            both = f"({match_expression(common)}) AND ({match_expression(rare)})"
            second = q(c_ranked_sql(len(common) + len(rare)), [*(df[t] for t in common + rare), both, wide])
            return merged(first, second, wide)
    full = q(c_ranked_sql(len(terms)), [*(df[t] for t in terms), match_expression(terms), wide])
    return [(int(k), float(v)) for k, v in full]


def rank_c(q: Query, terms: Sequence[str], df: dict[str, int], rows: int, wide: int) -> Ranked:
    """One statement: the rows holding a rare term, each scored once over the whole query (common terms first, as
    the split's second statement adds them; the repeated rare phrases weigh nothing)."""
    s = split(terms, df, rows)
    if s is not None:
        rare, common = s
        m = f"({match_expression(common + rare)}) AND ({match_expression(rare)})"
        counts: list[int | None] = [df[t] for t in common + rare]
        got = q(c_ranked_sql(len(common) + 2 * len(rare)), [*counts, *([None] * len(rare)), m, wide])
        if len(got) >= wide:
            return [(int(k), float(v)) for k, v in got]
    full = q(c_ranked_sql(len(terms)), [*(df[t] for t in terms), match_expression(terms), wide])
    return [(int(k), float(v)) for k, v in full]


FORMS = {"a": rank_a, "b": rank_b, "c": rank_c}


def scalar(conn: apsw.Connection, sql: str, args: Sequence[object] = ()) -> int:
    v = conn.execute(sql, args).fetchall()[0][0]
    assert isinstance(v, int)
    return v


def counts(conn: apsw.Connection, terms: Sequence[str], df: dict[str, int]) -> None:
    for t in terms:
        if t not in df:
            df[t] = scalar(conn, f"SELECT count(*) FROM {FTS} WHERE {FTS} MATCH ?", [match_expression([t])])


def statements(path: Path, ext: Path, queries: list[str], passes: int) -> None:
    conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    load(conn, ext)

    def q(sql: str, args: Sequence[object]) -> Sequence[Any]:
        return conn.execute(sql, args).fetchall()

    rows = scalar(conn, f"SELECT count(*) FROM {FTS}_docsize")
    df: dict[str, int] = {}
    cases = [ts for ts in (informative_terms(query_terms(x)) for x in queries) if ts]
    for ts in cases:
        counts(conn, ts, df)
    n_split = sum(split(ts, df, rows) is not None for ts in cases)
    same = {"b": 0, "c": 0}
    ids = {"b": 0, "c": 0}
    for ts in cases:
        ref = rank_a(q, ts, df, rows, WIDE)
        for k in same:
            got = FORMS[k](q, ts, df, rows, WIDE)
            same[k] += got == ref
            ids[k] += [r for r, _ in got] == [r for r, _ in ref]
    print(f"\n# {path.name}: {len(cases)} queries with informative terms, {n_split} take the split")
    print(
        "equal to a, (row id, score) bit for bit: "
        + ", ".join(f"{k} {same[k]}/{len(cases)} (row ids {ids[k]}/{len(cases)})" for k in same)
    )
    cpu: dict[str, list[float]] = {k: [] for k in FORMS}
    wall: dict[str, list[float]] = {k: [] for k in FORMS}
    delta: dict[str, list[float]] = {k: [] for k in ("a-b", "a-c")}
    loads = [os.getloadavg()[0]]
    for n in range(passes + 1):
        for i, ts in enumerate(cases):
            spent: dict[str, float] = {}
            order = list(FORMS)[i % 3 :] + list(FORMS)[: i % 3]
            for k in order:
                w, c = time.perf_counter(), time.thread_time()
                FORMS[k](q, ts, df, rows, WIDE)
                if n:  # pass 0 warms the page cache
                    cpu[k].append((time.thread_time() - c) * 1000)
                    wall[k].append((time.perf_counter() - w) * 1000)
                    spent[k] = cpu[k][-1]
            if n:
                delta["a-b"].append(spent["a"] - spent["b"])
                delta["a-c"].append(spent["a"] - spent["c"])
        loads.append(os.getloadavg()[0])
    conn.close()
    print(f"\n{len(cases)} queries x {passes} passes, ms; load 1m {min(loads):.1f}-{max(loads):.1f}\n")
    print("| form | CPU p50 | CPU p95 | CPU mean | wall p50 | wall p95 |\n|---|---|---|---|---|---|")
    for k in FORMS:
        print(
            f"| {k} | {statistics.median(cpu[k]):.2f} | {p(cpu[k], 0.95):.2f} | {statistics.mean(cpu[k]):.2f} | "
            f"{statistics.median(wall[k]):.2f} | {p(wall[k], 0.95):.2f} |"
        )
    print(
        "\nper-query CPU saved, median: "
        + ", ".join(f"{k} {statistics.median(v):.2f} ms (mean {statistics.mean(v):.2f})" for k, v in delta.items())
    )


def patched_ranked(ext: Path) -> Callable[..., Sequence[Any]]:
    """``SQLiteFullText._ranked`` replaced by form ``c`` (in this process only)."""

    def _ranked(self: Any, conn: Any, terms: Sequence[str], wide: int) -> Sequence[Any]:
        raw = self._engine.raw
        if getattr(self, "_probe_loaded", None) is not raw:
            load(raw, ext)
            self._probe_loaded = raw
        self._shares(conn, terms)  # the kept counts, for every term (c needs a single term's count too)
        return rank_c(lambda sql, args: conn.q(sql, list(args)), terms, self._df, self._rows, wide)

    return _ranked


async def searches(path: Path, ext: Path, memory_id: str, queries: list[str], passes: int) -> None:
    kept = sqlite_fts.SQLiteFullText._ranked
    forms: dict[str, Callable[..., Sequence[Any]]] = {"search as is": kept, "search with c": patched_ranked(ext)}
    cpu: dict[str, list[float]] = {k: [] for k in forms}
    wall: dict[str, list[float]] = {k: [] for k in forms}
    differ = 0
    try:
        async with memstone.open_service(f"sqlite:///{path}", embedding=None) as svc:
            head = await svc.head(memory_id)
            loads = [os.getloadavg()[0]]
            for n in range(passes + 1):
                for i, x in enumerate(queries):
                    hits = {}
                    for k in list(forms)[i % 2 :] + list(forms)[: i % 2]:
                        sqlite_fts.SQLiteFullText._ranked = forms[k]  # type: ignore[method-assign]
                        w, c = time.perf_counter(), time.thread_time()
                        found = await svc.search(x, memories=[head], limit=br.LIMIT, mode="fts")
                        if n:
                            cpu[k].append((time.thread_time() - c) * 1000)
                            wall[k].append((time.perf_counter() - w) * 1000)
                        hits[k] = [(h.entry_id, h.score) for h in found.hits]
                    differ += n == 1 and hits["search as is"] != hits["search with c"]
                loads.append(os.getloadavg()[0])
    finally:
        sqlite_fts.SQLiteFullText._ranked = kept  # type: ignore[method-assign]
    print(
        f"\nsearch(mode='fts'), {len(queries)} queries x {passes} passes, alternating, ms; "
        f"load 1m {min(loads):.1f}-{max(loads):.1f}; top-10 (entry, score) lists differing: {differ}\n"
    )
    print("| search | wall p50 | wall p95 | CPU p50 | CPU p95 |\n|---|---|---|---|---|")
    for k in forms:
        print(
            f"| {k} | {statistics.median(wall[k]):.2f} | {p(wall[k], 0.95):.2f} | "
            f"{statistics.median(cpu[k]):.2f} | {p(cpu[k], 0.95):.2f} |"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    ap.add_argument("stores", type=Path, nargs="+", help="speed-*-100000-<fp>.db stores of bench_retrieval.py")
    ap.add_argument("--passes", type=int, default=3)
    args = ap.parse_args()
    queries = br.speed_queries(200)
    with tempfile.TemporaryDirectory(prefix="fts-c-probe-") as tmp:
        ext = compile_extension(Path(tmp))
        print(f"# fts_c_probe: SQLite {apsw.sqlite_lib_version()}, {len(queries)} speed queries, top {WIDE}")
        for store in args.stores:
            memory_id = json.loads(store.with_suffix(".json").read_text())["memory_id"]
            copy = Path(tmp) / store.name
            shutil.copy(store, copy)
            statements(copy, ext, queries, args.passes)
            asyncio.run(searches(copy, ext, memory_id, queries, args.passes))
            copy.unlink()


if __name__ == "__main__":
    main()
