"""PostgreSQL's head full-text candidates are exactly FTS5's BM25 ranking of the rows that pass the filters
(backends/postgres/fts.py, issue 13), whichever statement the engine chose to reach them.

The reference is computed here, in Python, from the head rows' analyzer text: BM25 with ``k1 = 1.2``, ``b = 0.75``,
``idf = ln((N - df + 0.5) / (df + 0.5))`` floored at 1e-6, N, df and the average length over the whole store."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

import psycopg

from memstone import EntryInput, open_service
from memstone.backends.postgres.engine import PostgresConn
from memstone.backends.postgres.fts import PostgresFullText
from memstone.backends.sql.engine import Candidates
from memstone.domain.analyzer import informative_terms, query_terms
from memstone.domain.search import candidate_depth

RARE = ["zeolite", "quokka", "fjord", "basalt", "mistral"]
QUERY = "zeolite quokka fjord basalt mistral deploy server"
FILLER = " ".join(f"word{k}" for k in range(40))  # long entries: a single rare word scores low in them


def texts() -> list[tuple[str, str]]:
    out = [("note", f"routine entry {i} about nothing in particular") for i in range(500)]
    out += [("note", f"deploy of service {i} finished") for i in range(300)]  # deploy and server: common
    out += [("note", f"server {i} is up") for i in range(300)]
    out += [("note", f"deploy server deploy server {i}") for i in range(9)]  # short and full of the common words
    out += [("note", f"{RARE[i % 5]} {FILLER} {i}") for i in range(90)]  # each rare word in 18 rows
    out += [("fact", f"deploy notes {i}: {FILLER}") for i in range(20)]  # facts: long, so they score low
    out.append(("note", "zeolite quokka fjord deploy server: the one entry that answers"))
    return out


def reference(
    conn: psycopg.Connection[tuple[object, ...]], terms: Sequence[str], where: str, arg: object
) -> list[tuple[float, int]]:
    """Every head row passing ``where`` that holds a term, as (-score, projection id), best first."""
    rows = conn.execute("SELECT projection_id, searchable_text FROM memory_entry_heads").fetchall()
    chosen = {r[0] for r in conn.execute(f"SELECT projection_id FROM memory_entry_heads h WHERE {where}", (arg,))}
    docs = {int(str(pid)): Counter(str(text).split()) for pid, text in rows}
    lengths = {pid: sum(c.values()) for pid, c in docs.items()}
    n = len(docs)
    avgdl = max(sum(lengths.values()) / n, 1)
    idf = {t: max(math.log((n - (df := sum(t in c for c in docs.values())) + 0.5) / (df + 0.5)), 1e-6) for t in terms}
    out = []
    for pid, c in docs.items():
        held = [t for t in dict.fromkeys(terms) if t in c]
        if pid in chosen and held:
            score = sum(idf[t] * c[t] * 2.2 / (c[t] + 1.2 * (0.25 + 0.75 * lengths[pid] / avgdl)) for t in held)
            out.append((-score, pid))
    return sorted(out)


def same_ranking(got: list[tuple[float, int]], ref: list[tuple[float, int]], k: int) -> None:
    """``got`` is ``ref``'s first ``k``: the same scores (to 1e-9), the same rows but among equal last scores."""
    canon = sorted((round(s, 9), pid) for s, pid in got)
    want = [(round(s, 9), pid) for s, pid in ref][:k]
    assert [s for s, _ in canon] == [s for s, _ in want]
    last = want[-1][0] if want else None
    assert [x for x in canon if x[0] != last] == [x for x in want if x[0] != last]


async def build(url: str) -> str:
    rows = texts()
    async with open_service(url, embedding=None) as svc:
        rev = await svc.remember(None, entries=[EntryInput(kind=kind, text=t) for kind, t in rows])
        other = await svc.remember(None, entries=[EntryInput(kind="note", text="deploy server zeolite elsewhere")])
        assert rev is not None and other is not None
        return rev.memory_id


def candidates(url: str, terms: Sequence[str], where: Sequence[str], args: Sequence[object]) -> list[tuple[float, int]]:
    with psycopg.connect(url, autocommit=True) as raw:
        ask = Candidates(["-"], terms, candidate_depth(10), where, args)
        return [(-r.score, r.key) for r in PostgresFullText().head_candidates(PostgresConn(raw), ask)]


async def test_the_candidates_are_the_bm25_ranking_of_the_memory(postgres_url: str) -> None:
    memory_id = await build(postgres_url)
    terms = informative_terms(query_terms(QUERY))
    assert terms == [*RARE, "deploy", "server"]
    got = candidates(postgres_url, terms, ["h.memory_artifact_id IN (?)"], [memory_id])
    with psycopg.connect(postgres_url) as conn:
        ref = reference(conn, terms, "h.memory_artifact_id = %s", memory_id)
    assert len(ref) > 2 * candidate_depth(10)
    same_ranking(got, ref, candidate_depth(10))
    assert len(got) == candidate_depth(10)


async def test_a_filter_that_most_best_rows_fail_still_gets_the_best_rows_that_pass(postgres_url: str) -> None:
    memory_id = await build(postgres_url)
    terms = informative_terms(query_terms(QUERY))
    where = ["h.memory_artifact_id IN (?)", "h.kind = ?"]
    got = candidates(postgres_url, terms, where, [memory_id, "fact"])
    with psycopg.connect(postgres_url) as conn:
        ref = reference(conn, terms, "h.kind = %s", "fact")
        unfiltered = reference(conn, terms, "h.memory_artifact_id = %s", memory_id)
    # The facts score low: fewer than depth of them are among the best 2 x depth of the Memory.
    assert len({pid for _, pid in ref} & {pid for _, pid in unfiltered[: 2 * candidate_depth(10)]}) < 40
    same_ranking(got, ref, candidate_depth(10))
    assert len(got) == 20


async def test_a_term_given_twice_counts_once(postgres_url: str) -> None:
    # The statement reads each distinct term's postings once (one index scan per term): a repeated term must not
    # add its contribution twice, as ``term = ANY(…)`` never did.
    memory_id = await build(postgres_url)
    where = ["h.memory_artifact_id IN (?)"]
    once = candidates(postgres_url, ["zeolite", "deploy", "server"], where, [memory_id])
    twice = candidates(postgres_url, ["server", "zeolite", "deploy", "zeolite", "server"], where, [memory_id])
    assert once == twice and len(once) == candidate_depth(10)
