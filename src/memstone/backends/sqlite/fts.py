"""SQLite's full-text dialect: FTS5 external-content tables over the head and archive projections.

Triggers on the projection tables keep the FTS5 indexes in step, so ``put_head`` / ``drop_head`` have nothing
to do. The tokenizer keeps Analyzer v1's tokens whole (``tokenchars '_'``, no diacritic folding). Ranking is FTS5's
``bm25()`` (k1 = 1.2, b = 0.75, fixed by the engine; one column, so no weights), computed by ``memstone_rank`` (C,
``_rank/``) where the install compiled it: the same scores bit for bit, from the row counts the search keeps.
"""

from __future__ import annotations

from collections.abc import Sequence
from operator import itemgetter
from typing import Protocol

import apsw

from ...domain.ids import EntryId, EntryVersionId, MemoryId
from ...domain.model import EntryVersion
from ..sql.engine import ArchiveRow, Candidates, Conn, FtsRow, Row
from . import file, schema
from ._rank.build import RANK_LIBRARY
from .options import fts_integrity


class SQLiteFile(file.SQLiteFile, Protocol):
    """What the FTS part reads of its engine (``engine.SQLiteEngine``; a Protocol, so no import cycle)."""

    @property
    def read_only(self) -> bool: ...
    @property
    def busy_timeout_ms(self) -> int: ...


def match_expression(terms: Sequence[str]) -> str:
    """Raw user input never reaches MATCH: only analyzer tokens, each quoted as a string."""
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)


# The head search ranks in two steps: FTS5 alone ranks the matches (no join: the cheapest way to score them all), the
# top ``depth * _WIDEN`` are then looked up in the head projection under the request's filters. When at least
# ``depth`` pass, or FTS5 had no more matches, they are exactly the top ``depth`` the join would give (every row left
# out scores no better); otherwise (a store whose other Memories hold most matches, or a narrow filter) the search
# runs the one ranked join. Ties break by projection id on both paths.
_WIDEN = 2
_RANKED = (
    "SELECT rowid, bm25(memory_entry_search_fts) AS s FROM memory_entry_search_fts "
    "WHERE memory_entry_search_fts MATCH ? ORDER BY s, rowid LIMIT ?"
)
_BY_SCORE = itemgetter(1, 0)  # (bm25(), row id): the statements' own order
_COUNT = "SELECT count(*) FROM memory_entry_search_fts WHERE memory_entry_search_fts MATCH ?"
_ROWS = "SELECT count(*) FROM memory_entry_search_fts_docsize"

# Issue 15: bm25() scores every row a MATCH finds (and counts each term's rows for its IDF), and natural questions
# hold common words that match thousands of rows which, holding no rarer term of the query, seldom reach the top.
# A term found in more than this share of the indexed rows is "common"; when the query also has rarer terms and
# those alone find at least ``depth * _WIDEN`` rows, the candidates are the rows holding a rarer term, each scored
# with the whole query's bm25() (two statements, see ``_ranked``): the rows holding common terms only are left out.
# Fitted with bench/fts_prune.py (see docs/benchmarks.md); SQLite's alone, because the cost is FTS5's scoring pass
# (PostgreSQL scores from its own postings). Below ``COMMON_ROWS`` rows of common terms, the second statement costs
# more than the scoring it saves (a cost figure, measured on the 10k and 100k speed stores; below it the search is
# the full MATCH, as before). It was 4,000 while the index held many segments; with one (``settle``) the split pays
# from 1,000 (100k: CPU p50 2.87 -> 2.45 ms, 10k: 1.52 -> 1.40; dev and held-out halves in docs/benchmarks.md).
COMMON_SHARE = 0.01
COMMON_ROWS = 1000

