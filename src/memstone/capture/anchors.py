"""Restatements across languages by their anchors (capdup5, issue 16).

A rule said again in another language shares no word with its entry but the ones no language translates: the names
of tools and standards, identifiers, commands, paths and numbers ("Logs are JSON, written with slog." /
"ログは slog で JSON 形式に出力する。"; "Every new endpoint ships with a Pact contract test." / "Neue Endpunkte bekommen
immer einen Contract-Test mit Pact."). Those words are the anchors of the pair. :func:`restated_anchor` takes a
candidate onto the live entry in another language that holds its anchors when that entry is the *only* one of the
Memory holding them all (the rare-term evidence of :class:`~.nearness.TermWeights` at its limit: a document
frequency of one), and nothing conflicts: the candidate names no tool, command or path the entry does not, gives no
other value of one the entry gives, and names no other command, path or flag. Two rules about the same tool in two
languages both hold its name, so the anchor is then not unique and nothing is merged.

The rule runs only when no other rule matched (the same place as the concept rule); it is language-neutral and uses
no word list. With a multilingual model, :func:`restated_meaning` then takes a statement that shares no anchor at all
("Sensordaten werden nie gelöscht, nur ins Archiv verschoben." / "Sensor readings are never deleted; …") onto the
entry in another language its meaning is clearly nearest to (capdup6).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ._language import language
from ._text import probes, subject_tokens, typed_subjects
from .meaning import ranked_by_meaning
from .nearness import XLANG_LEAD, Semantic, other_subjects
from .subjects import _GENERIC_NAMES, concepts, conflicts, quantities, tool_names, values
from .targets import Target

__all__ = [
    "anchor_names",
    "anchor_tokens",
    "corrected_anchor",
    "identifiers",
    "restated_anchor",
    "restated_meaning",
]

# Shared anchor tokens the rule needs without a multilingual model's vote. Fitted on the dev fit half (half A and the
# two fresh files): with one, the pairs the rule takes there were 32 restatements and 2 other rules, but on the
# report half (B) one shared name took 4 other rules and no restatement; with two, 17 restatements and no other rule
# on A. With a multilingual model, one shared anchor and a cosine of at least its ANCHOR_COSINE.
ANCHOR_SHARED = 2


def anchor_names(text: str) -> frozenset[str]:
    """The names a statement carries that no translation changes: tool-like names (:func:`~.subjects.tool_names`)
    and the bodies of its commands, paths and flags, without generic acronyms (API, CI, JSON) and concept words
    (UTC, float: those the concept rule reads).

    >>> sorted(anchor_names("Share links are signed with ShareToken (JSON body); run `make thumbs` after an import."))
    ['make thumbs', 'sharetoken']
    >>> sorted(anchor_names("缩略图在缓存之前用 libvips 裁成 320 像素。"))
    ['libvips']
    """
    found = set(tool_names(text)) | {v.split(":", 1)[1] for v in typed_subjects(text) if not v.startswith("tool:")}
    return frozenset(n for n in found if n not in _GENERIC_NAMES and not concepts(n))


# A name a project gives a thing, written as an identifier in any language's prose: a bucket, a queue, a service, a
# setting (``ormeggio-uploads``, ``print-gateway``, ``max_conns``, ``kds2``): lowercase, joined by ``-`` or ``_``.
_IDENTIFIER = re.compile(r"(?<![\w./@:-])([a-z][a-z0-9]*(?:[-_][a-z0-9]+)+)(?![\w/@-]|\.\w)")


def identifiers(text: str) -> frozenset[str]:
    """The identifiers a statement names in its prose or code (capcorr9); a hyphenated word of English prose
    ("read-only", "e-mails") is read as one too, so only :func:`corrected_anchor`'s uniqueness makes it evidence.

    >>> sorted(identifiers("Uploads go to the ormeggio-media bucket now; ormeggio-uploads is read-only."))
    ['ormeggio-media', 'ormeggio-uploads', 'read-only']
    """
    return frozenset(m.group(1) for m in _IDENTIFIER.finditer(text.lower()))


def corrected_anchor(text: str, targets: Sequence[Target]) -> Target | None:
    """The live entry a correction changes by the one name they alone share, or None (capcorr9).

    Trigger: the candidate says that something changed (a correction) and no rule on words, values or meaning took
    it; of the names it gives (:func:`anchor_names`: tools, commands, paths; and :func:`identifiers`), some are
    held by exactly one live entry, and all such names point at that same entry.
    Why: a correction often keeps only the name of what it changes and says the rest anew, in another language
    than its entry ("Uploads go to the ormeggio-media bucket now; ormeggio-uploads is read-only." /
    "파일 업로드는 S3 버킷 ormeggio-uploads 에 저장한다."; "Meilisearch moved to port 7800" / "The search index is
    Meilisearch, …"). A name that one entry alone holds is the rarest evidence the Memory has (a document frequency
    of one, as :func:`restated_anchor`).
    Outcome: that entry, which the correction revises. Working notes and entries with a slug are never taken; a
    name held by two entries or more says nothing; names that point at two different entries take none.
    """
    own = {n for n in _code_names(text) if len(n) >= 3}
    if not own:
        return None
    pool = [t for t in targets if t.kind != "working_note" and t.slug is None]
    holders: dict[str, list[Target]] = {}
    for t in pool:
        theirs = _code_names(t.text)
        for n in own & theirs:
            holders.setdefault(n, []).append(t)
    unique = {id(ts[0]): ts[0] for ts in holders.values() if len(ts) == 1}
    return next(iter(unique.values())) if len(unique) == 1 else None


def _code_names(text: str) -> frozenset[str]:
    """The names a statement writes as code: its commands, paths and flags, and its :func:`identifiers`."""
    typed = {v.split(":", 1)[1] for v in typed_subjects(text) if not v.startswith("tool:")}
    return frozenset(typed) | identifiers(text)


def anchor_tokens(text: str) -> frozenset[str]:
    """The subject tokens (as written) of a statement's :func:`anchor_names`, and its tokens holding a digit."""
    words = subject_tokens(" ".join(sorted(anchor_names(text))), synonyms=False)
    digits = {t for t in subject_tokens(text, synonyms=False) if not t.startswith(("b_", "u_"))}
    return words | {t for t in digits if any(ch.isdigit() for ch in t)}


