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
from ._language import (
    FROM_NOW_ON,
    LIFECYCLE_ML,
    SYSTEM_ML,
    WORKFLOW_GATE,
    Reading,
    language,
    lifecycle_stage_ml,
    read_sentence,
)
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
from .subjects import quantities, versioned_names

__all__ = ["StatementAnalysis", "is_mandatory", "lesson_candidates", "statement_candidates"]


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
    replaced: tuple[str, ...] = ()


_MODALITY_KIND = {"constraint": "constraint", "convention": "convention", "preference": "preference",
                  "decision": "decision"}  # fmt: skip


def _english(s: str, rd: Reading, *, forced: bool, lifecycle: bool) -> tuple[str | None, str | None, bool]:
    """(skip reason, kind, correction) for an English sentence: the trigger words first, then its meaning."""
    correction = forced or bool(CORRECTION_LEAD.search(s)) or bool(STOP_DOING.search(s))
    if s.endswith("?") or (QUESTION_START.search(s) and not s.endswith(".")) or rd.question:
        return "question", None, correction
    if SPECULATION.search(s) or rd.speculation:
        return "speculation", None, correction
    if rd.lesson:
        return None, "lesson", False
    if (ONE_OFF.search(s) or (rd.one_off and not rd.change)) and not lifecycle:  # "… was bumped this morning"
        return "one_off", None, correction
    if is_chatter(s) or rd.chatter:
        return "chatter", None, correction
    body = CORRECTION_LEAD.sub("", s, count=1) if correction else s
    kind = _kind_for(body, correction=correction, lifecycle=lifecycle)
    if correction and kind == "correction" and not forced and not STOP_DOING.search(s):
        # "No, make it blue." corrects this task; a durable correction contrasts, explains, rules or states a fact.
        durable = (
            CONTRAST.search(body)
            or RATIONALE.search(body)
            or STATE_CHANGE.search(body)
            or _kind_for(body, correction=False, lifecycle=lifecycle)
            or (rd.evidence >= 1 and not rd.task_request)
        )
        return (None if durable else "one_off"), kind, correction
    if kind is not None and not lifecycle and _unmarked_change(s, rd):
        return None, "correction", True
    if kind is None:
        if rd.task_request:
            return "task_request", None, False
        if _unmarked_change(s, rd):
            return None, "correction", True
        setting = _sets_value(s)
        if (rd.evidence >= 1 or setting) and informative_count(s) >= (3 if setting else 4):
            return None, "fact", False  # a plain statement of project fact ("The docs site is Docusaurus …")
        ruling = rd.modality in ("constraint", "preference", "decision") or bool(_GENERIC_PASSIVE.search(s))
        if ruling and informative_count(s) >= 4:
            # the language-neutral reading of a rule or a preference ("Make sure …", "Generally I like …") and a
            # generic passive; not the "we …" convention cues, which chatter shares
            return None, _MODALITY_KIND.get(rd.modality or "convention", "convention"), False
    return None, kind, correction


# A present passive that states how something is done ("Errors are retried three times …", "Payloads are checked
# with valibot"), not that it was just done ("the deploy is finished", "it's merged").
_GENERIC_PASSIVE = re.compile(
    r"(?i)\b(?:is|are|gets?)\s+(?:always\s+|only\s+|never\s+)?(?!(?:finished|done|fixed|merged|deployed|released"
    r"|pushed|committed|started|stopped|failed|passed|closed|resolved|updated|solved|completed|approved|broken|called"
    r"|based|supposed|used|related|interested|tired|excited|worried|confused|scheduled|blocked)\b)[a-z]+ed\b"
)


def _sets_value(s: str) -> bool:
    """Whether a sentence gives a name a version, a number a unit or names a host ("We're on .NET 8", "Attachments
    can be up to 50 MB", "Staging sync runs on sync-staging.example.app"): a setting, evidence enough for a short
    fact (seventh pass)."""
    return bool(versioned_names(s)) or bool(quantities(s))


def _unmarked_change(s: str, rd: Reading) -> bool:
    """A statement that a fact changed, with no "no"/"actually": "We moved the e2e suite off kind to k3d". A Chinese
    change verb carries its object ("推送改成走个推了"), so there it is evidence enough."""
    evidence = rd.evidence >= 1 or bool(rd.replaced) or rd.lang == "zh"
    return rd.change and not FROM_NOW_ON.search(s) and not rd.task_request and evidence


def _other_language(s: str, rd: Reading, *, forced: bool, lifecycle: bool) -> tuple[str | None, str | None, bool]:
    """(skip reason, kind, correction) for a German or Chinese sentence, from :func:`read_sentence` alone."""
    correction = forced or rd.correction_lead
    if rd.question:
        return "question", None, correction
    if rd.speculation:
        return "speculation", None, correction
    if rd.lesson:
        return None, "lesson", False
    if rd.one_off and not lifecycle:
        return "one_off", None, correction
    if rd.chatter:
        return "chatter", None, correction
    if rd.task_request:
        return "task_request", None, correction
    if lifecycle and not correction:
        return None, "fact", False
    if correction or _unmarked_change(s, rd):
        return None, "correction", True
    if rd.modality is not None:
        return None, _MODALITY_KIND[rd.modality], False
    if rd.evidence >= 1:
        return None, "fact", False
    return "no_durable_signal", None, False


