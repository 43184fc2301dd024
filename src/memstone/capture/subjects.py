"""Unmarked changes of a subject: the same thing, set to another value (issue 16, third pass).

A correction often carries no marker word: "We're on ESP-IDF 5.3 since the Wi-Fi fix landed" corrects "we build
against ESP-IDF 5.1"; "The ORM is Drizzle since last week" corrects "the ORM is Prisma"; "数据库迁移由 atlas 负责"
corrects "数据库迁移用 goose". What such a pair has in common is its *subject* (ESP-IDF, the ORM, 数据库迁移), and
what differs is a *value*: a version, a tool name, a command, a path. :func:`values` types the values a statement
names; :func:`changed` reads a candidate against an entry:

- ``version``: both name the same thing with a different version (``ESP-IDF 5.1`` / ``ESP-IDF 5.3``), or the same
  dotted or hyphenated name but for its version part (``orders.v1`` / ``orders.v2``). That alone is a change:
  the name is the subject.
- ``value``: each side names a command or a path the other lacks, and the rest of the two texts share their
  rare subject terms (weighted overlap of the subject tokens ≥ :data:`CHANGE_MIN` and ≥
  :data:`CHANGE_SHARED` shared tokens, fitted on the dev part of the capture benchmark only). Two statements
  that differ in exactly one word each are not taken, nor two commands of one program unless the new text still
  names the old command's step (``run `cargo test``` / ``run `cargo fmt --check```: two rules; ``make lint`` /
  "lint runs in CI now, `make check` before a commit": a change).

- ``name`` (sixth pass): the candidate *says* something changed (a correction), and each side names a tool-like
  name or an identifier (``billing_``) the other lacks, from :data:`CHANGE_NAME_MIN`.

- seventh pass: :func:`quantities` types numbers by their unit (``qty:hour=4``) and host names
  (``host:staging-api.example.dev``), values of the ``value`` change too; :func:`conflicts` says that a candidate
  matched to an entry gives another value of the same kind (version, quantity, host), so it revises the entry.

:func:`replaced_name` and :func:`same_tools` serve the correction and restatement rules of
:mod:`memstone.capture.admission` (sixth pass): a correction revises the entry that names what it replaces, and
a restatement that names the same tools as its entry, and no other, needs less overlap.

Everything is regular expressions over the text; nothing is imported that the hook does not already load.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from ..domain.analyzer import STOPWORDS
from ._language import language
from ._patterns import HAN
from ._text import _CJK_FUNCTION, stem, subject_tokens, typed_subjects
from .nearness import TermWeights, align, weighted_overlap

__all__ = [
    "CHANGE_MIN",
    "CHANGE_NAME_MIN",
    "CHANGE_SHARED",
    "Change",
    "changed",
    "conflicts",
    "names",
    "pick_change",
    "quantities",
    "replaced_name",
    "replaced_tokens",
    "same_subject",
    "same_tools",
    "tool_names",
    "values",
    "versioned_names",
]

# Fitted on bench/data/capture (dev) only with bench/calibrate_capture_changes.py; see docs/capture.md.
CHANGE_MIN = 0.14
CHANGE_SHARED = 2
# A stated change (a correction) of a name in prose: fitted on the dev part only, bench/calibrate_capture_changes.py
# --rule name (sixth pass).
CHANGE_NAME_MIN = 0.04

# "ESP-IDF 5.1", ".NET 8"; a CJK or Hangul particle may follow the number ("Java 21입니다", capcorr7), a Latin letter
# may not ("20px").
_VERSION = re.compile(
    r"(?<![\w.-])(\.?[A-Za-z][A-Za-z0-9+#-]*[A-Za-z0-9+#])\s+v?(\d+(?:\.\d+)*)(?![A-Za-z0-9_]|[.-]\w)"
)
# A dotted version a clause gives the last tool-like name before it ("Flutter 版本锁定在 3.16", "Node is pinned to
# 20.11"): the name and its number need not touch (seventh pass).
_CLAUSE_VERSION = re.compile(r"(?<![\w.])(\d+\.\d+(?:\.\d+)?)(?![\w.])")
_CLAUSE_BREAK = re.compile(r"[,;:()，。；：（）!?！？]")
# A quantity: a number and the unit word after it ("every 4 hours", "25 MB", "30 分钟"), and a host name as written
# (lowercase, dotted, not a file name: "staging-api.pocketbook.dev", "https://api-test.xiaoman.cn").
_QUANTITY = re.compile(r"(?<![\w.#:-])(\d+(?:[.,]\d+)?)\s*([A-Za-z]{2,12}|[\u4e00-\u9fff]{1,2})")
# A time of day ("at 02:00 UTC", "a las 4:30", "7:00 に"): a value a schedule sets anew (capdup4).
_CLOCK = re.compile(r"(?<![\d:.])([01]?\d|2[0-3]):([0-5]\d)(?![\d:])")
_HOST = re.compile(r"(?<![\w@/.-])(?:https?://)?((?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+[a-z]{2,12})(?![\w.-]*[\w-])")
_NOT_UNITS = STOPWORDS | frozenset(
    ("since", "via", "per", "than", "from", "with", "at", "by", "on", "in", "to", "of", "for", "and", "or", "is",
     "are", "was", "were")
)  # fmt: skip
_REVERSE_DNS = frozenset(("com", "org", "net", "io", "de", "cn", "uk", "fr", "nl", "edu", "gov"))  # a package name
_FILE_SUFFIXES = frozenset(
    ("py", "ts", "tsx", "js", "jsx", "mjs", "go", "rs", "java", "kt", "kts", "swift", "rb", "c", "h", "cc", "cpp", "cs",
     "md", "json", "yaml", "yml", "toml", "sql", "dart", "hcl", "lock", "cfg", "ini", "xml", "tf", "ex", "exs", "txt",
     "env", "sh", "html", "css", "scss", "vue", "lua", "php", "gradle", "properties", "csproj", "sln", "plist", "proto")
)  # fmt: skip

_VERSIONED_NAME = re.compile(r"(?<![\w.-])([A-Za-z][\w-]*[.-])v?(\d+)(?![\w])", re.I)  # orders.v1, api-v2
_NAME = re.compile(r"(?<![\w./-])([A-Z][A-Za-z0-9]*[A-Z0-9][A-Za-z0-9]*|[A-Z][a-z]+[A-Za-z0-9]*)(?![\w/-])")
_CODE = re.compile(r"`[^`\n]*`")
# A tool-like spelling: a capital or a digit after the first letter (PostGIS, WGS84, UTC, H2, SQLite, MkDocs).
_TOOL = re.compile(r"(?<![\w./-])([A-Za-z][a-z]*(?:[A-Z0-9][A-Za-z0-9]*)+)(?![\w/]|-\d)")  # also PostGIS-Instanz
_CJK_LATIN = re.compile(r"(?<![\w./-])([A-Za-z][A-Za-z0-9+#]+)(?![\w/-])")
_IDENT = re.compile(r"(?<![\w./-])([a-z][a-z0-9]*_[a-z0-9_]*)(?![\w/-])")  # a prefix or a setting: harbor_, max_conns
_CLAUSE_START = re.compile(r"(?:^|[.;:!?。；：！？]\s*|\n)\s*[\"'(]*$")
_LATIN_WORDS = frozenset(
    [
        "the",
        "a",
        "an",
        "and",
        "or",
        "but",
        "we",
        "our",
        "it",
        "this",
        "that",
        "i",
        "you",
        "he",
        "she",
        "they",
        "el",
        "la",
        "los",
        "las",
        "un",
        "una",
        "y",
        "o",
        "es",
        "en",
        "de",
        "del",
        "der",
        "die",
        "das",
        "ein",
        "eine",
        "und",
        "ist",
        "mit",
        "wir",
    ]
)


def _names(text: str) -> set[str]:
    """Tool-like names in Latin prose: CamelCase or ALLCAPS words, or a Capitalized word not starting a clause."""
    out = set()
    for m in _NAME.finditer(text):
        word = m.group(1)
        if word.lower() in _LATIN_WORDS or len(word) < 2:
            continue
        lead = text[: m.start()]
        capitalized_only = word[1:].islower()
        if capitalized_only and _CLAUSE_START.search(lead):
            continue  # "Staging goes out …": a sentence's first word, not a name
        out.add(word.lower()[:-1] if len(word) > 2 and word[:-1].isupper() and word.endswith("s") else word.lower())
    return out


def _versions(text: str) -> dict[str, str]:
    found: dict[str, str] = {}
    for m in _VERSION.finditer(text):
        name, number = m.group(1), m.group(2)
        if "." in number or any(ch.isupper() for ch in name) or "-" in name:
            found[name.lower()] = number
    for m in _VERSIONED_NAME.finditer(text):
        found.setdefault(m.group(1).lower().rstrip(".-"), m.group(2))
    for m in _CLAUSE_VERSION.finditer(text):
        if m.group(1) in found.values():
            continue
        clause = _CLAUSE_BREAK.split(text[max(0, m.start() - 40) : m.start()])[-1]
        tools = tool_names(text) - _GENERIC_NAMES
        named = [n for n in re.findall(r"[A-Za-z][\w.+#-]*", clause) if n.lower() in tools]
        if named:
            found.setdefault(named[-1].lower(), m.group(1))
    return found


def quantities(text: str) -> frozenset[str]:
    """The quantities a statement gives, typed by their unit (``qty:hour=4``, ``qty:mb=25``, ``qty:分钟=30``),
    and the host names it names (``host:staging-api.pocketbook.dev``): values a change sets anew.

    >>> sorted(quantities("Refresh runs every 4 hours against sync.example.dev; files up to 25 MB."))
    ['host:sync.example.dev', 'qty:hour=4', 'qty:mb=25']
    """
    versions = set(_versions(text).values())
    out = {f"qty:{stem(u.lower()) if u.isascii() else u}={n.replace(',', '.')}" for n, u in _QUANTITY.findall(text)
           if n not in versions and u.lower() not in _NOT_UNITS and not set(u) & _CJK_FUNCTION}  # fmt: skip
    out.update(f"qty:clock={int(h):02d}:{m}" for h, m in _CLOCK.findall(text))
    out.update(
        "host:" + h
        for h in _HOST.findall(text)
        if h.rsplit(".", 1)[1] not in _FILE_SUFFIXES and h.split(".", 1)[0] not in _REVERSE_DNS  # com.acme.stockroom
    )
    return frozenset(out)


def conflicts(mine: frozenset[str], theirs: frozenset[str]) -> bool:
    """Whether a candidate (its :func:`values` and :func:`quantities`) sets a value of an entry anew: the same
    name with another version, the same unit with other numbers only ("every 2 hours" / "every 4 hours"), or other
    hosts only. Then what looks like a restatement is a change: it revises the entry, never leaves it as it was."""
    if _version_change(mine, theirs):
        return True
    for prefix in ("qty:", "host:"):
        a = {v for v in mine if v.startswith(prefix)}
        b = {v for v in theirs if v.startswith(prefix)}
        if prefix == "qty:":
            units = {v.split("=", 1)[0] for v in a} & {v.split("=", 1)[0] for v in b}
            if any(not {v for v in a if v.startswith(u + "=")} & b for u in units):
                return True
        elif a and b and not a & b:
            return True
    return False


def versioned_names(text: str) -> tuple[str, ...]:
    """The names ``text`` gives a version (``ESP-IDF 5.3`` -> ``esp-idf``), as they appear in searchable text."""
    return tuple(_versions(text))


def values(text: str) -> frozenset[str]:
    """The values a statement names, typed: its commands, paths and flags (:func:`typed_subjects`), tool-like
    names (``name:``) and versioned names (``ver:NAME=NUMBER``).

    >>> sorted(values("We build against ESP-IDF 5.1 with `idf.py build`"))
    ['cmd:idf.py build', 'name:esp-idf', 'path:idf.py', 'ver:esp-idf=5.1']
    """
    out = set(typed_subjects(text))
    out.update("name:" + n for n in _names(text))
    out.update("name:" + m.group(1) for m in _IDENT.finditer(text))
    out.update(f"ver:{name}={number}" for name, number in _versions(text).items())
    return frozenset(out)


def names(found: frozenset[str]) -> frozenset[str]:
    """The bodies of the values in ``found`` that name a thing: tool-like names, commands, paths, flags, versioned
    names (``name:osrm`` -> ``osrm``, ``ver:esp-idf=5.3`` -> ``esp-idf``)."""
    return frozenset(v.split(":", 1)[1].split("=", 1)[0] for v in found)


def tool_names(text: str) -> frozenset[str]:
    """The names ``text`` spells like a tool, a standard or a unit (``PostGIS``, ``WGS84``, ``UTC``, ``H2``), any
    Latin word in Chinese prose, and in English any capitalized word that does not start a clause (``Celery``),
    lowercased (an acronym's plural is the acronym). Unlike :func:`values`'s
    ``name:``, a capitalized German noun is not one.

    >>> sorted(tool_names("Alle Koordinaten liegen in PostGIS, in WGS84; CRDs nie löschen."))
    ['crd', 'postgis', 'wgs84']
    """
    pattern = _CJK_LATIN if HAN.search(text) else _TOOL
    out = set(_names(text)) if language(text) == "en" else set()  # English capitalizes names, not nouns
    for m in pattern.finditer(_CODE.sub(" ", text)):
        word = m.group(1)
        plural = len(word) > 2 and word[:-1].isupper() and word.endswith("s")
        out.add(word.lower()[:-1] if plural else word.lower())
    return frozenset(out)


# Acronyms of software prose that name no particular thing: sharing one says nothing about the subject.
_GENERIC_NAMES = frozenset(
    ("api", "apis", "ui", "ux", "ci", "cd", "pr", "prs", "id", "ids", "url", "urls", "http", "https", "json", "yaml",
     "xml", "sql", "cli", "sdk", "os", "db", "io", "ok", "faq", "todo")
)  # fmt: skip


def same_tools(mine: str, theirs: str) -> bool:
    """Whether a candidate names a tool-like thing the entry names too, and nothing of that kind the entry does
    not: a restatement keeps its rule's names and adds none ("Settings are stored in MMKV and trip data in SQLite"
    is not "Trip data goes to SQLite via Expo, settings to AsyncStorage"). A generic acronym (API, UI, CI, JSON)
    is no shared subject."""
    a, b = tool_names(mine), tool_names(theirs)
    return bool((a & b) - _GENERIC_NAMES) and a <= b


def same_subject(mine: str, theirs: str) -> bool:
    """Whether two statements name the same subject: the same tool-like names (:func:`same_tools`, either way
    round) or the same command, path or flag. With a model, such a pair needs less similarity (seventh pass)."""
    typed = {t for t in typed_subjects(mine) & typed_subjects(theirs) if not t.startswith("tool:")}
    return bool(typed) or same_tools(mine, theirs) or same_tools(theirs, mine)


def replaced_tokens(term: str, mine: frozenset[str]) -> frozenset[str]:
    """The subject tokens of a replaced term as the candidate's own text has them: a German word alone is not
    read as German, so its umlauts stay (``wöchentlich``) where the sentence's tokens fold them (``wochentlich``).

    >>> sorted(replaced_tokens("wöchentlich", frozenset({"wochentlich", "nacht"})))
    ['wochentlich']
    """
    found = subject_tokens(term)
    if found <= mine:
        return found
    folded = frozenset(unicodedata.normalize("NFKD", t).encode("ascii", "ignore").decode() or t for t in found)
    return folded if folded <= mine else found


def replaced_name(term: str, entry_values: frozenset[str]) -> bool:
    """Whether a term a correction says it replaces ("We replaced **GraphHopper** with OSRM", "**Feign** ist raus")
    is a name the entry gives (a tool, a command, a path): then the entry is about it, and the correction changes
    its subject even when the two share no other word.

    >>> replaced_name("GraphHopper", values("The routing engine is GraphHopper, embedded as a library."))
    True
    >>> replaced_name("nights", values("The fleet import runs at night from the ERP."))
    False
    """
    t = term.strip("`'\" ").lower()
    return len(t) >= 2 and t in names(entry_values)


@dataclass(frozen=True, slots=True)
class Change:
    """How a candidate changes an entry's subject: ``how`` is ``version`` or ``value``; ``new``/``old`` the values."""

    how: str
    new: frozenset[str]
    old: frozenset[str]