# Issue 15: FTS5 writes each transaction's rows as a new segment and merges only four segments of one level at a
# time (its ``automerge``), so a store written by ``remember`` kept many segments (15 at 100k, in batches of
# 1,000), and a query reads each term's postings in every segment (and FTS5 re-prepared its statements at every
# query while there was more than one: ~1 M instructions a search at 100k). So after a write transaction, once
# ``SETTLE_CHANGES`` rows have changed on this connection since it last looked, the engine reads the index's
# segments (one statement) and runs FTS5's ``optimize`` (all segments into one, in the write's transaction) when
# the segments besides the largest hold at least 1/``TAIL_SHARE`` of its pages, or there are more than
# ``MAX_SEGMENTS``. A write pays for it in proportion to what it adds: a batch of 1,000 at 100k entries is ~1 % of
# the pages (an ``optimize`` of 0.4 s there); at 10k, single-entry writes one in ~55 (6-22 ms). Cost figures,
# measured with bench/search_instructions.py and bench/bench_core.py (docs/benchmarks.md), fitted to no query set.
SETTLE_CHANGES = 1024
TAIL_SHARE = 128
MAX_SEGMENTS = 16
# An ``optimize`` rewrites the whole index inside the write that triggers it (0.4 s at 100k entries, ~2,600 leaf
# pages), so it grows with the store. Above ``WRITE_MERGE_PAGES`` (~300k entries, ~1.2 s) the write leaves the
# segments to FTS5's own automerge and the maintenance daemon's upkeep (backends/sqlite/upkeep.py), which optimizes
# outside any caller's write.
WRITE_MERGE_PAGES = 8192
FTS_TABLES = ("memory_entry_search_fts", "memory_entry_archive_fts")
# An FTS5 ``_data`` row id is (segment id << 37) + (page number) for a leaf page (higher bits mark the b-tree and
# doclist-index pages): the largest leaf row id of a segment names its page count. ``_idx`` holds a row per segment
# and leaf range, so its segment ids are the segments (FTS5's file format, stable across SQLite versions).
_SEGMENTS = (
    "SELECT (SELECT max(id) FROM {fts}_data WHERE id BETWEEN segid << 37 AND (segid << 37) + 2147483647) "
    "- (segid << 37) FROM {fts}_idx GROUP BY segid"
)


def segment_pages(conn: Conn, fts: str) -> list[int]:
    """The leaf pages of each segment of the FTS5 index ``fts``."""
    return [int(r[0] or 0) for r in conn.q(_SEGMENTS.format(fts=fts))]


def needs_optimize(pages: Sequence[int]) -> bool:
    """Whether a write should merge an index of these segments into one (see ``TAIL_SHARE``, ``WRITE_MERGE_PAGES``)."""
    if len(pages) < 2:
        return False
    largest = max(pages)
    if sum(pages) > WRITE_MERGE_PAGES:
        return False
    return len(pages) > MAX_SEGMENTS or (sum(pages) - largest) * TAIL_SHARE >= largest


# Issue 15: memstone_rank(fts, wide, n0, n1, ...) (``_rank/memstone_rank.c``) is bm25() with each phrase's row count an
# argument (the counts ``_shares`` keeps, so no statement pays FTS5's per-statement IDF pass) and a phrase given NULL
# weighing nothing, so the common-term split is one statement that scores each row once. hatch_build.py compiles it
# at install; a machine without a compiler ranks with bm25(), the same rows and scores (tests/conformance/
# test_sqlite_fts_rank.py).
# The statement's LIMIT is also memstone_rank's first argument: a row whose score cannot reach the top ``wide`` is not
# scored exactly (the top ``wide`` rows and scores are bm25()'s, see the C source).
def _rank_sql(phrases: int) -> str:
    """``_RANKED`` scored by memstone_rank: its arguments the LIMIT, then the ``phrases`` row counts."""
    return _RANKED.replace(
        "bm25(memory_entry_search_fts)", f"memstone_rank(memory_entry_search_fts, ?{', ?' * phrases})"
    )


