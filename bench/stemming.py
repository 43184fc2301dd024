"""Analyzer v2 candidate for issue 15 item 2, measured before it is adopted: Snowball (Porter 2) English stemming of
Latin terms on both sides, content and queries.

``bench_retrieval.py --analyzer v2-stem`` swaps it in for the whole bench process (stored searchable text, query
terms, FTS admission, lexical support, the textbook BM25 baseline; not the hashing test model's or capture's own
tokens) and keys every cached store by the analyzer, so
the v1 and v2 tables come from stores built with their own analyzer. A term is stemmed when it is all ASCII
letters and not a stopword (stopwords stay whole, so the query stopword rules keep working); digits, mixed tokens
(``e_``, ``v2``) and the CJK unigram/bigram tokens are unchanged.
"""

from __future__ import annotations

import functools
import re

import snowballstemmer

from memstone.domain import analyzer

_LETTERS = re.compile(r"[a-z]+")
_STEMMER = snowballstemmer.stemmer("english")
_v1 = analyzer.analyze


@functools.lru_cache(maxsize=200_000)
def stem(token: str) -> str:
    if token in analyzer.STOPWORDS or not _LETTERS.fullmatch(token):
        return token
    return str(_STEMMER.stemWord(token))


def analyze_v2(text: str) -> list[str]:
    return [stem(t) for t in _v1(text)]


def install() -> None:
    """Make every ``analyze`` call of this process Analyzer v2 (queries and stored text alike)."""
    analyzer.analyze = analyze_v2  # type: ignore[assignment]
    analyzer._query_terms.cache_clear()
