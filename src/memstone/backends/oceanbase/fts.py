"""OceanBase's full-text dialect: ``FULLTEXT … WITH PARSER SPACE`` on the head and archive projections.

``searchable_text`` is Analyzer v1's tokens, space separated, and the SPACE parser splits on spaces only, so the
index holds exactly the analyzer's tokens. OceanBase maintains the index with the row, so ``put_head`` /
``drop_head`` have nothing to do. Queries run ``MATCH (searchable_text) AGAINST (…)`` in natural-language mode
(no operators) over analyzer tokens only: raw user input never reaches it. Ranking is OceanBase's relevance
(BM25-like: it grows with term frequency and rarity, and falls with document length; higher is better).

Two gaps of the parser, found on seekdb 1.4.0, are closed with a whole-token substring scan of the selected
Memories' rows: its built-in English stopword list (no option turns it off; six of its words are informative
terms of Analyzer v1: com, de, en, la, und, www) and its 84-character token limit. The scan is skipped when MATCH
already returned the full candidate depth with positive scores (a substring-only row scores 0 and could not enter).
"""

from __future__ import annotations

from collections.abc import Sequence

from ...domain.ids import EntryId, EntryVersionId, MemoryId
from ...domain.model import EntryVersion
from ..sql.engine import ArchiveRow, Candidates, Conn, FtsRow
from .schema import MAX_TOKEN
from .vectors import OceanBaseVectors

# The SPACE parser drops MySQL's default English stopwords at indexing and in MATCH (found on seekdb 1.4.0).
_STOPWORD_TEXT = """a about an are as at be by com de en for from how i in is it la of on or that the this to was what
when where who will with und www"""
PARSER_STOPWORDS = frozenset(_STOPWORD_TEXT.split())


def _indexable(term: str) -> bool:
    return term not in PARSER_STOPWORDS and len(term.encode("utf-8")) <= MAX_TOKEN


def match_terms(terms: Sequence[str]) -> list[str]:
    """The analyzer terms the FULLTEXT index holds (what may reach MATCH … AGAINST)."""
    return [t for t in terms if _indexable(t)]


def substring_terms(terms: Sequence[str]) -> list[str]:
    """The analyzer terms the index cannot hold: found by a whole-token substring scan instead."""
    return [t for t in terms if not _indexable(t)]


def whole_token(term: str) -> str:
    """A LIKE pattern for ``term`` as one space-separated token of a padded ``searchable_text``."""
    return "% " + term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + " %"


def token_start(prefix: str) -> str:
    """A LIKE pattern for a space-separated token of a padded ``searchable_text`` that starts with ``prefix``."""
    return "% " + prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def _full_depth(scores: Sequence[float], depth: int) -> bool:
    """Whether MATCH alone already filled the depth with positive scores: a row that only the substring scan finds
    scores 0 and ranks below every one of them, so the scan could not change the result and is skipped."""
    return len(scores) >= depth and min(scores) > 0


def _marks(n: int) -> str:
    return ",".join("?" * n)


