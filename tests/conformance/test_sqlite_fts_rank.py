"""memstone_rank, the FTS5 ranking function in C (backends/sqlite/_rank/, issue 15): bm25() bit for bit from the row
counts the search keeps, and the same search hits whether the install compiled it or not."""

from __future__ import annotations

import struct
from pathlib import Path

import apsw
import pytest

from memstone import EntryInput, open_service
from memstone.backends.sql.engine import Candidates
from memstone.backends.sqlite import fts as sqlite_fts
from memstone.backends.sqlite.fts import RANK_LIBRARY, match_expression
from memstone.domain.search import candidate_depth

FTS = "memory_entry_search_fts"
FILLER = " ".join(f"word{k}" for k in range(40))
RARE = ["zeolite", "quokka", "fjord", "basalt", "mistral"]
needs_library = pytest.mark.skipif(not RANK_LIBRARY.exists(), reason=f"memstone_rank not compiled ({RANK_LIBRARY})")


def common_terms_texts() -> list[str]:
    """A store where deploy and server are common (2,110 of 9,000 rows each) and five rare words are in 18 rows each:
    the search's common-term split applies (as in test_sqlite_fts_common_terms.py)."""
    texts = [f"routine entry {i} about nothing in particular" for i in range(4700)]
    texts += [f"deploy of service {i} finished" for i in range(2100)]
    texts += [f"server {i} is up" for i in range(2100)]
    texts += [f"deploy server deploy server {i}" for i in range(9)]
    texts += [f"{RARE[i % 5]} {FILLER} {i}" for i in range(90)]
    texts.append("zeolite quokka fjord deploy server: the one entry that answers")
    return texts


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import asyncio

    path = tmp_path_factory.mktemp("rank") / "m.db"
    texts = common_terms_texts()

    async def write() -> None:
        async with open_service(f"sqlite:///{path}", embedding=None) as svc:
            rev = None
            for i in range(0, len(texts), 1000):
                rev = await svc.remember(rev, entries=[EntryInput(kind="note", text=t) for t in texts[i : i + 1000]])

    asyncio.run(write())
    return path


def bits(rows: list[tuple[int, float]]) -> list[tuple[int, str]]:
    """(row id, the score's 8 bytes): equal only if bit for bit."""
    return [(int(k), struct.pack("<d", v).hex()) for k, v in rows]


@needs_library
def test_memstone_rank_is_bm25_bit_for_bit(store: Path) -> None:
    conn = apsw.Connection(str(store), flags=apsw.SQLITE_OPEN_READONLY)
    conn.enable_load_extension(True)
    conn.load_extension(str(RANK_LIBRARY))
    conn.enable_load_extension(False)

    def n(term: str) -> int:
        return int(conn.execute(f"SELECT count(*) FROM {FTS} WHERE {FTS} MATCH ?", [match_expression([term])]).get)

    def ranked(score: str, match: str, args: list[object] | None = None) -> dict[int, float]:
        sql = f"SELECT rowid, {score} FROM {FTS} WHERE {FTS} MATCH ? ORDER BY rowid"
        return {int(k): float(v) for k, v in conn.execute(sql, [*(args or []), match])}

    def rank(phrases: int) -> str:
        return f"memstone_rank({FTS}, NULL{', ?' * phrases})"  # NULL: no LIMIT, every row exact

    bm25 = f"bm25({FTS})"
    try:
        # one phrase
        one = match_expression(["deploy"])
        assert bits(sorted(ranked(rank(1), one, [n("deploy")]).items())) == bits(sorted(ranked(bm25, one).items()))
        # several phrases, common and rare
        terms = ["deploy", "server", "zeolite", "quokka"]
        full = ranked(bm25, match_expression(terms))
        mine = ranked(rank(4), match_expression(terms), [n(t) for t in terms])
        assert len(full) > 4000 and bits(sorted(mine.items())) == bits(sorted(full.items()))
        # the search's split as one statement: (common OR rare) AND (rare), the repeated rare phrases NULL, scores
        # each row holding a rare word as the whole query's bm25() does
        common, rare = ["deploy", "server"], ["zeolite", "quokka"]
        both = f"({match_expression(common + rare)}) AND ({match_expression(rare)})"
        split = ranked(rank(6), both, [*(n(t) for t in common + rare), None, None])
        holding = set(ranked(bm25, match_expression(rare)))
        assert set(split) == holding and len(holding) == 37
        assert bits(sorted(split.items())) == bits(sorted((k, v) for k, v in full.items() if k in holding))
        # a phrase repeated with its count weighs twice, as in bm25()
        twice = f"{match_expression(['zeolite'])} OR {match_expression(['zeolite'])}"
        got = ranked(rank(2), twice, [n("zeolite"), n("zeolite")])
        assert bits(sorted(got.items())) == bits(sorted(ranked(bm25, twice).items()))
        # a NULL phrase weighs nothing: "fjord" OR "deploy" with deploy NULL scores the fjord rows as "fjord" alone
        nulled = ranked(rank(2), match_expression(["fjord", "deploy"]), [n("fjord"), None])
        alone = ranked(bm25, match_expression(["fjord"]))
        assert bits(sorted((k, v) for k, v in nulled.items() if k in alone)) == bits(sorted(alone.items()))
        assert {v for k, v in nulled.items() if k not in alone} == {0.0}
        # a count per phrase, or a clear error
        with pytest.raises(apsw.SQLError, match="2 phrases but 1 row counts"):
            ranked(rank(1), match_expression(["fjord", "deploy"]), [1])
    finally:
        conn.close()