def _version_change(mine: frozenset[str], theirs: frozenset[str]) -> bool:
    a = dict(v[4:].split("=", 1) for v in mine if v.startswith("ver:"))
    b = dict(v[4:].split("=", 1) for v in theirs if v.startswith("ver:"))
    return any(name in b and b[name] != number for name, number in a.items())


def changed(
    mine: frozenset[str], theirs: frozenset[str], *, overlap: float, shared: int, stated: bool = False
) -> Change | None:
    """Whether a candidate (values ``mine``) sets a subject of an entry (values ``theirs``) to another value.

    ``overlap`` and ``shared`` are the weighted overlap and the count of the two texts' shared subject tokens
    (computed by the caller, who holds the Memory's term weights). ``stated``: the candidate says that something
    changed (a correction, "… now", "inzwischen", "改用"); then a tool-like name in prose is a value too
    (``name``: "Metric names carry the billing_ prefix now" / "… the meterly_ prefix"), from
    :data:`CHANGE_NAME_MIN`.
    """
    new, old = mine - theirs, theirs - mine
    if not new or not old:
        return None
    if _version_change(mine, theirs):
        return Change("version", new, old)
    if shared >= CHANGE_SHARED and overlap >= CHANGE_MIN and _kinds(new) & _kinds(old):
        return Change("value", new, old)
    if stated and shared >= CHANGE_SHARED and overlap >= CHANGE_NAME_MIN and _named(new) and _named(old):
        return Change("name", new, old)
    return None


