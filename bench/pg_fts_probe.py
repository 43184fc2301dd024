"""PostgreSQL's head full-text candidates on a kept 100k speed store: the statements of 2e9aa75 and ae97122 and
today's, timed in alternation on one connection, their lists compared (issue 13; docs/benchmarks.md, the 100k
section).

    PYTHONPATH=src nice .venv/bin/python bench/pg_fts_probe.py postgresql://…/bench_speed_minilm_l6_int8_100000_<fp>

The store is one ``bench_retrieval.py --parts speed --url postgresql://…`` builds and keeps; the queries are its 200
speed queries reduced to their informative terms, as the search sends them, with the search's own filter (the
Memory) and depth (``candidate_depth(10)`` = 40). ae97122's first statement (the best ``2 x depth`` matches with
their head rows) and today's are compared row for row, scores included (float equality). ``--explain N`` prints
``EXPLAIN (ANALYZE, BUFFERS)`` of the statements for query N instead.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_retrieval as br
import psycopg

from memstone.backends.postgres.engine import PostgresConn
from memstone.backends.postgres.fts import _TOP, K1, PostgresFullText
from memstone.backends.sql.engine import Candidates
from memstone.domain.analyzer import informative_terms, query_terms
from memstone.domain.search import candidate_depth

B = 0.75
# The scoring of 2e9aa75 and ae97122 (before the per-term scan): every posting of the terms scored, grouped by row.
SCORED = (
    "WITH st AS (SELECT coalesce(sum(docs), 0)::float8 AS n, coalesce(sum(total_len), 0)::float8 AS len "
    "FROM memory_fts_stats), "
    "df AS MATERIALIZED (SELECT term, count(*)::float8 AS df FROM memory_entry_postings "
    "WHERE term = ANY(%s::text[]) GROUP BY term), "
    "q AS (SELECT df.term, greatest(ln((st.n - df.df + 0.5) / (df.df + 0.5)), 1e-6) AS idf, "
    "CASE WHEN st.n > 0 THEN greatest(st.len / st.n, 1) ELSE 1 END AS avgdl FROM df, st), "
    "m AS MATERIALIZED (SELECT p.projection_id, "
    f"sum(q.idf * (p.tf * {K1 + 1}) / (p.tf + {K1} * ({1 - B} + {B} * p.dl / q.avgdl))) AS score "
    "FROM memory_entry_postings p JOIN q ON q.term = p.term WHERE p.term = ANY(%s::text[]) "
    "GROUP BY p.projection_id"
)
# The head search of 2e9aa75 (``PostgresFullText.head_candidates`` before issue 13's change), for the comparison.
BEFORE = (
    SCORED + ") SELECT h.projection_id, m.score FROM m CROSS JOIN LATERAL (SELECT * FROM memory_entry_heads h "
    "WHERE h.projection_id = m.projection_id AND h.memory_artifact_id IN (%s)) AS h "
    "ORDER BY m.score DESC, h.projection_id LIMIT %s"
)
# The first statement of ``head_candidates`` at ae97122 (issue 13's "best 2 x depth first", before the per-term scan).
MAIN = (
    SCORED + " ORDER BY score DESC, p.projection_id LIMIT %s) "
    "SELECT h.memory_artifact_id, h.entry_id, h.entry_version_id, h.entry_content_hash, m.projection_id, "
    "m.score FROM m LEFT JOIN LATERAL (SELECT h.memory_artifact_id, h.entry_id, h.entry_version_id, "
    "h.entry_content_hash FROM memory_entry_heads h WHERE h.projection_id = m.projection_id "
    "AND h.memory_artifact_id IN (%s) OFFSET 0) AS h ON true ORDER BY m.score DESC, m.projection_id"
)


def pct(xs: list[float], q: float) -> float:
    return sorted(xs)[min(len(xs) - 1, int(q * len(xs)))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("url", help="the kept speed store's database")
    ap.add_argument("--passes", type=int, default=2)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--explain", type=int, help="print both plans of this query instead")
    args = ap.parse_args()
    raw = psycopg.connect(args.url, autocommit=True)
    conn = PostgresConn(raw)
    memory_id = raw.execute("SELECT memory_id FROM bench_loaded").fetchone()[0]  # type: ignore[index]
    fts = PostgresFullText()
    depth = candidate_depth(10)
    where = ["h.memory_artifact_id IN (?)"]
    queries = [informative_terms(query_terms(q)) for q in br.speed_queries(args.queries)]
    if args.explain is not None:
        terms = queries[args.explain]
        print("terms:", terms)
        print("\n-- before (2e9aa75)")
        for r in raw.execute("EXPLAIN (ANALYZE, BUFFERS) " + BEFORE, (terms, terms, memory_id, depth)):
            print(r[0])
        print("\n-- ae97122 (the first statement of head_candidates)")
        for r in raw.execute("EXPLAIN (ANALYZE, BUFFERS) " + MAIN, (terms, terms, 2 * depth, memory_id)):
            print(r[0])
        print("\n-- now (the first statement of head_candidates)")
        sql = PostgresConn._translate(_TOP.format(where=where[0]))
        for r in raw.execute("EXPLAIN (ANALYZE, BUFFERS) " + sql, (terms, 2 * depth, memory_id)):
            print(r[0])
        return
    before: list[float] = []
    main_top: list[float] = []
    now_top: list[float] = []
    now: list[float] = []
    differ = differ_top = 0
    top = PostgresConn._translate(_TOP.format(where=where[0]))
    loads = []
    for _ in range(args.passes):
        loads.append(os.getloadavg()[0])
        for terms in queries:
            t = time.perf_counter()
            old = [int(r[0]) for r in raw.execute(BEFORE, (terms, terms, memory_id, depth)).fetchall()]
            t1 = time.perf_counter()
            new = [r.key for r in fts.head_candidates(conn, Candidates([memory_id], terms, depth, where, [memory_id]))]
            t2 = time.perf_counter()
            wide_main = raw.execute(MAIN, (terms, terms, 2 * depth, memory_id)).fetchall()
            t3 = time.perf_counter()
            wide_now = raw.execute(top, (terms, 2 * depth, memory_id)).fetchall()
            t4 = time.perf_counter()
            before.append((t1 - t) * 1000)
            now.append((t2 - t1) * 1000)
            main_top.append((t3 - t2) * 1000)
            now_top.append((t4 - t3) * 1000)
            differ += old != new
            differ_top += wide_main != wide_now
    loads.append(os.getloadavg()[0])
    print(f"{len(queries)} queries x {args.passes} passes, depth {depth}, load 1m at each pass and the end: {loads}")
    for name, xs in (
        ("before (2e9aa75), the ranked join", before),
        ("now, head_candidates", now),
        ("ae97122, first statement", main_top),
        ("now, first statement", now_top),
    ):
        print(f"{name}: p50 {statistics.median(xs):.2f} ms, p95 {pct(xs, 0.95):.2f} ms")
    print(f"candidate lists differing from 2e9aa75's (order included): {differ} of {len(before)}")
    print(
        f"first statements' {2 * depth} rows differing from ae97122's (scores included): {differ_top} of {len(before)}"
    )


if __name__ == "__main__":
    main()
