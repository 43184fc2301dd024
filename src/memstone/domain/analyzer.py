"""Shared Analyzer v1: the one tokenizer for stored text and queries on every backend.

NFC, then casefold; a Latin (non-CJK) term is a run of letters, digits and combining marks, and everything
else is a separator (punctuation normalization). A run of CJK characters becomes unigrams ``u_XXXX`` and
bigrams ``b_XXXX_YYYY`` (lowercase hex code points), e.g. ``中文`` → ``u_4e2d u_6587 b_4e2d_6587``. The output is
ASCII-safe for CJK and never carries query syntax, so backends quote the tokens and hand them to their
full-text engine (SQLite unicode61, OceanBase SPACE parser). Changing these rules is a migration that rebuilds
every full-text projection.
"""

from __future__ import annotations

import functools
import itertools
import re
import unicodedata

ANALYZER_VERSION = "v1"

# Consecutive "CJK text": Han ideographs, kana, Hangul, Bopomofo.
_CJK_RANGES = (
    (0x2E80, 0x2FDF),  # CJK radicals, Kangxi radicals
    (0x3040, 0x30FF),  # Hiragana, Katakana
    (0x3100, 0x312F),  # Bopomofo
    (0x3130, 0x318F),  # Hangul compatibility jamo
    (0x31A0, 0x31BF),  # Bopomofo extended
    (0x31F0, 0x31FF),  # Katakana phonetic extensions
    (0x3400, 0x4DBF),  # CJK extension A
    (0x4E00, 0x9FFF),  # CJK unified ideographs
    (0xA960, 0xA97F),  # Hangul jamo extended-A
    (0xAC00, 0xD7AF),  # Hangul syllables
    (0xF900, 0xFAFF),  # CJK compatibility ideographs
    (0xFF66, 0xFF9D),  # Halfwidth katakana
    (0x20000, 0x3134F),  # CJK extensions B–H
)


_ASCII_TERM = re.compile(r"[a-z0-9]+")


def is_cjk(ch: str) -> bool:
    """True when ``ch`` belongs to a CJK script run."""
    code = ord(ch)
    return code >= 0x2E80 and any(lo <= code <= hi for lo, hi in _CJK_RANGES)


def _is_word_char(ch: str) -> bool:
    cat = unicodedata.category(ch)
    return cat[0] in ("L", "N", "M")


def analyze(text: str) -> list[str]:
    """Tokens of ``text`` in order (duplicates kept)."""
    if text.isascii():
        # The same rules, fast: in ASCII the letters and digits are exactly the word characters, casefold is
        # lower(), NFC changes nothing and there is no CJK (a test checks both paths agree).
        return _ASCII_TERM.findall(text.lower())
    norm = unicodedata.normalize("NFC", text).casefold()
    norm = unicodedata.normalize("NFC", norm)
    tokens: list[str] = []
    word: list[str] = []
    cjk: list[str] = []

    def flush_word() -> None:
        if word:
            tokens.append("".join(word))
            word.clear()

    def flush_cjk() -> None:
        if cjk:
            codes = [f"{ord(c):04x}" for c in cjk]
            tokens.extend(f"u_{c}" for c in codes)
            tokens.extend(f"b_{a}_{b}" for a, b in itertools.pairwise(codes))
            cjk.clear()

    for ch in norm:
        if is_cjk(ch):
            flush_word()
            cjk.append(ch)
        elif _is_word_char(ch):
            flush_cjk()
            word.append(ch)
        else:
            flush_word()
            flush_cjk()
    flush_word()
    flush_cjk()
    return tokens


def searchable_text(*parts: str) -> str:
    """The analyzed form stored in a full-text projection: tokens joined by single spaces."""
    return " ".join(tok for part in parts if part for tok in analyze(part))


def query_terms(query: str) -> list[str]:
    """Distinct analyzed terms of a query, in first-seen order."""
    return list(_query_terms(query))


@functools.lru_cache(maxsize=1024)
def _query_terms(query: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(analyze(query)))


# Used only to decide FTS admission (how many informative terms a hit must match); never to index.
STOPWORDS = frozenset(
    [
        "a",
        "about",
        "above",
        "after",
        "again",
        "all",
        "also",
        "am",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "because",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "down",
        "during",
        "each",
        "few",
        "for",
        "from",
        "further",
        "had",
        "has",
        "have",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "him",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "itself",
        "just",
        "me",
        "more",
        "most",
        "my",
        "no",
        "nor",
        "not",
        "of",
        "off",
        "on",
        "once",
        "only",
        "or",
        "other",
        "our",
        "ours",
        "out",
        "over",
        "own",
        "same",
        "she",
        "should",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "too",
        "under",
        "until",
        "up",
        "very",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "yours",
    ]
)


def informative_terms(terms: list[str]) -> list[str]:
    """Query terms minus English stopwords; all terms when nothing else is left."""
    kept = [t for t in terms if t not in STOPWORDS]
    return kept or terms