def _named(found: frozenset[str]) -> bool:
    return any(v.startswith("name:") for v in found)


def _kinds(found: frozenset[str]) -> set[str]:
    """The types of the values in ``found`` that a change replaces: commands and paths (a file name in CJK prose,
    ``tool:atlas.hcl``, is a path). Tool names alone are not enough: two rules of one area name different tools
    ("Prefer records over Lombok for DTOs" / "map JPA entities to DTO records")."""
    out = set()
    hosts = {v[5:] for v in found if v.startswith("host:")}
    for v in found:
        kind, _, body = v.partition(":")
        if kind == "tool" and re.search(r"\.[a-z]{1,5}$", body) and body not in hosts:
            kind = "path"
        if kind == "qty":
            out.add("qty:" + body.split("=", 1)[0])  # a number changes only a number of the same unit (eighth pass)
        elif kind in ("cmd", "path", "host"):
            out.add(kind)
    return out


def pick_change(
    text: str,
    mine: frozenset[str],
    entries: Sequence[tuple[str, frozenset[str]]],
    weights: TermWeights,
    *,
    stated: bool = False,
) -> int | None:
    """The index of the entry (text, subject tokens) whose subject the candidate (``text``, tokens ``mine``)
    changes, the closest by weighted overlap; None when it changes none. ``stated``: see :func:`changed`."""
    own = values(text) | quantities(text)
    if not own:
        return None
    best: tuple[float, int] | None = None
    for i, (entry_text, theirs) in enumerate(entries):
        other = values(entry_text) | quantities(entry_text)
        ours = mine
        if any(v.startswith("host:") for v in own | other):
            # A host's words say where, not what about: two hosts of one domain share no subject (seventh pass).
            ours, theirs = subject_tokens(_HOST.sub(" ", text)), subject_tokens(_HOST.sub(" ", entry_text))
        aligned = align(ours, theirs)
        shared = aligned & theirs
        if not shared or _swap_only(aligned, theirs):
            continue
        # The subject is what is left when the values that differ are taken out of both texts.
        differing = subject_tokens(" ".join(v.split(":", 1)[1] for v in own ^ other)) - shared
        overlap = weighted_overlap(aligned - differing, theirs - differing, weights)
        change = changed(own, other, overlap=overlap, shared=len(shared), stated=stated)
        if change is not None and not _same_step(text, change) and change.how == "value":
            continue
        if change is not None and (best is None or overlap > best[0]):
            best = (overlap, i)
    return None if best is None else best[1]


