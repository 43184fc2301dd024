"""User statements → candidates: a user's durable statements and corrections, everything else skipped with a reason.

:func:`statement_candidates` — "always …", "never …", "don't …", "we use X", "prefer …", "remember …",
"no, use X instead of Y", "actually …", "stop doing …", lifecycle facts. Everything else is skipped with a
reason: questions, speculation, one-off task instructions ("for this task", "right now", "in this PR"),
restatements of system-prompt boilerplate, chatter, and plain task requests that carry no durable signal. The
user's rationale ("…, so …", "because …") stays in the text. Project scope by default; user scope only with a
cross-project marker ("in all my projects", "I personally …").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..domain.analyzer import STOPWORDS
from ._patterns import (
    CONSTRAINT,
    CONTRAST,
    CONVENTION,
    CORRECTION_LEAD,
    DECISION,
    DEICTIC_START,
    FACT,
    IMPERATIVE_START,
    LEADS,
    LIFECYCLE,
    ONE_OFF,
    PREFERENCE,
    PREFERENCE_SOFT,
    QUESTION_START,
    RATIONALE,
    REPLACED,
    SPECULATION,
    STATE_CHANGE,
    STOP_DOING,
    SYSTEM,
    USER_SCOPE,
    is_chatter,
    lifecycle_stage,
)
from ._text import clean, excerpt, informative_count, sentences
from .candidates import Candidate, Skip
from .events import Scope, UserCorrection, UserPrompt

__all__ = ["StatementAnalysis", "statement_candidates"]


@dataclass(frozen=True, slots=True, kw_only=True)
class StatementAnalysis:
    """The candidates one user statement produced, and the parts it skipped (with reasons)."""

    candidates: tuple[Candidate, ...]
    skipped: tuple[Skip, ...]


# ============================================================================================ statements
_PLAIN_WORDS = frozenset(
    [
        "it's",
        "that's",
        "there's",
        "use",
        "keep",
        "prefer",
        "stop",
        "don't",
        "do",
        "never",
        "always",
        "avoid",
        "run",
        "make",
        "put",
        "add",
        "write",
    ]
)


def _strip_leads(text: str, *, correction: bool) -> str:
    out = text.strip()
    for _ in range(3):
        new = LEADS.sub("", out, count=1)
        if correction:
            new = CORRECTION_LEAD.sub("", new, count=1)
        new = new.strip(" ,;:-")
        if new == out:
            break
        out = new
    if out != text.strip() and out[:1].islower():
        first = re.match(r"[a-z']+", out)
        if first and (first.group(0) in STOPWORDS or first.group(0) in _PLAIN_WORDS):
            out = out[0].upper() + out[1:]  # "the ledger service …", never "pnpm only" -> "Pnpm only"
    return out


def _kind_for(s: str, *, correction: bool, lifecycle: bool) -> str | None:
    if correction:
        return "correction"
    if lifecycle:
        return "fact"
    if DECISION.search(s):
        return "decision"
    if PREFERENCE.search(s):
        return "preference"
    if PREFERENCE_SOFT.search(s) and (USER_SCOPE.search(s) or CONSTRAINT.search(s) or CONVENTION.search(s)):
        return "preference"
    if CONSTRAINT.search(s):
        return "constraint"
    if CONVENTION.search(s):
        return "convention"
    if FACT.search(s):
        return "fact"
    return None


def _replaced_terms(s: str) -> tuple[str, ...]:
    out = []
    for m in REPLACED.finditer(s):
        term = (m.group("a") or m.group("b") or "").split(" - ", 1)[0].strip(" `'\"")
        words = term.split()
        if 0 < len(words) <= 5:
            out.append(" ".join(words))
    return tuple(out)


def _is_rule(sentence: str) -> bool:
    body = CORRECTION_LEAD.sub("", sentence, count=1).strip(" ,;:-")
    return bool(STOP_DOING.search(body) or CONSTRAINT.search(body) or IMPERATIVE_START.search(body))


@dataclass(slots=True)
class _Piece:
    text: str
    kind: str
    scope: Scope
    correction: bool
    lifecycle: bool
    stage: str | None


def statement_candidates(event: UserPrompt | UserCorrection) -> StatementAnalysis:
    """Candidates from a user's prompt or correction, one per run of adjacent durable sentences.

    >>> [c.kind for c in statement_candidates(UserPrompt(text="Never commit to main. Fix the typo.")).candidates]
    ['constraint']
    """
    text = clean(event.text)
    forced_correction = isinstance(event, UserCorrection)
    if not text:
        return StatementAnalysis(candidates=(), skipped=(Skip(excerpt="", reason="empty"),))
    if SYSTEM.search(text):
        return StatementAnalysis(candidates=(), skipped=(Skip(excerpt=excerpt(text), reason="system_restatement"),))
    if is_chatter(text):
        return StatementAnalysis(candidates=(), skipped=(Skip(excerpt=excerpt(text), reason="chatter"),))

    skipped: list[Skip] = []
    runs: list[list[_Piece]] = [[]]
    for raw in sentences(text):
        s = raw.strip()
        low = s.lower()
        reason = None
        lifecycle = LIFECYCLE.search(s) is not None
        correction = forced_correction or bool(CORRECTION_LEAD.search(s)) or bool(STOP_DOING.search(s))
        if s.endswith("?") or (QUESTION_START.search(s) and not s.endswith(".")):
            reason = "question"
        elif SPECULATION.search(s):
            reason = "speculation"
        elif ONE_OFF.search(s) and not lifecycle:
            reason = "one_off"
        elif is_chatter(s):
            reason = "chatter"
        kind = None
        continuation = False
        if reason is None:
            body = CORRECTION_LEAD.sub("", s, count=1) if correction else s
            kind = _kind_for(body, correction=correction, lifecycle=lifecycle)
            if correction and kind == "correction" and not forced_correction and not STOP_DOING.search(s):
                # "No, make it blue." corrects this task; a durable correction contrasts, explains or rules.
                durable = (
                    CONTRAST.search(body)
                    or RATIONALE.search(body)
                    or STATE_CHANGE.search(body)
                    or _kind_for(body, correction=False, lifecycle=lifecycle)
                )
                if not durable:
                    reason = "one_off"
            elif kind is None:
                # A rationale right after a durable sentence belongs to it ("Use X. It breaks otherwise.").
                if runs[-1] and RATIONALE.search(low) and len(s.split()) <= 30:
                    kind = runs[-1][-1].kind
                    continuation = True
                else:
                    reason = "no_durable_signal"
        if reason is not None or kind is None:
            skipped.append(Skip(excerpt=excerpt(s), reason=reason or "no_durable_signal"))
            if runs[-1]:
                runs.append([])
            continue
        # Scope is per sentence: "In all my projects I prefer X. Never use tabs here." is two candidates.
        scope: Scope = "user" if USER_SCOPE.search(s) else "project"
        if continuation:
            scope = runs[-1][-1].scope
        elif runs[-1] and runs[-1][-1].scope != scope:
            runs.append([])
        piece = _Piece(text=s, kind=kind, scope=scope, correction=correction, lifecycle=lifecycle, stage=None)
        piece.stage = lifecycle_stage(s)
        runs[-1].append(piece)

    out: list[Candidate] = []
    for run in runs:
        if not run:
            continue
        first = run[0]
        scope = first.scope
        correction = any(p.correction for p in run)
        lifecycle = any(p.lifecycle for p in run)
        kind = first.kind if not correction else "correction"
        if lifecycle and not correction:
            kind = "fact"
        body = " ".join(_strip_leads(p.text, correction=p.correction) for p in run)
        if DEICTIC_START.search(body) and informative_count(body) < 8:
            skipped.append(Skip(excerpt=excerpt(body), reason="not_standalone"))
            continue
        replaces = tuple(t for p in run if p.correction for t in _replaced_terms(p.text))
        stage = next((p.stage for p in run if p.stage), None)
        out.append(
            Candidate(
                kind=kind,
                text=body,
                origin="correction" if correction else "statement",
                scope=scope,
                slug="project-lifecycle" if lifecycle and scope == "project" else None,
                important=kind in ("constraint", "correction") or lifecycle,
                # Standing rules (constraints, corrections that forbid or require) and the lifecycle are needed
                # in every session (Graphit: mandatory), so a compaction cannot lose them; preferences,
                # conventions and factual corrections are found by search.
                mandatory=kind == "constraint"
                or (lifecycle and not correction)
                or (correction and any(_is_rule(p.text) for p in run)),
                replaces=replaces,
                stage=stage,
            )
        )
    return StatementAnalysis(candidates=tuple(out), skipped=tuple(skipped))
