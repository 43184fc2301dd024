"""PostgreSQL's full-text dialect: BM25 computed in SQL over a posting table of Analyzer v1's tokens.

PostgreSQL has no BM25 (``ts_rank_cd`` is a cover-density rank, and a ``tsvector`` would re-parse the analyzer's
``u_XXXX`` / ``b_XXXX_YYYY`` tokens at the underscore). So the engine indexes exactly the tokens the analyzer
produced: one posting row per (head row, token) with its term frequency and the row's token count, keyed by the head
row's ``projection_id`` (kept by the head's upsert), plus per-Memory totals. A query scores the candidates with
FTS5's own formula (``k1 = 1.2``, ``b = 0.75``, ``idf = ln((N - df + 0.5) / (df + 0.5))``, floored at 1e-6), N, df
and the average length taken over the whole store as FTS5 does, so rankings match SQLite's up to ties. The archive
projection's candidates are the versions matching the most terms (the core re-admits them anyway), each with its
BM25 for the score. Raw user input never reaches SQL text: the terms are bound parameters.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

from ...domain.ids import EntryId, EntryVersionId, MemoryId
from ...domain.model import EntryVersion
from ..sql.engine import ArchiveRow, Candidates, Conn, FtsRow, Snapshot, later, snapshot_of
from ..sql.rows import HIT_COLUMNS
from .arrays import int_array, text_array

K1 = 1.2
B = 0.75
_KP1 = Fraction(str(K1 + 1))  # k1 + 1 as a fraction (11 / 5)
DOC_MARK = ""  # the posting that marks an indexed row and carries its length


# What ``check`` counts (one count each; nonzero is damage) and how the damage reads.
_CHECKS: tuple[tuple[str, str], ...] = (
    (
        "SELECT count(*) FROM memory_entry_heads h WHERE NOT EXISTS (SELECT 1 FROM memory_entry_postings p "
        "WHERE p.projection_id = h.projection_id AND p.term = '')",
        "full-text index is missing {count} head projection row(s)",
    ),
    (
        "SELECT count(*) FROM memory_entry_postings p WHERE NOT EXISTS (SELECT 1 FROM memory_entry_heads h "
        "WHERE h.projection_id = p.projection_id)",
        "full-text index has {count} posting(s) of rows not in the head projection",
    ),
    (
        "SELECT count(*) FROM (SELECT h.memory_artifact_id, count(*) AS docs, sum(p.dl) AS len "
        "FROM memory_entry_postings p JOIN memory_entry_heads h ON h.projection_id = p.projection_id "
        "WHERE p.term = '' GROUP BY h.memory_artifact_id) a "
        "FULL JOIN memory_fts_stats s USING (memory_artifact_id) "
        "WHERE coalesce(a.docs, 0) <> coalesce(s.docs, 0) OR coalesce(a.len, 0) <> coalesce(s.total_len, 0)",
        "full-text statistics disagree with the postings of {count} Memory(ies)",
    ),
    (
        "SELECT count(*) FROM memory_entry_archive_postings p WHERE NOT EXISTS "
        "(SELECT 1 FROM memory_entry_archive a WHERE a.entry_version_id = p.entry_version_id)",
        "archive full-text index has {count} posting(s) of rows not in the archive projection",
    ),
)


# BM25 as FTS5 computes it, over the postings of the query's terms: N and the average length over the whole store,
# df per term counted from its postings (an index-only scan of the term index per term: half the time of one scan
# of ``term = ANY(…)`` grouped). The per-term figures are computed once (``q``, MATERIALIZED, in term order) and
# each term's postings read by its own index scan (OFFSET 0 keeps the LATERAL a nested loop), so each posting costs
# float8 arithmetic alone: at ae97122, ``q`` was inlined (``ln`` and the statistics recomputed per posting),
# ``tf * 2.2`` and ``0.75 * dl`` were numeric products, and the postings were hash-joined to the terms by text
# (issue 13). What is left is the hash aggregation of every posting by row, about 2/3 of the statement at 100k.
# The scores are the same floats as ae97122's: ``(k1 + 1) * tf`` is the same correctly rounded product (an exact
# integer product, one division), ``b * dl`` is exact in float8, and each row's contributions are summed in the same
# order (term order, as the term index reads them).
_SCORED = (
    "WITH st AS MATERIALIZED (SELECT coalesce(sum(docs), 0)::float8 AS n, coalesce(sum(total_len), 0)::float8 AS len "
    "FROM memory_fts_stats), "
    "q AS MATERIALIZED (SELECT d.term, greatest(ln((st.n - d.df + 0.5) / (d.df + 0.5)), 1e-6) AS idf, "
    "CASE WHEN st.n > 0 THEN greatest(st.len / st.n, 1) ELSE 1 END AS avgdl "
    "FROM (SELECT t.term, (SELECT count(*) FROM memory_entry_postings p WHERE p.term = t.term)::float8 AS df "
    "FROM (SELECT DISTINCT unnest(?::text[]) AS term) t OFFSET 0) d, st WHERE d.df > 0 ORDER BY d.term), "
    "m AS MATERIALIZED (SELECT p.projection_id, "
    f"sum(q.idf * ((p.tf * {_KP1.numerator})::float8 / {_KP1.denominator}) "
    f"/ (p.tf + {K1} * ({1 - B} + {B}::float8 * p.dl / q.avgdl))) AS score{{hits}} "
    "FROM q CROSS JOIN LATERAL (SELECT p.projection_id, p.tf, p.dl FROM memory_entry_postings p "
    "WHERE p.term = q.term OFFSET 0) AS p "
    "GROUP BY p.projection_id{limit}) "
)
# The head row of each match is read by its primary key (OFFSET 0 keeps the LATERAL subquery a nested loop: pulled
# up, it became a hash join over every head row of the Memory, 100,000 at 100k).
# Its searchable text comes with it (the search's coverage check reads it; a statement of its own for the texts
# was a round trip and a second primary-key lookup of the same rows).
_HEAD = (
    "LATERAL (SELECT h.memory_artifact_id, h.entry_id, h.entry_version_id, h.entry_content_hash{text} "
    "FROM memory_entry_heads h WHERE h.projection_id = m.projection_id AND {where} OFFSET 0) AS h"
)
# The best ``wide`` matches, each with its head row when it passes the filters (NULLs when not): the ranking alone,
# the raw floor ``bench/engines.py`` times.
_TOP = (
    _SCORED.replace("{hits}", "").replace("{limit}", " ORDER BY score DESC, p.projection_id LIMIT ?")
    + "SELECT h.memory_artifact_id, h.entry_id, h.entry_version_id, h.entry_content_hash, m.projection_id, "
    f"m.score FROM m LEFT JOIN {_HEAD.replace('{text}', '')} ON true ORDER BY m.score DESC, m.projection_id"
)
# A search's form of it, which reads each match's head row only until the best ``depth`` that pass are found (an
# ordered nested loop under the LIMIT: ``depth`` lookups, not ``wide``, when every match passes) and returns those
# rows alone, each with its searchable text, its version row (``AuthorityRows.hit_rows``'s columns, read by its key
# as ``hit_rows`` reads it; NULLs when the Memory has no such version) and its Memory's scope, so the hits' versions
# cost no statement and no round trip of their own (each hit is still checked against the manifest). ``k.n``, the
# number of matches ranked (at most ``wide``), tells ``head_candidates`` whether the ranked join must run; with no
# row passing, the one row it returns has NULLs for the rest.
# The version row is read only for a candidate that can reach the search's page (``Candidates.page``; issue 13): a
# page of ``page`` hits ranks candidates by their score and by how many of the query's terms they hold (the search's
# coverage), never putting one above another that is better in both, so a candidate outside the best ``page`` of
# those holding as many terms as it does (``c.nth``, from the postings it matched: ``hits``) is not served. The last
# column says whether the row's version was read; one the search still needs is read by ``hit_rows`` (a statement).
_SEARCH = (
    _SCORED.replace("{hits}", ", count(*) AS hits").replace("{limit}", " ORDER BY score DESC, p.projection_id LIMIT ?")
    + ", sc AS MATERIALIZED (SELECT memory_id, scope FROM scope_bindings WHERE memory_id = ANY(?::text[])) "
    "SELECT c.memory_artifact_id, c.entry_id, c.entry_version_id, c.entry_content_hash, c.projection_id, c.score, "
    "c.searchable_text, v.*, (SELECT sc.scope FROM sc WHERE sc.memory_id = c.memory_artifact_id), k.n, "
    "c.nth <= {page} "
    "FROM (SELECT count(*) AS n FROM m) AS k LEFT JOIN (SELECT c.*, "
    "row_number() OVER (PARTITION BY c.hits ORDER BY c.score DESC, c.projection_id) AS nth "
    "FROM (SELECT h.memory_artifact_id, h.entry_id, h.entry_version_id, "
    "h.entry_content_hash, m.projection_id, m.score, h.searchable_text, m.hits "
    "FROM (SELECT projection_id, score, hits FROM m ORDER BY score DESC, projection_id) AS m "
    f"CROSS JOIN {_HEAD.replace('{text}', ', h.searchable_text')} "
    "ORDER BY m.score DESC, m.projection_id LIMIT {depth}) AS c) AS c ON true LEFT JOIN LATERAL "
    f"(SELECT {', '.join('v.' + c.strip() for c in HIT_COLUMNS.split(','))} FROM memory_entry_versions v "
    "WHERE c.nth <= {page} AND v.entry_version_id = c.entry_version_id "
    "AND v.memory_artifact_id = c.memory_artifact_id OFFSET 0) AS v "
    "ON true ORDER BY c.score DESC, c.projection_id"
)
_HIT_END = 7 + len(HIT_COLUMNS.split(","))  # a ``_SEARCH`` row: the candidate, its text, its version, scope, k.n
# Every match joined to the head rows that pass the filters, the best ``depth`` of them.
_JOINED = (
    _SCORED.replace("{hits}", "").replace("{limit}", "")
    + "SELECT h.memory_artifact_id, h.entry_id, h.entry_version_id, h.entry_content_hash, m.projection_id, "
    f"m.score{{text}} FROM m CROSS JOIN {_HEAD} ORDER BY m.score DESC, m.projection_id LIMIT ?"
)
_WIDEN = 2
# Sent before a search's statement, in its transaction (issue 13): PostgreSQL plans a prepared statement anew for each
# execution while its generic plan's estimate is worse than the custom ones', and ``_SEARCH`` (CTEs, laterals, a
# window) cost more to plan than to run at 10k (server CPU 1.5 ms a statement, 0.86 ms with the generic plan, the
# same plan shape). The setting ends with the transaction, and is sent for a lexical-only search alone (``page``): a
# hybrid one's HNSW statement may run on the same connection after it, and is left to its custom plans. The raw
# floor's statement is left as it is.
_GENERIC = "SET LOCAL plan_cache_mode = force_generic_plan"


def _postings(text: str) -> tuple[list[str], list[int], int]:
    tokens = text.split()
    counts = Counter(tokens)
    return [DOC_MARK, *counts], [0, *counts.values()], len(tokens)


def _keep_versions(snap: Snapshot, rows: Sequence[Sequence[Any]]) -> None:
    """The version rows and scopes a ``_SEARCH`` statement read ahead with its candidates, kept for the search's
    ``hit_rows`` (None: the Memory has no such version)."""
    for r in rows:
        if r[_HIT_END + 2]:  # its version was read (a candidate that can reach the page)
            snap.versions[r[0], r[2]] = tuple(r[7:_HIT_END]) if r[8] is not None else None
        snap.scopes[r[0]] = r[_HIT_END]


class PostgresFullText:
    def __init__(self, *, texts: bool = True) -> None:
        # ``texts``: the candidates carry their searchable text (a search's; False: the ranking statement alone, the
        # raw floor ``bench/engines.py`` times it against)
        self._texts = texts

    def put_head(self, conn: Conn, version: EntryVersion, text: str) -> None:
        terms, tfs, length = _postings(text)
        later(  # the head row is written (its upsert ran before): its projection_id keys the postings
            conn,
            # One statement: the row's old postings out (a revised entry's; the DELETE's snapshot does not see the
            # rows the INSERT adds), the new ones in, and the Memory's totals moved once by the difference.
            "WITH h AS (SELECT projection_id FROM memory_entry_heads WHERE memory_artifact_id = ? AND entry_id = ?), "
            "old AS (DELETE FROM memory_entry_postings p USING h WHERE p.projection_id = h.projection_id "
            "RETURNING p.term, p.dl), "
            "ins AS (INSERT INTO memory_entry_postings (projection_id, term, tf, dl) "
            "SELECT h.projection_id, u.t, u.f, ? FROM h, unnest(?::text[], ?::int[]) AS u(t, f)) "
            "INSERT INTO memory_fts_stats AS s (memory_artifact_id, docs, total_len) "
            "SELECT ?, 1 - count(*), ? - coalesce(sum(dl), 0) FROM old WHERE term = '' "
            "ON CONFLICT (memory_artifact_id) DO UPDATE SET docs = s.docs + excluded.docs, "
            "total_len = s.total_len + excluded.total_len",
            (version.memory_id, version.entry_id, length, text_array(terms), int_array(tfs), version.memory_id, length),
        )

    def drop_head(self, conn: Conn, memory_id: MemoryId, entry_id: EntryId) -> None:
        later(
            conn,
            "WITH old AS (DELETE FROM memory_entry_postings p USING memory_entry_heads h "
            "WHERE h.memory_artifact_id = ? AND h.entry_id = ? AND p.projection_id = h.projection_id "
            "RETURNING p.term, p.dl) "
            "UPDATE memory_fts_stats s SET docs = s.docs - 1, total_len = s.total_len - o.dl "
            "FROM (SELECT dl FROM old WHERE term = '') AS o WHERE s.memory_artifact_id = ?",
            (memory_id, entry_id, memory_id),
        )

    def _top(self, ask: Candidates) -> tuple[str, list[object]]:
        # A search's statement reads the texts and versions of the best ``depth`` passing rows only: the
        # ``depth * _WIDEN`` rows' texts cost the hybrid search its statement's time beside the HNSW one.
        where = " AND ".join(ask.where)
        if not self._texts:
            return _TOP.format(where=where), [list(ask.terms), ask.depth * _WIDEN, *ask.args]
        page = ask.depth if ask.page is None else min(int(ask.page), ask.depth)
        sql = _SEARCH.replace("{depth}", str(int(ask.depth))).replace("{page}", str(page)).format(where=where)
        return sql, [list(ask.terms), ask.depth * _WIDEN, list(ask.memory_ids), *ask.args]

    def prefetch(self, conn: Conn, ask: Candidates) -> None:
        """A search's read transaction, before its first statement: send the ranking statement with that one (the
        heads and routing rows), in the same trip and snapshot; ``head_candidates`` takes its rows when it asks the
        same (a search that ends before, e.g. on an incomplete vector projection, leaves them unread)."""
        ahead = getattr(conn, "ahead", None)
        prefetched = getattr(conn, "prefetched", None)
        if ahead is None or prefetched is None or not ask.terms:
            return
        sql, args = self._top(ask)
        if ask.page is not None:
            ahead(_GENERIC)  # before the next statement (the heads read), in the same trip
        prefetched[sql, str(args)] = ahead(sql, args, after=True)

    def head_candidates(self, conn: Conn, ask: Candidates) -> list[FtsRow]:
        depth, where, args = ask.depth, ask.where, ask.args
        # The postings of the query's terms scored, the best ``depth * _WIDEN`` kept, then each looked up in the
        # head rows that pass the filters (issue 13: a natural-language query matches thousands of rows at 100k,
        # and a lookup or a join per match cost more than the scoring). When at least ``depth`` pass, or fewer
        # than ``depth * _WIDEN`` rows matched, they are exactly the best ``depth`` the ranked join gives (every
        # row left out scores no better); otherwise the ranked join runs.
        sql, top_args = self._top(ask)
        prefetched = getattr(conn, "prefetched", None)
        read = prefetched.pop((sql, str(top_args)), None) if prefetched else None
        ahead = getattr(conn, "ahead", None)
        if read is None and self._texts and ask.page is not None and ahead is not None:
            ahead(_GENERIC)  # travels with the statement
        rows = read() if read is not None else conn.q(sql, top_args)
        passed = [r for r in rows if r[0] is not None]
        ranked = len(rows)  # ``_TOP``: every ranked match, passing or not
        if self._texts:  # ``_SEARCH``: the passing ones alone (or one row of NULLs), and how many were ranked
            ranked = int(rows[0][_HIT_END + 1]) if rows else 0
            snap = snapshot_of(conn)
            if snap is not None:
                _keep_versions(snap, passed)
        if len(passed) < depth and ranked == depth * _WIDEN:
            text = ", h.searchable_text" if self._texts else ""
            passed = conn.q(_JOINED.format(where=" AND ".join(where), text=text), [list(ask.terms), *args, depth])
        return [
            FtsRow(MemoryId(r[0]), EntryId(r[1]), EntryVersionId(r[2]), r[3], int(r[4]), float(r[5]), *r[6:7])
            for r in passed[:depth]
        ]

    def put_archive(self, conn: Conn, version: EntryVersion, text: str) -> None:
        terms, tfs, _ = _postings(text)
        later(
            conn,
            "INSERT INTO memory_entry_archive_postings (entry_version_id, memory_artifact_id, term, tf) "
            "SELECT ?, ?, t, f FROM unnest(?::text[], ?::int[]) AS u(t, f) ON CONFLICT DO NOTHING",
            (version.entry_version_id, version.memory_id, text_array(terms[1:]), int_array(tfs[1:])),
        )

    def head_any(
        self, conn: Conn, terms: Sequence[str], prefixes: Sequence[str], where: Sequence[str], args: Sequence[object]
    ) -> bool:
        """Whether a head row under the filters holds one of ``terms`` or a token starting with a prefix (the
        lexical-support probe of the dense no-match rule). A prefix is a range of the term index, checked with
        ``starts_with``: the index's collation orders the range, the check keeps it exact."""
        conds: list[str] = []
        qargs: list[object] = []
        if terms:
            conds.append("p.term = ANY(?::text[])")
            qargs.append(list(terms))
        for prefix in prefixes:
            conds.append("(p.term >= ? AND p.term < ? AND starts_with(p.term, ?))")
            qargs.extend([prefix, prefix[:-1] + chr(ord(prefix[-1]) + 1), prefix])
        if not conds:
            return False
        rows = conn.q(
            "SELECT 1 FROM memory_entry_postings p CROSS JOIN LATERAL (SELECT 1 FROM memory_entry_heads h "
            f"WHERE h.projection_id = p.projection_id AND {' AND '.join(where)}) AS h WHERE ({' OR '.join(conds)}) "
            "LIMIT 1",
            [*args, *qargs],
        )
        return bool(rows)

    def archive_candidates(
        self, conn: Conn, memory_ids: Sequence[str], terms: Sequence[str], depth: int
    ) -> list[ArchiveRow]:
        # Candidates by matched terms, then scored with FTS5's BM25 over the archive's own postings (N = archived
        # versions, df per term among them, as SQLite's archive index has); the length normalization uses the
        # head projection's average length (the archive keeps no lengths; its rows are the heads' earlier texts).
        rows = conn.q(
            "WITH n AS (SELECT count(*)::float8 AS n FROM memory_entry_archive), "
            "st AS (SELECT CASE WHEN coalesce(sum(docs), 0) > 0 THEN greatest(sum(total_len)::float8 / sum(docs), 1) "
            "ELSE 1 END AS avgdl FROM memory_fts_stats), "
            "df AS MATERIALIZED (SELECT term, count(*)::float8 AS df FROM memory_entry_archive_postings "
            "WHERE term = ANY(?::text[]) GROUP BY term), "
            "m AS MATERIALIZED (SELECT p.entry_version_id, count(*) AS matched, sum(p.tf) AS tf "
            "FROM memory_entry_archive_postings p "
            "WHERE p.term = ANY(?::text[]) AND p.memory_artifact_id = ANY(?::text[]) "
            "GROUP BY p.entry_version_id ORDER BY matched DESC, tf DESC, p.entry_version_id LIMIT ?) "
            "SELECT a.memory_artifact_id, a.entry_id, a.entry_version_id, a.searchable_text, "
            "(SELECT coalesce(sum(greatest(ln((n.n - df.df + 0.5) / (df.df + 0.5)), 1e-6) * (p.tf * "
            f"{K1 + 1}) / (p.tf + {K1} * ({1 - B} + {B} * "
            "cardinality(string_to_array(a.searchable_text, ' ')) / st.avgdl))), 0) "
            "FROM memory_entry_archive_postings p JOIN df ON df.term = p.term "
            "WHERE p.entry_version_id = m.entry_version_id) AS score "
            "FROM m JOIN memory_entry_archive a ON a.entry_version_id = m.entry_version_id, n, st "
            "ORDER BY m.matched DESC, m.tf DESC, a.entry_version_id",
            (list(terms), list(terms), list(memory_ids), depth),
        )
        return [ArchiveRow(MemoryId(r[0]), EntryId(r[1]), EntryVersionId(r[2]), r[3], float(r[4])) for r in rows]

    def clear(self, conn: Conn) -> None:
        for table in (
            "memory_entry_postings",
            "memory_fts_stats",
            "memory_entry_heads",
            "memory_entry_archive_postings",
            "memory_entry_archive",
        ):
            conn.x(f"DELETE FROM {table}")

    def check(self, conn: Conn) -> list[str]:
        damage: list[str] = []
        for sql, message in _CHECKS:
            count = conn.q(sql)[0][0]
            if count:
                damage.append(message.format(count=count))
        return damage


__all__ = ["PostgresFullText", "later"]  # later: for the vector codec too