QUERIES = [
    "zeolite quokka fjord basalt mistral deploy server",  # the common-term split, one statement
    "zeolite deploy server",  # the split where the rare word finds fewer than 2 x depth rows: the full MATCH
    "deploy server routine",  # common words only: the full MATCH with the kept counts
    "quokka",  # one word: bm25() either way
    "basalt mistral",
]


async def hits_and_candidates(path: Path) -> tuple[str, list[object]]:
    out: list[object] = []
    async with open_service(f"sqlite:///{path}", embedding=None) as svc:
        (memory,) = await svc.memories()
        head = await svc.head(memory.memory_id)
        engine = svc.backend.engine  # type: ignore[attr-defined]
        for q in QUERIES:
            found = await svc.search(q, memories=[head], mode="fts", limit=10)
            out.append([(h.entry_id, h.score) for h in found.hits])
        for terms in (["zeolite", "quokka", "fjord", "basalt", "mistral", "deploy", "server"], ["deploy", "server"]):
            ask = Candidates(
                [head.memory_id], terms, candidate_depth(10), ["h.memory_artifact_id IN (?)"], [head.memory_id]
            )
            out.append(
                [(r.key, struct.pack("<d", r.score).hex()) for r in engine.fts.head_candidates(engine.conn, ask)]
            )
        return svc.backend.capabilities.fts_ranking, out


