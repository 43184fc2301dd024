"""Text helpers shared by the adapters and admission: cleanup, sentence splitting and subject tokens."""

from __future__ import annotations

import functools
import re
import unicodedata

from ..domain.analyzer import STOPWORDS, analyze
from ._language import language
from ._patterns import HAN, word_set

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
_SPLIT = re.compile(r"(?<=[.!?])\s+(?=[^\sa-z])|(?<=[。！？])\s*|\n+")
_DOT = "\u2024"  # one dot leader: a placeholder for abbreviation dots while splitting


def sentences(text: str) -> list[str]:
    """Split prose into sentences at ``.``/``!``/``?`` before a non-lowercase start, after ``。！？``, and at line
    breaks.

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
        "run",
        "runs",
        "ran",
        "running",
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
# German function and force words (the Analyzer's stopwords are English): dedup compares what a German
# statement is about, not its grammar or its "immer"/"nie".
GERMAN_WORDS = word_set(
    "der die das den dem des und ist sind nicht wir mit für auf ein eine einen einem einer eines zu zum "
    "zur von vom bei beim als im in auch nur wird werden wurde aber oder wenn dass weil sonst sich es ich "
    "du bitte noch schon über unter nach vor ohne statt hier dort man wer was wie so da ja nein immer nie "
    "niemals jeder jede jedes jeden jedem alle alles allen kein keine keinen keiner mehr muss müssen "
    "musst darf dürfen soll sollen lass lassen uns unser unsere unseren etwas erst wer will bevor sagst "
    "sagen dann ganz komplette "
)
# Chinese characters that carry grammar or force, not subject: a CJK bigram holding one says little about what
# the statement is about. Dedup compares CJK text over the remaining bigrams (issue 16).
_CJK_FUNCTION = frozenset(
    "的了是在和与及把被要都就也还又有不没这那个一上下里中我们你他它会能可以让给对从到时之所而并或等再先后才过着吧呢吗啊别请"
)
_CJK_FORCE = frozenset(["必须", "禁止", "务必", "一律", "统一", "所有", "每次", "每个", "全部", "一定", "千万", "严禁"])


@functools.lru_cache(maxsize=65536)
def stem(token: str) -> str:
    """A deliberately crude English suffix strip, used only to compare subjects (never to index).

    What matters is that the inflections of one word meet: ``store``/``stores``/``stored``/``storing`` -> ``stor``,
    ``docstring``/``docstrings`` -> ``docstr``, ``verify``/``verified``/``verifies`` -> ``verify``. The plural goes
    first, then ``-ing``/``-ed``, then a final ``e``. The result is a prefix of the word, except ``-ies``/``-ied``
    -> ``-y`` (see :func:`probes`).
    """
    if len(token) <= 3 or not token.isascii() or not token.isalpha():
        return token
    for suffix, repl in (
        ("ies", "y"),
        ("ied", "y"),
        ("ations", "at"),
        ("ation", "at"),
        ("ions", ""),
        ("ion", ""),
    ):
        if token.endswith(suffix) and len(token) - len(suffix) >= 3:
            return _undouble(token[: -len(suffix)] + repl)
    if (token.endswith("es") and len(token) > 4 and token[-3] in "sxz") or token.endswith(("ches", "shes")):
        token = token[:-2]
    elif token.endswith("s") and not token.endswith(("ss", "us", "is")) and len(token) > 3:
        token = token[:-1]
    if token.endswith("ing") and len(token) > 5:
        token = token[:-3]
    elif token.endswith("ed") and len(token) > 4 and not token.endswith("eed"):
        token = token[:-2]
    token = _undouble(token)  # dropp -> drop, committ -> commit
    if len(token) > 3 and token.endswith("e") and not token.endswith(("ee", "ie")):
        token = token[:-1]  # store, stored, storing -> stor
    return token


_UMLAUTS = str.maketrans({"ä": "a", "ö": "o", "ü": "u", "ß": "ss"})


@functools.lru_cache(maxsize=65536)
def stem_de(token: str) -> str:
    """A crude German suffix strip for subject comparison (never for indexing): umlauts folded, then one of
    -ungen/-ung, -en, -er, -es, -e, -n, -s dropped, so ``Buchungen``/``Buchung``, ``Beträge``/``Betrag``,
    ``loggen``/``Log`` meet."""
    if not token.isalpha() or len(token) <= 3:
        return token
    t = token.translate(_UMLAUTS)
    for suffix in ("ungen", "ung", "en", "er", "es", "e", "n", "s"):
        if t.endswith(suffix) and len(t) - len(suffix) >= 3:
            return _undouble(t[: -len(suffix)])  # loggen -> logg -> log
    return t


def _undouble(token: str) -> str:
    if len(token) > 3 and token[-1] == token[-2] and token[-1] not in "aeiouls":
        return token[:-1]
    return token


# A number written out is the number ("fifty milliseconds" is "50 ms"), in English, German and Spanish; one/eins/
# uno are left out (they are articles and pronouns as often as numbers).
_NUMBER_WORDS: tuple[tuple[str, ...], ...] = tuple(
    (str(n), *words.split("/"))
    for n, words in (
        (2, "two/zwei/dos"), (3, "three/drei/tres"), (4, "four/vier/cuatro"), (5, "five/fünf/cinco"),
        (6, "six/sechs/seis"), (7, "seven/sieben/siete"), (8, "eight/acht/ocho"), (9, "nine/neun/nueve"),
        (10, "ten/zehn/diez"), (11, "eleven/elf/once"), (12, "twelve/zwölf/doce"), (13, "thirteen/dreizehn/trece"),
        (14, "fourteen/vierzehn/catorce"), (15, "fifteen/fünfzehn/quince"), (16, "sixteen/sechzehn/dieciséis"),
        (17, "seventeen/siebzehn/diecisiete"), (18, "eighteen/achtzehn/dieciocho"),
        (19, "nineteen/neunzehn/diecinueve"), (20, "twenty/zwanzig/veinte"), (30, "thirty/dreißig/treinta"),
        (40, "forty/vierzig/cuarenta"), (50, "fifty/fünfzig/cincuenta"), (60, "sixty/sechzig/sesenta"),
        (70, "seventy/siebzig/setenta"), (80, "eighty/achtzig/ochenta"), (90, "ninety/neunzig/noventa"),
        (100, "hundred/hundert/cien"),
    )
)  # fmt: skip


# Words of software prose that say the same thing in a rule, and common abbreviations, as groups of words: every
# word of a group compares as the (stemmed) first one, so "check both platforms" and "test on iOS and Android"
# share their verb, and "the std log package" is "the standard log package". Kept small on purpose: each group
# is a near-synonym in any project's instructions, never a relation that needs the project's knowledge
# ("platforms" vs "iOS").
SYNONYM_GROUPS: tuple[tuple[str, ...], ...] = (
    ("test", "check", "verify", "validate"),
    ("done", "finished", "complete"),
    ("edit", "modify"),
    ("delete", "remove", "drop"),
    ("store", "save", "persist"),
    ("configuration", "config"),
    ("dependency", "dep", "deps"),
    ("environment", "env"),
    ("database", "db"),
    ("directory", "dir"),
    ("documentation", "docs", "doc"),
    ("standard", "std"),
    ("application", "app"),
    ("authentication", "auth"),
    ("library", "lib"),
    ("package", "pkg"),
    ("message", "msg"),
    ("parameter", "param"),
    ("argument", "arg"),
    ("temporary", "temp", "tmp"),
    ("ms", "millisecond", "milliseconds", "millisekunden", "milisegundos"),
    *_NUMBER_WORDS,
)
_ASCII_TOKEN = re.compile(r"[a-z0-9]+")
_CODE_SPAN = re.compile(r"`[^`\n]*`")


def tokens(text: str) -> list[str]:
    """Analyzer v1 tokens; ASCII text takes an equivalent fast path (letters and digits runs, lowercased)."""
    if text.isascii():
        return _ASCII_TOKEN.findall(text.lower())
    return analyze(text)


# A run glued into a path, identifier, dotted name or flag: src/check, check_all, fmt.check, --check, x=check.
_GLUED = re.compile(r"[a-z0-9]*(?:(?:[/_=\\$@(]|\.(?=[a-z0-9])|(?<![a-z0-9])-+)[a-z0-9]*)+")


def _code_words(text: str) -> set[str]:
    """The words of ``text`` that are code somewhere in it: in a backtick span, a flag (``--check``), or glued into a
    path, identifier or dotted name (``src/check``, ``check_all``, ``fmt.check``)."""
    low = text.lower()
    code: set[str] = set()
    for span in _CODE_SPAN.findall(low) if "`" in low else ():
        code.update(tokens(span))
    if low.isascii():
        for run in _GLUED.findall(low):
            code.update(_ASCII_TOKEN.findall(run))
    return code


def subject_tokens(text: str, *, synonyms: bool = True) -> frozenset[str]:
    """The subject of a statement: Analyzer v1 tokens minus stopwords, force words and one-letter tokens, stemmed.

    With ``synonyms`` (the default) a prose word of a :data:`SYNONYM_GROUPS` group becomes the group's first word.
    Code never does: a command spells one tool exactly (``cargo fmt --check`` is not ``cargo test``).
    """
    words = [
        tok
        for tok in tokens(text)
        if tok not in STOPWORDS
        and tok not in FORCE_WORDS
        and tok not in FILLER_WORDS
        and tok not in GERMAN_WORDS
        and len(tok) >= 2
        and not tok.startswith("u_")
        and (not tok.startswith("b_") or _cjk_subject_bigram(tok))
    ]
    stems = [stem_de(tok) for tok in words] if language(text) == "de" else [stem(tok) for tok in words]
    if not synonyms or not any(st in _SYNONYMS for st in stems):
        return frozenset(stems)
    code = _code_words(text)
    return frozenset(_SYNONYMS.get(st, st) if tok not in code else st for tok, st in zip(words, stems, strict=True))


def _cjk_subject_bigram(token: str) -> bool:
    """Whether a CJK bigram can say what a statement is about: none holding a Chinese function character or force
    word, and none of hiragana alone (Japanese particles and endings: を, には, ました, ください; eighth pass)."""
    chars = "".join(chr(int(h, 16)) for h in token[2:].split("_"))
    if all("\u3040" <= ch <= "\u309f" for ch in chars):
        return False
    return chars not in _CJK_FORCE and not any(ch in _CJK_FUNCTION for ch in chars)


_SUBJECT_PATH = re.compile(
    r"(?<![\w/.-])(?:[\w.-]+/)+[\w.-]*|(?<![\w/.-])[\w-]+\.(?:ya?ml|toml|json|py|ts|tsx|js|kt|kts|rs|go|exs?|tf|xml|md|ini|cfg|lock)\b"
)
_SUBJECT_FLAG = re.compile(r"(?<![\w-])--?[a-z][\w-]+")
_TOOL_IN_CJK = re.compile(r"(?<![A-Za-z])[A-Za-z][A-Za-z0-9+#.-]+")


def typed_subjects(text: str) -> frozenset[str]:
    """What a statement is about, typed: ``cmd:`` a code span or command, ``path:`` a path or file name,
    ``flag:`` a command-line flag, ``tool:`` a tool name written in Latin letters inside CJK text.

    Two statements that name the same command, path or tool and share another subject token are about the same
    thing, however they are worded (issue 16: "an unmarked change of the same subject revises the entry").

    >>> sorted(typed_subjects("Run `pytest -q` and keep config in pyproject.toml"))
    ['cmd:pytest -q', 'path:pyproject.toml']
    """
    low = text.lower()
    out = {"cmd:" + " ".join(span.strip("` ").split()) for span in _CODE_SPAN.findall(low) if span.strip("` ")}
    out.update("path:" + p.rstrip("/.") for p in _SUBJECT_PATH.findall(low) if len(p.rstrip("/.")) > 2)
    out.update("flag:" + f for f in _SUBJECT_FLAG.findall(low))
    if HAN.search(text):
        out.update("tool:" + w.lower().rstrip(".") for w in _TOOL_IN_CJK.findall(text))
    return frozenset(out)


def same_frame(a: frozenset[str], b: frozenset[str]) -> bool:
    """Whether two sets of typed subjects hold a command (or path) that is the same but for one word:
    ``cmd:make kind-up`` / ``cmd:make k3d-up`` — the same step, with the value a correction changed."""
    for x in a:
        for y in b:
            if x == y or x.split(":", 1)[0] != y.split(":", 1)[0] or x.startswith("tool:"):
                continue
            xs, ys = re.split(r"[^a-z0-9]+", x.split(":", 1)[1]), re.split(r"[^a-z0-9]+", y.split(":", 1)[1])
            if len(xs) == len(ys) >= 2 and sum(p != q for p, q in zip(xs, ys, strict=True)) == 1:
                return True
    return False


def informative_count(text: str) -> int:
    """How many Analyzer v1 tokens of ``text`` are not stopwords (a measure of how much it says)."""
    return sum(1 for tok in tokens(text) if tok not in STOPWORDS and len(tok) > 1)


def probes(subject: frozenset[str]) -> tuple[tuple[str, ...], ...]:
    """Per subject token, substrings one of which any text sharing that token must contain (a cheap prefilter).

    An ASCII stem is a prefix of every word it came from, except ``…ies``/``…ied`` -> ``…y``, whose probe drops
    the ``y``. A synonym group's token is probed as every word of the group. Other tokens drop their last
    character; CJK tokens (``u_4e2d``, ``b_4e2d_6587``) are probed as their characters.
    """
    out: list[tuple[str, ...]] = []
    for tok in subject:
        if tok.startswith(("u_", "b_")):
            out.append(("".join(chr(int(h, 16)) for h in tok[2:].split("_")),))
        else:
            out.append(tuple(_probe(w) for w in _GROUP_STEMS.get(tok, (tok,))))
    return tuple(out)


def _probe(word: str) -> str:
    word = word.translate(_UMLAUTS)  # as searchable() folds them: a German stem is folded (stem_de)
    if word.isascii() and word.isalnum():
        return word[:-1] if word.endswith("y") and len(word) > 3 else word
    return word[: max(2, len(word) - 1)]


_SYNONYMS: dict[str, str] = {stem(w): stem(group[0]) for group in SYNONYM_GROUPS for w in group[1:]}
_GROUP_STEMS: dict[str, tuple[str, ...]] = {
    stem(g[0]): tuple(dict.fromkeys(stem(w) for w in g)) for g in SYNONYM_GROUPS
}


def searchable(text: str) -> str:
    """The form :func:`probes` are matched against: NFC and casefolded, like Analyzer v1 sees it, with German
    umlauts folded as :func:`stem_de` folds them (``Beträge`` holds the probe of ``betrag``)."""
    return unicodedata.normalize("NFC", unicodedata.normalize("NFC", text).casefold()).translate(_UMLAUTS)


def excerpt(text: str, limit: int = 80) -> str:
    """A one-line excerpt for reports and reasons."""
    one = " ".join(text.split())
    return one if len(one) <= limit else one[: limit - 1] + "…"
