"""Would a MaxScore top-k beat FTS5's own ranking? (issue 15; a probe, not the service's code path).

    nice .venv/bin/python bench/maxscore_probe.py bench/.cache/speed-none-10000-<fp>.db
    nice .venv/bin/python bench/maxscore_probe.py bench/.cache/speed-none-100000-<fp>.db

The stores are the ones ``bench_retrieval.py --parts speed --speed-models none`` builds; the queries are its
speed queries, reduced to their informative terms as the search does. For each query, the top ``2 × depth`` (80,
the first step of the SQLite head search) by three methods, timed in thread CPU, interleaved, two passes:

- ``fts5``: the statement the search runs (``bm25()`` over every match, ``ORDER BY s, rowid LIMIT 80``);
- ``maxscore-fts5``: MaxScore with FTS5 doing the reading: terms rarest first, the first k are essential; the
  docs holding an essential term are scored exactly by two ranked statements (``E AND N`` and ``E``); it stops
  when the 80th exact score exceeds the sum of the other terms' bounds ``(k1 + 1) · idf``, else k + 1;
- ``maxscore-postings``: MaxScore over our own postings (a table ``(term, doc, tf)`` built once into a copy of the
  store, with per-term df, max tf and min document length): essential postings read whole, the others looked up
  for the candidate docs only, BM25 summed in query order as FTS5 does, bounds from (max tf, min length).

Each method's list of row ids is compared with ``fts5``'s (order and ties included).
"""

from __future__ import annotations

import math
import shutil
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import apsw
import bench_retrieval as br

from memstone.backends.sqlite.fts import _RANKED, match_expression
from memstone.domain.analyzer import informative_terms, query_terms

K1, B, WIDE = 1.2, 0.75, 80
Ranked = list[tuple[int, float]]


def postings_copy(src: Path) -> Path:
    """A copy of the store with a postings table built from FTS5's own tokens (once)."""
    dst = Path("/tmp") / f"maxscore-{src.stem}.db"
    if dst.exists():
        return dst
    shutil.copy(src, dst)
    c = apsw.Connection(str(dst))
    c.execute("CREATE VIRTUAL TABLE temp.vi USING fts5vocab(main, memory_entry_search_fts, instance)")
    c.execute("BEGIN")
    c.execute("CREATE TABLE post(term TEXT, doc INTEGER, tf INTEGER, PRIMARY KEY (term, doc)) WITHOUT ROWID")
    c.execute("INSERT INTO post SELECT term, doc, count(*) FROM temp.vi GROUP BY term, doc")
    c.execute("CREATE TABLE dl(doc INTEGER PRIMARY KEY, n INTEGER)")
    c.execute("INSERT INTO dl SELECT doc, count(*) FROM temp.vi GROUP BY doc")
    c.execute("CREATE TABLE tstat(term TEXT PRIMARY KEY, df INTEGER, maxtf INTEGER, mindl INTEGER) WITHOUT ROWID")
    c.execute(
        "INSERT INTO tstat SELECT p.term, count(*), max(p.tf), min(d.n) FROM post p JOIN dl d ON d.doc = p.doc "
        "GROUP BY p.term"
    )
    c.execute("COMMIT")
    c.close()
    return dst