def _same_step(text: str, change: Change) -> bool:
    """Whether a change of command keeps the step it is about. Two commands of one program are two steps
    (``cargo test`` / ``cargo fmt --check``: two rules) unless the new text still names the old command's step in
    its prose ("lint now runs in CI; before a commit `make check` is enough" for ``make lint``)."""
    new = [v[4:].split() for v in change.new if v.startswith("cmd:")]
    old = [v[4:].split() for v in change.old if v.startswith("cmd:")]
    if not new or not old or any(n[0] != o[0] for n in new for o in old if n and o):
        return True  # another program (or a path): a replacement, not a second step
    prose = subject_tokens(_CODE.sub(" ", text))
    return any(subject_tokens(" ".join(o[1:])) & prose for o in old)


def _swap_only(mine: frozenset[str], theirs: frozenset[str]) -> bool:
    return len(mine - theirs) == 1 and len(theirs - mine) == 1


# Concepts a rule is made of, the same in every language (capdup4): a restatement across languages ("Money is
# integer cents in an i64" / "Los importes se guardan en céntimos como i64") or in other words ("价格和金额都按分存成
# int64" / "金额一律用整数分存储") shares no subject token, but it keeps what the rule is *about* and *how*: money, an
# integer, no floating point; UTC and local time; logs and phone numbers. Each concept is a small set of the words
# software prose uses for it in the languages of the benchmark; a word matches as a word start in Latin script and
# anywhere in CJK.
_CONCEPT_WORDS: dict[str, tuple[str, ...]] = {
    "money": ("money", "amount", "price", "prices", "balance", "importe", "precio", "dinero", "monto", "montant",
              "prix", "preço", "precos", "preços", "dinheiro", "importo", "prezz", "betrag", "beträge", "preis",
              "geld", "金额", "价格", "价钱", "金額", "料金", "価格", "금액", "가격"),
    "minor": ("cent", "céntimo", "centimo", "centavo", "centime", "centesim", "以分", "按分", "整数分", "“分”",
              "整型分"),
    "integer": ("integer", "int64", "i64", "int32", "whole number", "whole cent", "whole kilo", "whole metre",
                "whole meter", "entero", "entier", "inteiro", "intero", "interi", "ganzzahl", "ganze zahl",
                "ganzen zahl", "ganze meter", "ganze cent", "整数", "整型", "정수"),
    "float": ("float", "floating", "f64", "double", "flotante", "coma flotante", "flottant", "virgule", "kommazahl",
              "nachkomma", "gleitkomma", "decimal", "décimal", "浮点", "小数", "浮動小数", "실수"),
    "utc": ("utc",),
    "local_time": ("local time", "ortszeit", "lokalzeit", "hora local", "heure locale", "ora locale", "本地时间",
                   "北京时间", "当地时间", "ローカル時間", "現地時間", "time zone", "timezone", "zeitzone",
                   "zona horaria", "fuseau", "时区", "タイムゾーン"),
    "log": ("log", "logs", "logging", "logg", "ログ", "日志", "로그"),
    "phone": ("phone", "teléfono", "telefono", "téléphone", "telefon", "手机号", "电话", "電話", "전화"),
    "commit_message": ("commit message", "commit-message", "commit-nachricht", "mensaje de commit", "提交信息",
                       "提交说明", "コミットメッセージ"),
}  # fmt: skip
# A Latin word matches as the start of a word of the text (one dictionary probe per word and length); a phrase or
# a CJK word as a substring of the casefolded text.
_CONCEPT_PREFIX: dict[str, str] = {
    w: name for name, words in _CONCEPT_WORDS.items() for w in words if w.isalnum() and all(ch < "\u3000" for ch in w)
}
_CONCEPT_PREFIX_LENGTHS = sorted({len(w) for w in _CONCEPT_PREFIX})
_CONCEPT_SUBSTRING: tuple[tuple[str, str], ...] = tuple(
    (w, name) for name, words in _CONCEPT_WORDS.items() for w in words if w not in _CONCEPT_PREFIX
)
_CONCEPT_WORD = re.compile(r"[a-zà-ÿ0-9]+")
# Concepts two statements must share to be one rule by their concepts alone (capdup4, fitted on a dev half).
CONCEPT_SHARED = 2


def concepts(text: str) -> frozenset[str]:
    """The concepts of :data:`_CONCEPT_WORDS` a statement names, whatever its language.

    >>> sorted(concepts("Los importes se guardan siempre en céntimos como i64; nunca usamos f64 para dinero."))
    ['float', 'integer', 'minor', 'money']
    >>> sorted(concepts("价格和金额都按分存成 int64，不要用 float。"))
    ['float', 'integer', 'minor', 'money']
    """
    low = text.casefold()
    found = {name for w, name in _CONCEPT_SUBSTRING if w in low}
    for word in set(_CONCEPT_WORD.findall(low)):
        for n in _CONCEPT_PREFIX_LENGTHS:
            if n > len(word):
                break
            name = _CONCEPT_PREFIX.get(word[:n])
            if name is not None:
                found.add(name)
    return frozenset(found)


def same_concepts(mine: frozenset[str], theirs: frozenset[str]) -> bool:
    """Whether two statements are one rule by their concepts: they share ≥ :data:`CONCEPT_SHARED` and each names
    at most one the other does not (a restatement keeps what its rule is about, and adds or drops little)."""
    return len(mine & theirs) >= CONCEPT_SHARED and len(mine - theirs) <= 1 and len(theirs - mine) <= 1