@needs_library
async def test_the_search_finds_the_same_with_and_without_memstone_rank(
    store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ranking, with_c = await hits_and_candidates(store)
    assert ranking.startswith("memstone_rank (C")
    # A machine whose install compiled nothing: the library is not there.
    monkeypatch.setattr(sqlite_fts, "RANK_LIBRARY", tmp_path / "absent" / RANK_LIBRARY.name)
    ranking, without = await hits_and_candidates(store)
    assert ranking.startswith("bm25() (memstone_rank was not compiled at install")
    assert without == with_c
    assert all(with_c[: len(QUERIES)]) and len(with_c[len(QUERIES)]) == candidate_depth(10)  # type: ignore[arg-type]
    # A library that does not load (built for another machine): bm25(), the same hits.
    broken = tmp_path / RANK_LIBRARY.name
    broken.write_bytes(b"not a shared library")
    monkeypatch.setattr(sqlite_fts, "RANK_LIBRARY", broken)
    ranking, damaged = await hits_and_candidates(store)
    assert ranking.startswith("bm25() (memstone_rank did not load from")
    assert damaged == with_c


def test_ci_built_memstone_rank(servers_required: bool) -> None:
    """CI's install (scripts/setup: pip install -e . with gcc and libsqlite3-dev) must have compiled the library."""
    if not servers_required:
        pytest.skip("only checked where the install must build memstone_rank (CI: MEMSTONE_REQUIRE_SERVERS=1)")
    assert RANK_LIBRARY.exists(), f"{RANK_LIBRARY} was not built: is a C compiler with sqlite3ext.h installed?"
    conn = apsw.Connection(":memory:")
    conn.enable_load_extension(True)
    conn.load_extension(str(RANK_LIBRARY))
    conn.execute(f"CREATE VIRTUAL TABLE {FTS} USING fts5(t)")
    conn.execute(f"INSERT INTO {FTS} VALUES ('a b'), ('b c')")
    (row,) = conn.execute(f"SELECT rowid, memstone_rank({FTS}, NULL, 1) FROM {FTS} WHERE {FTS} MATCH 'a'").fetchall()
    assert row[0] == 1 and row[1] < 0


def memory_index(texts: list[str]) -> apsw.Connection:
    """An in-memory FTS5 table ``t`` of ``texts`` (row ids 1, 2, ...) with memstone_rank loaded."""
    conn = apsw.Connection(":memory:")
    conn.enable_load_extension(True)
    conn.load_extension(str(RANK_LIBRARY))
    conn.enable_load_extension(False)
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(x)")
    conn.executemany("INSERT INTO t (rowid, x) VALUES (?, ?)", list(enumerate(texts, start=1)))
    return conn


def counts(conn: apsw.Connection, terms: list[str]) -> list[int]:
    return [int(conn.execute("SELECT count(*) FROM t WHERE t MATCH ?", [match_expression([w])]).get) for w in terms]


@needs_library
def test_pruned_top_wide_is_bm25s_bit_for_bit() -> None:
    # Zipf-like words, lengths 1-40, and repeated texts (exact ties); the search's statement with its LIMIT passed to
    # memstone_rank returns bm25()'s top ``wide`` bit for bit, ties by row id, for every LIMIT.
    import random

    rnd = random.Random(15)
    words = [f"w{k}" for k in range(40)]
    weights = [1 / (k + 1) for k in range(40)]
    texts = [" ".join(rnd.choices(words, weights, k=rnd.randint(1, 40))) for _ in range(3000)]
    texts += [texts[k] for k in rnd.choices(range(3000), k=600)]
    conn = memory_index(texts)
    queries = [["w0", "w1"], ["w3", "w17", "w0"], ["w39", "w2", "w5", "w0", "w1"], ["w7"], ["w20", "w21", "w22"]]
    pruned_somewhere = False
    for terms in queries:
        match, n = match_expression(terms), counts(conn, terms)
        for wide in (1, 3, 10, 80, 5000):
            rank = f"memstone_rank(t, ?{', ?' * len(terms)})"
            sql = "SELECT rowid, {} AS s FROM t WHERE t MATCH ? ORDER BY s, rowid LIMIT ?"
            mine = conn.execute(sql.format(rank), [wide, *n, match, wide]).fetchall()
            ref = conn.execute(sql.format("bm25(t)"), [match, wide]).fetchall()
            assert bits(mine) == bits(ref), (terms, wide)
            # past the LIMIT, a pruned row carries its bound (better than its score): the pruning ran
            every = dict(conn.execute(f"SELECT rowid, {rank} FROM t WHERE t MATCH ?", [wide, *n, match]))
            exact = dict(conn.execute("SELECT rowid, bm25(t) FROM t WHERE t MATCH ?", [match]))
            assert all(every[k] <= exact[k] for k in exact)
            pruned_somewhere |= any(every[k] < exact[k] for k in exact)
    assert pruned_somewhere


@needs_library
def test_a_row_whose_bound_ties_the_worst_kept_is_scored_exactly() -> None:
    # Rows 3 and 4 hold "quartz" as their 4th and last token: a score W. Row 1 holds it 4th of 7 tokens: its bound
    # (the shortest length its hit allows, 4) is exactly W, its score below. Scanned in descending row id order
    # with a LIMIT of 2, rows 4 and 3 fill the heap first; pruning row 1 on a tie (bound <= W) would give it W, and
    # with the smallest row id it would sort first. It must be scored exactly and sort last.
    conn = memory_index(["a b c quartz d e f", "filler text", "a b c quartz", "a c b quartz"] + ["x y"] * 50)
    n = counts(conn, ["quartz"])
    got = conn.execute(
        "SELECT rowid, memstone_rank(t, 2, ?) FROM t WHERE t MATCH ? ORDER BY rowid DESC", [*n, '"quartz"']
    ).fetchall()
    ref = dict(conn.execute("SELECT rowid, bm25(t) FROM t WHERE t MATCH ?", ['"quartz"']))
    assert [k for k, _ in got] == [4, 3, 1]
    assert ref[1] > ref[3] == ref[4]  # row 1 scores worse (bm25() is negated)
    assert bits(sorted(got, key=lambda r: (r[1], r[0]))[:2]) == bits([(3, ref[3]), (4, ref[4])])
    assert dict(got)[1] == ref[1]


@needs_library
def test_a_row_evaluated_twice_counts_once() -> None:
    # Two calls of memstone_rank in one statement share its state (FTS5's auxiliary data is per function and cursor),
    # so each row is evaluated twice. Pushed twice into the heap of the 3 best, rows 1 and 2 would fill it, and row
    # 3, third of the three rows that match, would be pruned: its bound (length 3, where "zinc" is) is below their
    # score, and it would carry that bound instead of its score (length 5).
    conn = memory_index(["zinc", "zinc", "pad pad zinc pad pad"] + ["other words"] * 50)
    n = counts(conn, ["zinc"])
    rows = conn.execute(
        "SELECT rowid, memstone_rank(t, 3, ?) AS a, memstone_rank(t, 3, ?) AS b FROM t WHERE t MATCH ?",
        [*n, *n, '"zinc"'],
    ).fetchall()
    ref = dict(conn.execute("SELECT rowid, bm25(t) FROM t WHERE t MATCH ?", ['"zinc"']))
    assert len(rows) == 3 and all(a == b == ref[k] for k, a, b in rows)