def statement_candidates(event: UserPrompt | UserCorrection) -> StatementAnalysis:
    """Candidates from a user's prompt or correction, one per run of adjacent durable sentences.

    >>> [c.kind for c in statement_candidates(UserPrompt(text="Never commit to main. Fix the typo.")).candidates]
    ['constraint']
    """
    text = clean(event.text)
    forced_correction = isinstance(event, UserCorrection)
    if not text:
        return StatementAnalysis(candidates=(), skipped=(Skip(excerpt="", reason="empty"),))
    if SYSTEM.search(text) or SYSTEM_ML.search(text):
        return StatementAnalysis(candidates=(), skipped=(Skip(excerpt=excerpt(text), reason="system_restatement"),))
    if is_chatter(text):
        return StatementAnalysis(candidates=(), skipped=(Skip(excerpt=excerpt(text), reason="chatter"),))

    skipped: list[Skip] = []
    runs: list[list[_Piece]] = [[]]
    for raw in sentences(text):
        s = raw.strip()
        lang = language(s)
        rd = read_sentence(s, lang)
        lifecycle = LIFECYCLE.search(s) is not None or bool(LIFECYCLE_ML.search(s))
        read = _english if lang == "en" else _other_language
        reason, kind, correction = read(s, rd, forced=forced_correction, lifecycle=lifecycle)
        continuation = False
        # A rationale right after a durable sentence belongs to it ("Use X. It breaks otherwise.").
        if reason is None and kind is None and runs[-1] and RATIONALE.search(s.lower()) and len(s.split()) <= 30:
            kind = runs[-1][-1].kind
            continuation = True
        if reason is not None or kind is None:
            skipped.append(Skip(excerpt=excerpt(s), reason=reason or "no_durable_signal"))
            if runs[-1]:
                runs.append([])
            continue
        # Scope is per sentence: "In all my projects I prefer X. Never use tabs here." is two candidates.
        scope: Scope = "user" if USER_SCOPE.search(s) else "project"
        if continuation:
            scope = runs[-1][-1].scope
        elif runs[-1] and (runs[-1][-1].scope != scope or "lesson" in (kind, runs[-1][-1].kind)):
            runs.append([])
        replaced = (_replaced_terms(s) or rd.replaced) if correction else ()
        stage = lifecycle_stage(s) or lifecycle_stage_ml(s)
        piece = _Piece(text=s, kind=kind, scope=scope, correction=correction, lifecycle=lifecycle, stage=stage,
                       replaced=tuple(dict.fromkeys(replaced)))  # fmt: skip
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
        replaces = tuple(t for p in run for t in p.replaced)
        stage = next((p.stage for p in run if p.stage), None)
        rule = kind == "constraint" or (
            correction and any(_is_rule(p.text) or read_sentence(p.text).modality == "constraint" for p in run)
        )
        out.append(
            Candidate(
                kind=kind,
                text=body,
                origin="correction" if correction else "statement",
                scope=scope,
                slug="project-lifecycle" if lifecycle and scope == "project" else None,
                important=kind in ("constraint", "correction", "lesson") or lifecycle,
                mandatory=is_mandatory(body, lifecycle=lifecycle and not correction, rule=rule),
                replaces=replaces,
                stage=stage,
            )
        )
    return StatementAnalysis(candidates=tuple(out), skipped=tuple(skipped))


def is_mandatory(text: str, *, lifecycle: bool, rule: bool) -> bool:
    """Whether a captured statement belongs in the mandatory tier (loaded in full into every session).

    Graphit "Acquisition": "Standing context needed in every session is mandatory; important but conditional
    context is important without necessarily being mandatory." Capture reads that as two cases only:

    - the project lifecycle ("in production, so every schema change needs a migration"): it bears on every
      change an agent plans;
    - a rule (a constraint, or a correction that forbids or requires) about the workflow itself: when work
      counts as done, what must run before a commit, push, merge, release, deploy or apply, what never goes to
      main or into the repository (:data:`WORKFLOW_GATE`, English, German, Chinese). Every session meets it.

    Every other rule ("finalizers are removed only after…", "the DATEV export must follow EXTF 7.0") applies
    to one part of the project: it is ``important`` and found by search when that part is touched, so the
    mandatory tier stays small (issue 14, item 8).

    >>> is_mandatory("Always run `make test` before you say it is done.", lifecycle=False, rule=True)
    True
    >>> is_mandatory("Never log full card numbers or CVVs.", lifecycle=False, rule=True)
    False
    """
    return lifecycle or (rule and bool(WORKFLOW_GATE.search(text)))


MAX_LESSON_CHARS = 1200


def lesson_candidates(report: str) -> tuple[Candidate, ...]:
    """A turn report that tells of a failed or reverted attempt and its cause, as one ``lesson`` candidate.

    Trigger: an attempt ("tried", "versucht", "尝试") and a failure or revert ("broke", "reverted", "回滚") in
    the report, in any language :func:`~memstone.capture._language.read_sentence` reads.
    Why: "tried X, it broke Y, reverted, nothing committed" changes nothing on disk, so it makes no
    working_note, yet it is exactly what the next session needs so as not to try X again (issue 16).
    Outcome: one important (not mandatory) lesson with the report's text.

    >>> [c.kind for c in lesson_candidates("Tried Node 22; the canvas addon failed to build, so I reverted.")]
    ['lesson']
    """
    text = clean(report)
    if not text or len(text) > MAX_LESSON_CHARS or not read_sentence(text).lesson:
        return ()
    return (Candidate(kind="lesson", text=text, origin="statement", important=True, tags=("lesson",)),)
