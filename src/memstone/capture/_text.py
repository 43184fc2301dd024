"""Text helpers shared by the adapters and admission: cleanup, sentence splitting and subject tokens."""

from __future__ import annotations

import functools
import re
import unicodedata

from ..domain.analyzer import STOPWORDS, analyze

_PUNCT = str.maketrans(
    {
        "\u2018": "'",
        "\u2019": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u2013": "-",
        "\u2014": "-",
        "\u2212": "-",
        "\u00a0": " ",
    }
)


def clean(text: str) -> str:
    """NFC, ASCII quotes and dashes, spaces collapsed inside each line, blank lines dropped."""
    norm = unicodedata.normalize("NFC", text).translate(_PUNCT)
    lines = [" ".join(line.split()) for line in norm.splitlines()]
    return "\n".join(line for line in lines if line)


_ABBREVIATIONS = re.compile(r"\b(e\.g|i\.e|etc|vs|approx|cf|incl|esp|no|fig)\.", re.I)
_SPLIT = re.compile(r"(?<=[.!?])\s+(?=[^\sa-z])|\n+")
_DOT = "\u2024"  # one dot leader: a placeholder for abbreviation dots while splitting


def sentences(text: str) -> list[str]:
    """Split prose into sentences at ``.``/``!``/``?`` before a non-lowercase start, and at line breaks.

    Dots inside code spans, numbers (``1.74``), paths and common abbreviations (``e.g.``) do not split.
    """
    protected = _ABBREVIATIONS.sub(lambda m: m.group(1) + _DOT, text)
    protected = re.sub(r"`[^`]*`", lambda m: m.group(0).replace(".", _DOT).replace("?", "\u2047"), protected)
    out = []
    for part in _SPLIT.split(protected):
        part = part.replace(_DOT, ".").replace("\u2047", "?").strip()
        if part:
            out.append(part)
    return out


# Words that carry the force of a statement (always, never, please, use) rather than its subject. Dedup compares
# subjects, so "Constructor injection only, please" and "Always use constructor injection" match.
FORCE_WORDS = frozenset(
    [
        "always",
        "never",
        "use",
        "used",
        "using",
        "uses",
        "please",
        "remember",
        "forget",
        "don",
        "t",
        "do",
        "not",
        "must",
        "should",
        "need",
        "needs",
        "needed",
        "only",
        "every",
        "everything",
        "anything",
        "nothing",
        "everywhere",
        "again",
        "said",
        "say",
        "saying",
        "says",
        "tell",
        "told",
        "something",
        "thing",
        "things",
        "stuff",
        "re",
        "ll",
        "ve",
        "d",
        "m",
        "s",
        "also",
        "just",
        "really",
        "actually",
        "okay",
        "ok",
        "make",
        "sure",
        "keep",
        "prefer",
        "want",
        "like",
        "want",
        "wants",
        "going",
        "forward",
        "now",
        "from",
        "instead",
        "rather",
        "still",
        "yet",
    ]
)
# Analyzer v1 keeps digits and letters together; these generic words say nothing about which rule it is.
FILLER_WORDS = frozenset(["project", "projects", "code", "repo", "repository"])


@functools.lru_cache(maxsize=65536)
def stem(token: str) -> str:
    """A deliberately crude English suffix strip, used only to compare subjects (never to index)."""
    if len(token) <= 3 or not token.isascii() or not token.isalpha():
        return token
    for suffix, repl in (("ies", "y"), ("ations", "at"), ("ation", "at"), ("ions", ""), ("ion", "")):
        if token.endswith(suffix) and len(token) - len(suffix) >= 3:
            return token[: -len(suffix)] + repl
    if token.endswith("ing") and len(token) > 5:
        token = token[:-3]
    elif (token.endswith("ed") and len(token) > 4) or (token.endswith("es") and len(token) > 4 and token[-3] in "sxz"):
        token = token[:-2]
    elif token.endswith("s") and not token.endswith("ss") and len(token) > 3:
        token = token[:-1]
    if len(token) > 3 and token[-1] == token[-2] and token[-1] not in "aeiouls":
        token = token[:-1]  # dropp -> drop, committ -> commit
    return token


_ASCII_TOKEN = re.compile(r"[a-z0-9]+")


def tokens(text: str) -> list[str]:
    """Analyzer v1 tokens; ASCII text takes an equivalent fast path (letters and digits runs, lowercased)."""
    if text.isascii():
        return _ASCII_TOKEN.findall(text.lower())
    return analyze(text)


def subject_tokens(text: str) -> frozenset[str]:
    """The subject of a statement: Analyzer v1 tokens minus stopwords, force words and one-letter tokens, stemmed."""
    out = set()
    for tok in tokens(text):
        if tok in STOPWORDS or tok in FORCE_WORDS or tok in FILLER_WORDS:
            continue
        if len(tok) < 2 and not tok.startswith(("u_", "b_")):
            continue
        out.add(stem(tok))
    return frozenset(out)


def informative_count(text: str) -> int:
    """How many Analyzer v1 tokens of ``text`` are not stopwords (a measure of how much it says)."""
    return sum(1 for tok in tokens(text) if tok not in STOPWORDS and len(tok) > 1)


def probes(subject: frozenset[str]) -> tuple[str, ...]:
    """Substrings that any text sharing one of these subject tokens must contain (for a cheap prefilter).

    A stem is a prefix of the word it came from, except ``…ies -> …y``; dropping its last letter covers both.
    CJK tokens (``u_4e2d``, ``b_4e2d_6587``) are probed as their characters.
    """
    out = []
    for tok in subject:
        if tok.startswith(("u_", "b_")):
            out.append("".join(chr(int(h, 16)) for h in tok[2:].split("_")))
        else:
            out.append(tok[: max(2, len(tok) - 1)])
    return tuple(out)


def searchable(text: str) -> str:
    """The form :func:`probes` are matched against: NFC and casefolded, like Analyzer v1 sees it."""
    return unicodedata.normalize("NFC", unicodedata.normalize("NFC", text).casefold())


def excerpt(text: str, limit: int = 80) -> str:
    """A one-line excerpt for reports and reasons."""
    one = " ".join(text.split())
    return one if len(one) <= limit else one[: limit - 1] + "…"