def restated_anchor(
    text: str, exact: frozenset[str], targets: Sequence[Target], semantic: Semantic | None = None
) -> Target | None:
    """The entry in another language that ``text`` (subject tokens as written: ``exact``) says again, or None.

    The two share at least one token as written (across languages: a name, an identifier, a number), one of the
    entry's own anchors among them if it has any (a rule is said again with its names), no other live
    entry holds all the shared tokens, the candidate names nothing the entry does not (:func:`anchor_names`), gives
    no other value of one the entry gives, and names no other command, path or flag. Of several, the one sharing
    the most tokens, then the latest. Without a multilingual model the two share at least :data:`ANCHOR_SHARED`
    tokens; with one, one is enough when the two are at least ``semantic.anchor`` similar
    (:data:`~.nearness.ANCHOR_COSINE`). Working notes are never compared, and an
    entry with a slug (the project's lifecycle, a build file) is never taken: those have their own rules.
    """
    lang = language(text)
    own_values = values(text) | quantities(text)
    own_typed = typed_subjects(text)
    own = anchor_tokens(text)
    keys = probes(exact)  # an entry sharing a token holds one of its probes: only those are tokenized
    live = [t for t in targets if t.kind != "working_note" and any(k in t.search for alt in keys for k in alt)]
    best: tuple[int, str, Target] | None = None
    for t in live:
        if t.slug is not None:
            continue
        theirs = anchor_tokens(t.text)
        shared = exact & t.exact & (own | theirs)
        if not shared or (theirs and not shared & theirs) or lang in {language(part) for part in t.text.split("\n\n")}:
            continue  # the entry says it in this language already (a merged entry holds each wording)
        if not own <= t.exact or conflicts(own_values, t.values) or other_subjects(own_typed, t.typed):
            continue
        if any(o is not t and shared <= o.exact for o in live):
            continue  # another entry holds the same anchors: not evidence for this one
        cos = semantic.cosine(text, t.text) if semantic is not None and semantic.anchor is not None else None
        if cos is None and len(shared) < ANCHOR_SHARED:
            continue  # one shared name alone is two rules about one tool as often as one rule said twice
        if cos is not None and semantic is not None and semantic.anchor is not None and cos < semantic.anchor:
            continue  # a multilingual model says the two mean different things ("Locker ids …, not ULIDs")
        key = (len(shared), t.written)
        if best is None or key > best[:2]:
            best = (len(shared), t.written, t)
    return restated_meaning(text, targets, semantic) if best is None else best[2]


def restated_meaning(text: str, targets: Sequence[Target], semantic: Semantic | None) -> Target | None:
    """The entry in another language that ``text`` says again by meaning alone, or None (capdup6).

    Trigger: a multilingual model is loaded (``semantic.crosslang``: :data:`~.nearness.XLANG_COSINE`), and of the
    live entries written in other languages than ``text`` the nearest is at least that similar and leads the next
    one by :data:`~.nearness.XLANG_LEAD`.
    Why: a rule said again in another language shares no word with its entry, and often no name either ("Las alarmas
    … por SMS y por correo" / "Over-temperature alarms always go out on both channels"); across languages the
    meaning is the only evidence, and a clear lead over every other entry is what keeps two rules of one area apart.
    Outcome: that entry (the caller revises it, or takes the candidate as a correction when a value differs), unless
    something conflicts: the candidate names a tool, command or path the entry does not, or another command, path
    or flag. Entries with a slug and working notes are never taken; an entry that has no vector (not embedded this
    event) is not compared.
    """
    if semantic is None or semantic.crosslang is None:
        return None
    lang = language(text)
    scored = ranked_by_meaning(
        text, targets, semantic, keep=lambda t: lang not in {language(part) for part in t.text.split("\n\n")}
    )
    if not scored:
        return None
    cos, t = scored[0]
    if cos < semantic.crosslang or (len(scored) > 1 and cos - scored[1][0] < XLANG_LEAD):
        return None
    if not anchor_names(text) <= anchor_names(t.text) or other_subjects(typed_subjects(text), t.typed):
        return None  # it names something the entry does not: another rule about that thing
    return t