class OceanBaseFullText:
    def __init__(self, vectors: OceanBaseVectors) -> None:
        self._vectors = vectors

    def put_head(self, conn: Conn, version: EntryVersion, text: str) -> None:
        return None  # the FULLTEXT index follows the row

    def drop_head(self, conn: Conn, memory_id: MemoryId, entry_id: EntryId) -> None:
        return None

    def put_archive(self, conn: Conn, version: EntryVersion, text: str) -> None:
        return None

    def head_candidates(self, conn: Conn, ask: Candidates) -> list[FtsRow]:
        terms, depth, where, args = ask.terms, ask.depth, ask.where, ask.args
        found: dict[int, FtsRow] = {}
        indexed = match_terms(terms)
        cond = " AND ".join(where)
        if indexed:
            match = " ".join(indexed)
            for r in conn.q(
                "SELECT h.memory_artifact_id, h.entry_id, h.entry_version_id, h.entry_content_hash, h.projection_id, "
                "MATCH (h.searchable_text) AGAINST (?) AS score FROM memory_entry_heads h "
                f"WHERE MATCH (h.searchable_text) AGAINST (?) AND {cond} ORDER BY score DESC, h.projection_id LIMIT ?",
                [match, match, *args, depth],
            ):
                found[int(r[4])] = FtsRow(
                    MemoryId(r[0]), EntryId(r[1]), EntryVersionId(r[2]), r[3], int(r[4]), float(r[5])
                )
        for term in [] if _full_depth([f.score for f in found.values()], depth) else substring_terms(terms):
            for r in conn.q(
                "SELECT h.memory_artifact_id, h.entry_id, h.entry_version_id, h.entry_content_hash, h.projection_id "
                f"FROM memory_entry_heads h WHERE {cond} AND CONCAT(' ', h.searchable_text, ' ') LIKE ? "
                "ORDER BY h.projection_id LIMIT ?",
                [*args, whole_token(term), depth],
            ):
                found.setdefault(
                    int(r[4]), FtsRow(MemoryId(r[0]), EntryId(r[1]), EntryVersionId(r[2]), r[3], int(r[4]), 0.0)
                )
        return sorted(found.values(), key=lambda f: (-f.score, f.key))[:depth]

    def head_any(
        self, conn: Conn, terms: Sequence[str], prefixes: Sequence[str], where: Sequence[str], args: Sequence[object]
    ) -> bool:
        """Whether a head row under the filters holds one of ``terms`` or a token starting with a prefix.

        The lexical-support probe of the dense no-match rule: indexed terms through MATCH; the rest, and prefixes
        (the SPACE parser has no prefix search), by a token-start substring scan of the rows the filters select.
        """
        cond = " AND ".join(where)
        indexed = match_terms(terms)
        if indexed and conn.q(
            f"SELECT 1 FROM memory_entry_heads h WHERE MATCH (h.searchable_text) AGAINST (?) AND {cond} LIMIT 1",
            [" ".join(indexed), *args],
        ):
            return True
        patterns = [whole_token(t) for t in substring_terms(terms)] + [token_start(p) for p in prefixes]
        if not patterns:
            return False
        likes = " OR ".join(["CONCAT(' ', h.searchable_text, ' ') LIKE ?"] * len(patterns))
        return bool(
            conn.q(f"SELECT 1 FROM memory_entry_heads h WHERE {cond} AND ({likes}) LIMIT 1", [*args, *patterns])
        )

    def archive_candidates(
        self, conn: Conn, memory_ids: Sequence[str], terms: Sequence[str], depth: int
    ) -> list[ArchiveRow]:
        found: dict[str, tuple[float, ArchiveRow]] = {}
        indexed = match_terms(terms)
        mids = f"a.memory_artifact_id IN ({_marks(len(memory_ids))})"
        if indexed:
            match = " ".join(indexed)
            for r in conn.q(
                "SELECT a.memory_artifact_id, a.entry_id, a.entry_version_id, a.searchable_text, "
                "MATCH (a.searchable_text) AGAINST (?) AS score FROM memory_entry_archive a "
                f"WHERE MATCH (a.searchable_text) AGAINST (?) AND {mids} "
                "ORDER BY score DESC, a.entry_version_id LIMIT ?",
                (match, match, *memory_ids, depth),
            ):
                score = float(r[4])
                found[r[2]] = (score, ArchiveRow(MemoryId(r[0]), EntryId(r[1]), EntryVersionId(r[2]), r[3], score))
        for term in [] if _full_depth([score for score, _ in found.values()], depth) else substring_terms(terms):
            for r in conn.q(
                "SELECT a.memory_artifact_id, a.entry_id, a.entry_version_id, a.searchable_text "
                f"FROM memory_entry_archive a WHERE {mids} AND CONCAT(' ', a.searchable_text, ' ') LIKE ? "
                "ORDER BY a.entry_version_id LIMIT ?",
                (*memory_ids, whole_token(term), depth),
            ):
                found.setdefault(r[2], (0.0, ArchiveRow(MemoryId(r[0]), EntryId(r[1]), EntryVersionId(r[2]), r[3])))
        ranked = sorted(found.values(), key=lambda x: (-x[0], x[1].entry_version_id))
        return [row for _, row in ranked[:depth]]

    def clear(self, conn: Conn) -> None:
        # Inside the rebuild's write transaction, so no DDL: the rows go and OceanBase's indexes follow them.
        # Head-row vectors move to the windows tables first: the core keeps every valid vector through a rebuild.
        self._vectors.park(conn)
        conn.x("DELETE FROM memory_entry_heads")
        conn.x("DELETE FROM memory_entry_archive")

    def check(self, conn: Conn) -> list[str]:
        return []  # OceanBase has no user-callable FULLTEXT check; verify compares the projection rows themselves


__all__ = ["PARSER_STOPWORDS", "OceanBaseFullText", "match_terms", "substring_terms"]