class SQLiteFullText:
    def __init__(self, engine: SQLiteFile) -> None:
        self._engine = engine
        # Rows of the index and per-term row counts, valid while neither this connection wrote nor another
        # process committed (``data_version``): the split into rare and common terms reads them.
        self._counted: tuple[int, int] | None = None
        self._rows = 0
        self._df: dict[str, int] = {}
        self._settled = 0  # the connection's change count when the segments were last looked at
        self._rank = False  # memstone_rank is loaded into the connection (``load``)
        self.ranking = "bm25()"  # which function ranks, for ``memstone doctor`` (the engine's capabilities)

    def load(self, raw: apsw.Connection) -> None:
        """Load memstone_rank into a new connection when the install built it; else the search ranks with bm25()."""
        self._rank = False
        if not RANK_LIBRARY.exists():
            self.ranking = f"bm25() (memstone_rank was not compiled at install: no {RANK_LIBRARY})"
            return
        try:
            raw.enable_load_extension(True)
            raw.load_extension(str(RANK_LIBRARY))
        except apsw.Error as exc:  # a library built for another machine: the same results through bm25()
            self.ranking = f"bm25() (memstone_rank did not load from {RANK_LIBRARY}: {exc})"
            return
        finally:
            raw.enable_load_extension(False)
        self._rank = True
        self.ranking = f"memstone_rank (C, {RANK_LIBRARY})"

    def settle(self, conn: Conn) -> list[str]:
        """At the end of a write transaction: merge an index whose new segments are worth it (``TAIL_SHARE``);
        returns the indexes it optimized."""
        changes = int(self._engine.raw.total_changes())
        if changes - self._settled < SETTLE_CHANGES:
            return []
        self._settled = changes
        present = {
            r[0] for r in conn.q("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE '%_fts_idx'")
        }
        done = [fts for fts in FTS_TABLES if f"{fts}_idx" in present and needs_optimize(segment_pages(conn, fts))]
        for fts in done:
            conn.x(f"INSERT INTO {fts} ({fts}) VALUES ('optimize')")
        return done

    def _shares(self, conn: Conn, terms: Sequence[str]) -> list[float]:
        """Each term's share of the indexed rows (the rows holding it / all rows)."""
        # The file's data version changes with every commit, this connection's and any other's (a file control,
        # not a statement: read inside the search's transaction, it names the snapshot the counts come from); the
        # connection's change count, with its own writes not yet committed.
        raw = self._engine.raw
        key = (int(raw.data_version()), int(raw.total_changes()))
        fresh = key != self._counted or len(self._df) > 50_000
        if fresh:
            self._df = {}
        uncounted = list(dict.fromkeys(t for t in terms if t not in self._df))
        if fresh or uncounted:  # the rows (when the snapshot changed) and the terms not yet counted: one statement
            counts = ([_ROWS] if fresh else []) + [_COUNT] * len(uncounted)
            got = [
                int(c) for c in conn.q(f"SELECT ({'), ('.join(counts)})", [match_expression([t]) for t in uncounted])[0]
            ]
            if fresh:
                self._rows, self._counted = got.pop(0), key
            self._df.update(zip(uncounted, got, strict=True))
        return [self._df[t] / max(1, self._rows) for t in terms]

    def _splits(self, rare: Sequence[str], common: Sequence[str]) -> bool:
        """Whether the candidates are the rows holding a rare term (see ``COMMON_ROWS``)."""
        return bool(rare and common and sum(self._df[t] for t in common) >= COMMON_ROWS)

    def _ranked_once(
        self, conn: Conn, terms: Sequence[str], rare: list[str], common: list[str], wide: int
    ) -> list[Row]:
        """``_ranked`` by memstone_rank and the kept counts: the same rows and scores, each row scored once."""
        if self._splits(rare, common):
            # One statement: the rows holding a rare term, each scored by the whole query (the common terms'
            # phrases first, as the split's second statement has them; the repeated rare ones NULL: no weight).
            counts: list[int | None] = [self._df[t] for t in common + rare]
            both = f"({match_expression(common + rare)}) AND ({match_expression(rare)})"
            got = conn.q(_rank_sql(len(counts) + len(rare)), [wide, *counts, *([None] * len(rare)), both, wide])
            if len(got) >= wide:
                return got
        return conn.q(_rank_sql(len(terms)), [wide, *(self._df[t] for t in terms), match_expression(terms), wide])

    def _ranked(self, conn: Conn, terms: Sequence[str], wide: int) -> Sequence[Row]:
        """The top ``wide`` (row id, bm25()) of the index for ``terms``, best first, ties by row id."""
        share = COMMON_SHARE
        if len(terms) > 1 and share < 1:
            shares = self._shares(conn, terms)
            rare = [t for t, s in zip(terms, shares, strict=True) if s <= share]
            common = [t for t, s in zip(terms, shares, strict=True) if s > share]
            if self._rank:  # the kept counts rank: no IDF pass (a one-term query keeps bm25(): no count is kept)
                return self._ranked_once(conn, terms, rare, common, wide)
            if self._splits(rare, common):
                first = conn.q(_RANKED, [match_expression(rare), wide])
                if len(first) >= wide:
                    # Rows holding a rare term: scored by the rare terms alone (exact for rows without a common
                    # term), then the ones also holding a common term by the whole query. A row of ``first``
                    # missing from ``both`` scores below ``both``'s last, so the merge is the exact top ``wide`` of
                    # the rows holding a rare term.
                    # (apsw gives the row id as an int and bm25() as a float, so the rows merge as read.)
                    both = f"({match_expression(common)}) AND ({match_expression(rare)})"
                    scores = dict(first)
                    scores.update(conn.q(_RANKED, [both, wide]))
                    return sorted(scores.items(), key=_BY_SCORE)[:wide]
        return conn.q(_RANKED, [match_expression(terms), wide])

    def put_head(self, conn: Conn, version: EntryVersion, text: str) -> None:
        return None  # trg_heads_fts_insert / _update index the row

    def drop_head(self, conn: Conn, memory_id: MemoryId, entry_id: EntryId) -> None:
        return None  # trg_heads_fts_delete

    def put_archive(self, conn: Conn, version: EntryVersion, text: str) -> None:
        return None  # trg_archive_fts_insert

    def head_candidates(self, conn: Conn, ask: Candidates) -> list[FtsRow]:
        terms, depth, where, args = ask.terms, ask.depth, ask.where, ask.args
        match = match_expression(terms)
        wide = depth * _WIDEN
        ranked = self._ranked(conn, terms, wide)
        if not ranked:
            return []
        # The head rows of the best ``depth`` first (with their text, which the core reads for coverage); the next
        # ones only when some of those did not pass.
        heads = self.filtered_heads(conn, [r[0] for r in ranked[:depth]], where, args)
        if len(heads) < depth and len(ranked) > depth:
            heads.update(self.filtered_heads(conn, [r[0] for r in ranked[depth:]], where, args))
        if len(heads) >= depth or len(ranked) < wide:
            out = []
            for key, score in ranked:
                h = heads.get(key)
                if h is not None:
                    # bm25() is negated: lower is better.
                    out.append(FtsRow(h[1], h[2], h[3], h[4], key, -float(score), h[5]))
                    if len(out) == depth:
                        break
            return out
        rows = conn.q(
            "SELECT h.memory_artifact_id, h.entry_id, h.entry_version_id, h.entry_content_hash, h.projection_id, "
            "f.rank FROM memory_entry_search_fts f CROSS JOIN memory_entry_heads h ON h.projection_id = f.rowid "
            f"WHERE memory_entry_search_fts MATCH ? AND {' AND '.join(where)} ORDER BY f.rank, h.projection_id LIMIT ?",
            [match, *args, depth],
        )
        # FTS5's rank is bm25() negated.
        return [
            FtsRow(MemoryId(r[0]), EntryId(r[1]), EntryVersionId(r[2]), r[3], int(r[4]), -float(r[5])) for r in rows
        ]

    @staticmethod
    def filtered_heads(conn: Conn, keys: Sequence[int], where: Sequence[str], args: Sequence[object]) -> dict[int, Row]:
        """The head rows among ``keys`` that pass the filters, by projection id."""
        rows = conn.q(
            "SELECT h.projection_id, h.memory_artifact_id, h.entry_id, h.entry_version_id, h.entry_content_hash, "
            # NOT INDEXED: by primary key (the planner would rather scan the Memory's rows by its kind index)
            "h.searchable_text FROM memory_entry_heads h NOT INDEXED "
            f"WHERE h.projection_id IN ({','.join('?' * len(keys))}) AND {' AND '.join(where)}",
            [*keys, *args],
        )
        return {int(r[0]): r for r in rows}

    def head_any(
        self, conn: Conn, terms: Sequence[str], prefixes: Sequence[str], where: Sequence[str], args: Sequence[object]
    ) -> bool:
        # A prefix is a quoted analyzer token followed by FTS5's prefix operator.
        match = " OR ".join([match_expression([t]) for t in terms] + [match_expression([p]) + " *" for p in prefixes])
        if not match:
            return False
        rows = conn.q(
            "SELECT 1 FROM memory_entry_search_fts f CROSS JOIN memory_entry_heads h ON h.projection_id = f.rowid "
            f"WHERE memory_entry_search_fts MATCH ? AND {' AND '.join(where)} LIMIT 1",
            [match, *args],
        )
        return bool(rows)

    def archive_candidates(
        self, conn: Conn, memory_ids: Sequence[str], terms: Sequence[str], depth: int
    ) -> list[ArchiveRow]:
        rows = conn.q(
            "SELECT a.memory_artifact_id, a.entry_id, a.entry_version_id, a.searchable_text, f.rank "
            "FROM memory_entry_archive_fts f CROSS JOIN memory_entry_archive a ON a.archive_id = f.rowid "
            f"WHERE memory_entry_archive_fts MATCH ? AND a.memory_artifact_id IN ({','.join('?' * len(memory_ids))}) "
            "ORDER BY f.rank, a.entry_version_id LIMIT ?",
            (match_expression(terms), *memory_ids, depth),
        )
        # FTS5's rank is bm25() negated.
        return [ArchiveRow(MemoryId(r[0]), EntryId(r[1]), EntryVersionId(r[2]), r[3], -float(r[4])) for r in rows]

    def clear(self, conn: Conn) -> None:
        # A damaged FTS index cannot be trusted to accept per-row deletes, so drop and recreate the projections,
        # their indexes and triggers in the rebuild's transaction; re-inserted rows repopulate them by trigger.
        for trigger in ("trg_heads_fts_insert", "trg_heads_fts_delete", "trg_heads_fts_update"):
            conn.x(f"DROP TRIGGER IF EXISTS {trigger}")
        conn.x("DROP TABLE IF EXISTS memory_entry_search_fts")
        conn.x("DELETE FROM memory_entry_heads")
        self._engine.raw.execute(schema.PROJECTIONS)
        for trigger in ("trg_archive_fts_insert", "trg_archive_fts_delete"):
            conn.x(f"DROP TRIGGER IF EXISTS {trigger}")
        conn.x("DROP TABLE IF EXISTS memory_entry_archive_fts")
        conn.x("DROP TABLE IF EXISTS memory_entry_archive")
        self._engine.raw.execute(schema.RECORDS)

    def check(self, conn: Conn) -> list[str]:
        e = self._engine
        found = fts_integrity(
            e.raw,
            e.path,
            ("memory_entry_search_fts", "memory_entry_archive_fts"),
            read_only=e.read_only,
            busy_timeout_ms=e.busy_timeout_ms,
        )
        damage = []
        if "memory_entry_search_fts" in found:
            damage.append(f"full-text index does not match the head projection: {found['memory_entry_search_fts']}")
        if "memory_entry_archive_fts" in found:
            damage.append(
                f"archive full-text index does not match the archive projection: {found['memory_entry_archive_fts']}"
            )
        return damage


__all__ = ["FTS_TABLES", "SQLiteFullText", "match_expression", "needs_optimize", "segment_pages"]