class Probe:
    def __init__(self, path: Path) -> None:
        self.c = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
        self.c.execute("CREATE VIRTUAL TABLE temp.v USING fts5vocab(main, memory_entry_search_fts, row)")
        self.n, total = self.q("SELECT count(*), sum(n) FROM dl")[0]
        self.avg = total / self.n

    def q(self, sql: str, args: Sequence[object] = ()) -> list[tuple[object, ...]]:
        return list(self.c.execute(sql, args))

    def idf(self, df: int) -> float:
        x = math.log((self.n - df + 0.5) / (df + 0.5))
        return x if x > 0 else 1e-6  # FTS5's bm25() clamps the same way

    def fts5(self, terms: list[str]) -> Ranked:
        return [(int(r), float(s)) for r, s in self.q(_RANKED, [match_expression(terms), WIDE])]  # type: ignore[arg-type]

    def maxscore_fts5(self, terms: list[str]) -> Ranked:
        marks = ",".join("?" * len(terms))
        df = {str(t): int(d) for t, d in self.q(f"SELECT term, doc FROM temp.v WHERE term IN ({marks})", terms)}  # type: ignore[call-overload]
        present = sorted((t for t in terms if df.get(t)), key=lambda t: df[t])
        for k in range(1, len(present)):
            ess = [t for t in terms if t in present[:k]]
            rest = [t for t in terms if t in present[k:]]
            bound = sum(self.idf(df[t]) * (K1 + 1) for t in rest) * (1 + 1e-9)
            e, r = match_expression(ess), match_expression(rest)
            got = {int(d): float(s) for d, s in self.q(_RANKED, [e, WIDE])}  # type: ignore[arg-type]
            got.update({int(d): float(s) for d, s in self.q(_RANKED, [f"({e}) AND ({r})", WIDE])})  # type: ignore[arg-type]
            ranked = sorted(got.items(), key=lambda x: (x[1], x[0]))[:WIDE]
            if len(ranked) >= WIDE and -ranked[-1][1] > bound:
                return ranked
        return self.fts5(terms)

    def contrib(self, idf: float, tf: int, d: int) -> float:
        return idf * (tf * (K1 + 1)) / (tf + K1 * (1 - B + B * d / self.avg))

    def maxscore_postings(self, terms: list[str]) -> Ranked:
        marks = ",".join("?" * len(terms))
        st = {str(r[0]): r[1:] for r in self.q(f"SELECT * FROM tstat WHERE term IN ({marks})", terms)}
        idf = {t: self.idf(int(st[t][0])) for t in terms if t in st}  # type: ignore[call-overload]
        ub = {t: self.contrib(idf[t], int(st[t][1]), int(st[t][2])) * (1 + 1e-9) for t in idf}  # type: ignore[call-overload]
        order = sorted(idf, key=lambda t: -ub[t])
        tfs: dict[int, dict[str, int]] = {}
        for k, t in enumerate(order, start=1):
            for doc, tf in self.q("SELECT doc, tf FROM post WHERE term = ?", (t,)):
                tfs.setdefault(int(doc), {})[t] = int(tf)  # type: ignore[call-overload]
            rest = order[k:]
            if rest and len(tfs) < WIDE:
                continue
            docs = list(tfs)
            dm = ",".join("?" * len(docs))
            for x in rest:
                for doc, tf in self.q(f"SELECT doc, tf FROM post WHERE term = ? AND doc IN ({dm})", (x, *docs)):
                    tfs[int(doc)][x] = int(tf)  # type: ignore[call-overload]
            dls = {int(d): int(n) for d, n in self.q(f"SELECT doc, n FROM dl WHERE doc IN ({dm})", docs)}  # type: ignore[call-overload]
            full = {d: sum(self.contrib(idf[x], tfs[d][x], dls[d]) for x in terms if x in tfs[d]) for d in docs}
            top = sorted(full.items(), key=lambda z: (-z[1], z[0]))[:WIDE]
            if not rest or (len(top) >= WIDE and top[-1][1] > sum(ub[x] for x in rest)):
                return [(d, -s) for d, s in top]
            for d in docs:  # the non-essential terms are read again with the next, larger candidate set
                tfs[d] = {x: v for x, v in tfs[d].items() if x in order[:k]}
        return []


def main() -> None:
    src = Path(sys.argv[1])
    probe = Probe(postings_copy(src))
    queries = [t for t in (informative_terms(query_terms(q)) for q in br.speed_queries(200)) if t]
    methods: dict[str, Callable[[list[str]], Ranked]] = {
        "fts5": probe.fts5,
        "maxscore-fts5": probe.maxscore_fts5,
        "maxscore-postings": probe.maxscore_postings,
    }
    cpu: dict[str, list[float]] = {m: [] for m in methods}
    differ = dict.fromkeys(methods, 0)
    for _ in range(2):
        for terms in queries:
            want = None
            for name, f in methods.items():
                t = time.thread_time()
                got = [d for d, _ in f(terms)]
                cpu[name].append((time.thread_time() - t) * 1000)
                want = got if want is None else want
                differ[name] += got != want
    print(f"{src.name}: {probe.n} rows, {len(queries)} queries x 2 passes, load {br.load()}\n")
    print("| method | thread CPU p50 ms | p95 ms | queries whose top 80 differ from fts5 |\n|---|---|---|---|")
    for name, lat in cpu.items():
        print(f"| {name} | {statistics.median(lat):.2f} | {br.pct(lat, 0.95):.2f} | {differ[name]} |")


if __name__ == "__main__":
    main()
