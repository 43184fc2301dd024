"""The admission rules (RFC "Memory admission rules", Graphit "Acquisition") as code, and near-duplicate planning.

:func:`admit` checks one candidate and returns an :class:`Admission` whose ``reason`` is a stable code:

======================  =====================================================================================
code                    rule
======================  =====================================================================================
``secret``              never store secrets (API keys, tokens, private keys, passwords in URLs)
``no_evidence``         3. supported by the current operation's evidence (every cited Source is present)
``unsupported``         3. a model candidate must restate its evidence: ≥ 60 % of its subject terms appear in it
``unknown_kind``        the kind is not a word, or (model output) not one of the known kinds
``too_short``           4. understandable alone: at least 3 informative terms and 12 characters
``not_standalone``      4. understandable alone: no leading "it/this/that …" without an antecedent
``multiple_topics``     4. one topic: a statement longer than 1,200 characters holds several
``question``            not a durable entry: a question
``speculation``         not a durable entry: a hypothesis ("maybe", "I think we might")
``one_off``             5. reusable across tasks: not "for this task", "right now", "in this PR"
``system_restatement``  junk: restates an agent's system prompt
``chatter``             junk: "ok", "thanks"
``file_inventory``      2. not recoverable cheaply from code: no lists of files
``location_only``       2. not recoverable cheaply from code: "X is in src/y" with no rule attached
``obvious``             2. not recoverable cheaply from code: existence, a file's content, what the project is
                        made with, a count of its parts, with no modality and no reason (``_glance.py``)
``function_signature``  2. not recoverable cheaply from code: no signatures
``line_numbers``        2. not recoverable cheaply from code: no ``file.py:42`` / "line 42"
``source_code``         no source code blocks
``raw_output``          no raw logs, tool output or command output
``transcript``          no transcripts ("User: … Assistant: …")
``not_actionable``      1. would change a future agent's judgment: a model candidate must carry a durable rule
``learned_junk``        a learned screen (n-grams and cues; embeddings too when a model is loaded) rates it junk
======================  =====================================================================================

:func:`plan_candidates` then compares each admitted candidate with the live entries of its target Memory over
Analyzer v1 subject tokens (see :func:`similarity` and :func:`~memstone.capture._text.subject_tokens`: stopwords,
force words such as always/use/run dropped, inflections joined, prose synonyms such as check/test/verify joined),
so a near-duplicate becomes a revision of the live entry, or a no-op when it adds nothing, and never a second
entry. Thresholds (pinned by tests):

- near-duplicate: ≥ 3 shared subject tokens and (Jaccard ≥ 0.5 or containment ≥ 0.75), or every subject token
  of the candidate as written, without synonyms (≥ 2, or 1 when the entry has ≤ 4), already in the entry;
- never when the two differ in exactly one token each ("run ruff check" / "run ruff format"): that is another
  rule. When both of those tokens hold a digit and ≥ 3 others are shared, it is a new value of the same statement
  ("… 100 characters" -> "… 120 characters"), which revises the entry with the new text;
- a correction also matches with ≥ 3 shared tokens and containment ≥ 0.5, or when the entry holds every term the
  correction says it replaces ("use X instead of **Y**") plus one more shared token;
- a working_note matches only another working_note, at Jaccard ≥ 0.8;
- the same ``slug`` (a build-file subject, ``project-lifecycle``) is always the same entry.

Only entries that contain a probe (a prefix) of at least two of the candidate's subject tokens are tokenized,
which every rule above needs anyway, so dedup stays cheap on large Memories without missing a match.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from ..domain.fields import PlainDict
from ..domain.model import KNOWN_KINDS, EntryVersion
from ..domain.secrets import find_secrets
from ._glance import glance_reason
from ._language import read_sentence
from ._obvious import is_inventory, is_location
from ._patterns import (
    CONSTRAINT,
    CONVENTION,
    DEICTIC_START,
    FACT,
    HAN,
    ONE_OFF,
    QUESTION_START,
    SPECULATION,
    SYSTEM,
    is_chatter,
    lifecycle_stage,
    rx,
)
from ._text import clean, informative_count, probes, same_frame, subject_tokens, typed_subjects
from .anchors import corrected_anchor, restated_anchor
from .candidates import Candidate, Plan
from .meaning import nearest_meaning
from .nearness import (
    SEMANTIC_THRESHOLDS,
    Semantic,
    Similarity,
    TermWeights,
    acronyms,
    align,
    compound_akin,
    other_subjects,
    semantic_key,
    semantic_texts,
    similarity,
    spelled_out,
    spells,
    weighted_match,
    wording_swap,
)
from .resets import resets
from .roles import role_change
from .subjects import (
    conflicts,
    pick_change,
    quantities,
    replaced_name,
    replaced_tokens,
    same_subject,
    same_tools,
    values,
    versioned_names,
)
from .targets import Target, just_changed, norm_text, restated_concepts, set_anew

__all__ = [
    "REASONS",
    "SEMANTIC_THRESHOLDS",
    "Admission",
    "Semantic",
    "Similarity",
    "admit",
    "plan_candidates",
    "semantic_key",
    "semantic_texts",
    "similarity",
]

REASONS: dict[str, str] = {
    "secret": "contains what looks like a secret; secrets are never stored",
    "no_evidence": "not supported by the evidence of this operation",
    "unsupported": "a model candidate that its evidence does not say",
    "unknown_kind": "the kind is not allowed here",
    "too_short": "too short or too vague to be understood later",
    "not_standalone": "refers to something outside itself (it/this/that)",
    "multiple_topics": "too long for one topic; split it",
    "question": "a question, not knowledge",
    "speculation": "speculation, not a confirmed fact or decision",
    "one_off": "an instruction for the current task only",
    "system_restatement": "restates an agent's system prompt",
    "chatter": "conversation, not knowledge",
    "file_inventory": "a file inventory, cheap to recover from the code",
    "location_only": "a file location, cheap to recover from the code",
    "obvious": "a fact anyone reads from the repository at a glance (what exists, what a file says, counts)",
    "function_signature": "a function signature, cheap to recover from the code",
    "line_numbers": "line numbers go stale and are cheap to recover",
    "source_code": "source code belongs in the repository, not in memory",
    "raw_output": "raw command or log output",
    "transcript": "a transcript, not a conclusion",
    "not_actionable": "would not change what a future agent does",
    "learned_junk": "a learned junk screen (junk_text.py, junk_model.py) rates it junk",
}

MAX_TOPIC_CHARS = 1200
MIN_CHARS = 12
MIN_INFORMATIVE = 3
SUPPORT_RATIO = 0.6

NEAR_JACCARD = 0.5
NEAR_CONTAINMENT = 0.75
CORRECTION_CONTAINMENT = 0.5
CORRECTION_RESTATES = 0.8  # a correction replaces the text only when it restates this share of it
NOTE_JACCARD = 0.8
TYPED_BONUS = 2.0  # above any jaccard + containment: a shared command, path or flag ranks a matched entry first
TYPED_SHARED = 2  # a shared command, path or flag needs this many shared subject tokens (a tool name alone: 3)
MAX_MERGED_CHARS = 4000


@dataclass(frozen=True, slots=True, kw_only=True)
class Admission(PlainDict):
    """The admission decision for one candidate: admitted, or rejected with a reason code from :data:`REASONS`."""

    candidate: Candidate
    admitted: bool
    reason: str | None = None
    detail: str = ""


_KIND_WORD = re.compile(r"^[A-Za-z][A-Za-z0-9_\-]{0,63}$")
_LOG_LINE = re.compile(
    r"^\s*(?:\[(?:INFO|WARN|WARNING|ERROR|DEBUG|TRACE)\]|(?:INFO|WARN|WARNING|ERROR|DEBUG|TRACE)[: ]"
    r"|\d{4}-\d\d-\d\d[T ]\d\d:\d\d|\d\d:\d\d:\d\d|[├└│]|BUILD (?:SUCCESSFUL|FAILED)|Tests run:"
    r"|PASS(?:ED)?\b|FAIL(?:ED)?\b|ok\s+\S+\s+\d"
    r"|\s*at [\w.$]+\(|Traceback|\$ |> |\d+ (?:passed|failed)|test result:|running \d+ tests?|error(?:\[\w+\])?:"
    r"|warning:|npm (?:ERR|WARN)|\d+ actionable tasks?)"
)
_SPEAKER = rx(r"^\s*(?:user|assistant|human|ai|system|agent|claude|codex|gemini)\s*:")
_SIGNATURE = re.compile(
    r"^\s*(?:async\s+def|def|func|fn|function|pub\s+fn|public|private|protected|static|class)\s+[\w<>\[\], ]*\(?"
    r"|^\s*[\w.]+\([^)]*\)\s*(?:->|:)\s*[\w\[\], .|]+\s*$"
)
_CODE_LINE = re.compile(r"[;{}]\s*$|^\s*(?:import|from|#include|package|using|return|if|for|while|let|const|var)\b")
_LINE_REF = rx(r"\b[\w./\-]+\.[A-Za-z]{1,5}:\d+\b|\b(?:line|lines|ln)\s+\d+\b|#L\d+\b")
_PATH = re.compile(
    r"(?:[\w.\-]+/)+[\w.\-]*|\b[\w\-]+\.(?:py|ts|tsx|js|jsx|go|rs|java|kt|swift|rb|c|h|cpp|md|json|yaml|yml|toml|sql)\b"
)
_LOCATION = rx(
    r"\b(?:is|are|ist|sind|lives?|sits?|can be found|liegt|liegen|steht|stehen|befindet sich|befinden sich)\s+"
    r"(?:(?:defined|declared|implemented|located|definiert|deklariert|implementiert)\s+)?"
    r"(?:in|under|at|unter|im)\s+`?[\w.\-]*/"
    r"|^[^，。,]{1,24}(?:在|位于)\s*`?[\w.\-]*/[\w./\-]*`?\s*(?:里|下|中|目录)?[。.]?$"
)
# "There are 14 modules in src …", "The app has these screens: …": an inventory, whatever the paths.
_INVENTORY_START = rx(
    r"^(?:there (?:are|is)\s+\d+"
    r"|the [\w\s-]{1,30}?\b(?:has|have|contains|consists of)\s+(?:these|the following|\d+)\b)"
)
_INVENTORY = rx(r"\b(?:has|have|contains?|consists of|includes?|there are)\b")


def _rule_marker(text: str) -> bool:
    return bool(CONSTRAINT.search(text) or CONVENTION.search(text) or FACT.search(text))


def _states_rule(text: str) -> bool:
    """A must/never, a decision, a preference or an "always/every" in the text's own language (not the
    broad convention cues: "Os testes ficam em src/test" is where they are, not how they are made)."""
    rd = read_sentence(text)
    return bool(CONSTRAINT.search(text)) or rd.generic or rd.modality in ("constraint", "decision", "preference")


def admit(candidate: Candidate, *, evidence: Mapping[str, str]) -> Admission:
    """Check one candidate against the admission rules; ``evidence`` maps each Source key to its content.

    >>> admit(Candidate(kind="fact", text="ok", origin="statement"), evidence={"event": "ok"}).reason
    'too_short'
    """

    def no(reason: str, detail: str = "") -> Admission:
        return Admission(candidate=candidate, admitted=False, reason=reason, detail=detail or REASONS[reason])

    c = candidate
    text = clean(c.text)
    structured = c.origin in ("working_note", "build_file")
    if find_secrets(text) or find_secrets(c.title or "") or any(find_secrets(t) for t in c.tags):
        return no("secret")
    if not c.evidence or any(k not in evidence for k in c.evidence):
        return no("no_evidence")
    if not _KIND_WORD.fullmatch(c.kind) or (c.origin == "model" and c.kind not in KNOWN_KINDS):
        return no("unknown_kind", f"kind {c.kind!r} is not allowed here")
    # A CJK character says about what two Latin letters do ("推送改成走个推了" is a whole statement).
    if len(text) + len(HAN.findall(text)) < MIN_CHARS or informative_count(text) < MIN_INFORMATIVE:
        return no("too_short")
    if not structured and DEICTIC_START.search(text) and informative_count(text) < 8:
        return no("not_standalone")
    if not structured and len(text) > MAX_TOPIC_CHARS:
        return no("multiple_topics", f"{len(text)} characters; one topic fits in {MAX_TOPIC_CHARS}")
    lines = [line for line in text.splitlines() if line.strip()]
    if sum(1 for line in lines if _SPEAKER.match(line)) >= 2:
        return no("transcript")
    body_lines = [ln for ln in lines if not ln.startswith(("Changed:", "Verified:", "Git head:", "Open:"))]
    log_lines = sum(1 for line in body_lines if _LOG_LINE.match(line))
    if log_lines >= 3 and log_lines * 2 >= len(body_lines):
        return no("raw_output")
    if "```" in text and text.count("\n") >= 3 and not structured:
        return no("source_code")
    if not structured and len(lines) >= 3 and sum(1 for line in lines if _CODE_LINE.search(line)) * 2 >= len(lines):
        return no("source_code")
    if not structured:
        if _SIGNATURE.match(text) or (len(lines) == 1 and _SIGNATURE.match(text.strip("`"))):
            return no("function_signature")
        if _LINE_REF.search(text):
            return no("line_numbers")
        paths = _PATH.findall(text)
        if len(paths) >= 3 and not _rule_marker(text):
            return no("file_inventory")
        if len(paths) >= 2 and _INVENTORY.search(text) and not _rule_marker(text):
            return no("file_inventory")
        if _INVENTORY_START.search(text) and not _rule_marker(text):
            return no("file_inventory")
        # A correction of where something lives is not cheap to recover: the agent just got it wrong.
        if _LOCATION.search(text) and "`" not in text and not _rule_marker(text) and c.origin != "correction":
            return no("location_only")
        if c.origin != "correction" and not _states_rule(text):
            if is_location(text):
                return no("location_only")
            if is_inventory(text):
                return no("file_inventory")
        if c.kind != "lesson":
            glance = glance_reason(text, states_rule=_states_rule(text))
            # A correction of what the project is made with or holds is not cheap to recover: the agent got it wrong.
            if glance is not None and not (glance == "obvious" and c.origin == "correction"):
                return no(glance)
    if c.origin in ("model", "submitted"):
        if SYSTEM.search(text):
            return no("system_restatement")
        if is_chatter(text):
            return no("chatter")
        if text.endswith("?") or (QUESTION_START.search(text) and not text.endswith(".")):
            return no("question")
        if SPECULATION.search(text):
            return no("speculation")
        if ONE_OFF.search(text) and c.kind != "working_note":
            return no("one_off")
    if c.origin == "model":
        if c.kind != "working_note" and not _rule_marker(text) and informative_count(text) < 6:
            return no("not_actionable")
        support = subject_tokens(" ".join(evidence[k] for k in c.evidence))
        mine = subject_tokens(text)
        if mine and len(mine & support) / len(mine) < SUPPORT_RATIO:
            return no("unsupported", f"only {len(mine & support)} of {len(mine)} of its terms are in the evidence")
    return Admission(candidate=candidate, admitted=True)


# ============================================================================================ near-duplicates
def _swap(mine: frozenset[str], theirs: frozenset[str]) -> tuple[str, str] | None:
    """The one word each side has that the other lacks, when that is the only difference ("ruff check/format")."""
    only_mine, only_theirs = mine - theirs, theirs - mine
    if len(only_mine) == 1 and len(only_theirs) == 1:
        return next(iter(only_mine)), next(iter(only_theirs))
    return None


def _is_value(swap: tuple[str, str] | None) -> bool:
    return swap is not None and all(any(ch.isdigit() for ch in word) for word in swap)


def _near(
    mine: frozenset[str], theirs: frozenset[str], mine_exact: frozenset[str], theirs_exact: frozenset[str]
) -> bool:
    """Whether a candidate (``mine``) restates an entry (``theirs``); the ``_exact`` sets are without synonyms."""
    if _swap(mine, theirs) is not None:
        # Trigger: the two differ in exactly one word each ("run ruff check" / "run ruff format").
        # Why: a restatement rewords more than one word; one word swapped for another is another rule.
        # Outcome: not a near-duplicate. A swapped number is a new value (see _plan_one); a correction still
        # matches through its own rules.
        return False
    sim = similarity(mine, theirs)
    if sim.shared >= 3 and (sim.jaccard >= NEAR_JACCARD or sim.containment >= NEAR_CONTAINMENT):
        return True
    # Every word of a short candidate already in the entry, as written: a synonym alone is too little evidence.
    exact = similarity(mine_exact, theirs_exact)
    return exact.a_in_b == 1.0 and (
        exact.shared >= 2 or (exact.shared == 1 and len(mine_exact) == 1 and len(theirs_exact) <= 4)
    )


def plan_candidates(
    candidates: Sequence[Candidate], live: Sequence[EntryVersion], semantic: Semantic | None = None
) -> list[Plan]:
    """Decide add / revise / unchanged for each admitted candidate, against the live entries and each other.

    Two candidates that land on the same entry in one batch fold into one revision, because one write may
    change an entry only once. With ``semantic`` (an embedding model is loaded), a candidate that shares a
    subject token with an entry and is at least ``semantic.threshold`` similar to it is the same statement too.
    """
    targets = [Target.of(v) for v in live]
    weights = TermWeights([t.search for t in targets if t.kind != "working_note"])
    plans: list[Plan] = []
    for cand in candidates:
        plan, target = _plan_one(cand, targets, semantic, weights)
        if target is not None and target.plan_index is not None and plan.action != "unchanged":
            # Fold into the earlier plan of this batch that created or revised the same target.
            earlier = plans[target.plan_index]
            plans[target.plan_index] = replace(earlier, text=plan.text, why=f"{earlier.why}; {plan.why}")
            target.retext(plan.text)
            plans.append(replace(plan, action="unchanged", why=f"folded into an earlier candidate: {plan.why}"))
            continue
        plans.append(plan)
        index = len(plans) - 1
        if plan.action == "add":
            targets.append(Target.planned(kind=cand.kind, text=plan.text, slug=cand.slug, plan_index=index))
        elif plan.action == "revise" and target is not None:
            target.retext(plan.text)
            target.plan_index = index
    return plans


def _plan_one(
    cand: Candidate, targets: list[Target], semantic: Semantic | None, weights: TermWeights | None = None
) -> tuple[Plan, Target | None]:
    note = cand.kind == "working_note"
    text = clean(cand.text)
    mine = subject_tokens(text)
    mine_exact = subject_tokens(text, synonyms=False)
    mine_typed = typed_subjects(text)
    # Prefilter: only entries that contain a probe of one of our subject tokens can share one, so the (slow)
    # tokenization runs on a few entries, not on the whole Memory. Same-slug entries are always compared.
    # Every match below needs two shared subject tokens, except a one-token candidate, so an entry must contain
    # that many probes (counted per token) to be worth tokenizing.
    keys = probes(mine)
    need = min(1 if semantic is not None else 2, len(keys))
    single = [alternatives[0] for alternatives in keys if len(alternatives) == 1]
    grouped = [alternatives for alternatives in keys if len(alternatives) > 1]  # a synonym group: any of its words

    replaced_probes = [probes(subject_tokens(r)) for r in cand.replaces]
    named = versioned_names(text)  # an entry naming one of them may hold another version (subjects.py)
    short = acronyms(text)  # an entry spelling one of them out is about the same thing ("SPM" / "Swift Package …")

    def candidate_target(t: Target) -> bool:
        if (t.kind == "working_note") != note:
            return False
        if not keys or (cand.slug is not None and t.slug == cand.slug):
            return True
        search = t.search
        if any(n in search for n in named) or (short and spells(short, t.text)):
            return True
        for rp in replaced_probes:  # a correction is compared with every entry that holds what it replaces
            if rp and all(any(k in search for k in alternatives) for alternatives in rp):
                return True
        hits = 0
        for k in single:
            if k in search:
                hits += 1
                if hits >= need:
                    return True
        for alternatives in grouped:
            if any(k in search for k in alternatives):
                hits += 1
                if hits >= need:
                    return True
        return False

    pool = [t for t in targets if candidate_target(t)]
    own = norm_text(text)

    def make(action: str, t: Target | None, new_text: str, score: float, why: str) -> tuple[Plan, Target | None]:
        assert action in ("add", "revise", "unchanged")
        return (
            Plan(
                candidate=cand,
                action=action,  # type: ignore[arg-type]
                text=new_text,
                entry_id=t.entry_id if t else None,
                entry_version_id=t.entry_version_id if t else None,
                score=score,
                why=why,
            ),
            t,
        )

    for t in pool:
        if t.norm == own or (own in t.norm and len(mine) >= 2):
            return make("unchanged", t, t.text, 1.0, "the live entry already says this")
    if cand.slug:
        for t in pool:
            if t.slug != cand.slug:
                continue
            sim = similarity(mine, t.tokens)
            if cand.slug != "project-lifecycle":
                return make("revise", t, text, sim.jaccard, f"same subject ({cand.slug}) from new evidence")
            old_stage = lifecycle_stage(t.text)
            if cand.stage and old_stage and cand.stage != old_stage:
                return make("revise", t, text, sim.jaccard, f"lifecycle changed: {old_stage} -> {cand.stage}")
            if sim.a_in_b >= CORRECTION_CONTAINMENT:
                return make("unchanged", t, t.text, sim.a_in_b, "restates the project lifecycle")
            return make("revise", t, _merge(t.text, text, correction=False), sim.jaccard, "adds to the lifecycle")
    if note:
        best = max(pool, key=lambda t: similarity(mine, t.tokens).jaccard, default=None)
        if best is not None and similarity(mine, best.tokens).jaccard >= NOTE_JACCARD:
            return make("unchanged", best, best.text, similarity(mine, best.tokens).jaccard, "same turn report")
        return make("add", None, text, 0.0, "new working note")

    correction = cand.origin == "correction" or cand.kind == "correction"
    replaced = [replaced_tokens(r, mine) for r in cand.replaces]
    best_t: Target | None = None
    best_score = 0.0
    best_sim: Similarity | None = None
    best_value: tuple[str, str] | None = None
    top: tuple[float, Target, Similarity] | None = None  # the closest unmatched entry the weighted rule takes
    for t in pool:
        ours = spelled_out(mine, text, t.tokens, t.text)  # "SPM" / "Swift Package Manager", "Pods" / "CocoaPods"
        sim = similarity(ours, t.tokens)
        swap = _swap(ours, t.tokens)
        value = _is_value(swap) and sim.shared >= 3  # "... after 30 minutes" -> "... after 15 minutes"
        matched = value or _near(ours, t.tokens, mine_exact, t.exact)
        typed = mine_typed & t.typed
        need = TYPED_SHARED if any(not k.startswith("tool:") for k in typed) else TYPED_SHARED + 1
        wording = wording_swap(swap, mine_typed, t.typed, sim.shared)  # a one-word swap beside the same command
        if not matched and typed and sim.shared >= need and (swap is None or wording):
            # Trigger: both name the same command, path, flag or tool and share another subject token.
            # Why: a restatement or an unmarked change rewords everything but the thing it is about
            # ("说完成之前必须先把测试全部跑一遍，`pytest -q` 要全绿" / "提交之前一定要跑 `pytest -q`…").
            # Outcome: the same entry (a no-op, a revision or a correction), never a rival one.
            matched = True
        if not matched and semantic is not None and sim.shared >= 1 and swap is None:
            # Trigger: a model is loaded, the two share a subject token, and their vectors are this close.
            # Why: paraphrases with words outside the synonym list ("reconcile loops must be idempotent" /
            # "every reconciler has to be safe to run again") share too few words for the lexical rules.
            # Outcome: the same entry; the subject token keeps two different rules of one area apart.
            cos = semantic.cosine(text, t.text)
            matched = cos is not None and cos >= semantic.threshold
            if not matched and cos is not None and semantic.subject is not None and cos >= semantic.subject:
                # The two name the same tool, command or path: a lower cosine is enough ("… 小驼峰" / "… camelCase").
                matched = same_subject(text, t.text)
        if not matched and correction:
            if sim.shared >= 3 and sim.containment >= CORRECTION_CONTAINMENT:
                matched = True
            else:
                for term, r in zip(cand.replaces, replaced, strict=True):
                    if r and r <= t.tokens and (len((ours - r) & t.tokens) >= 1 or same_frame(mine_typed, t.typed)):
                        # "off kind to k3d, so use `make k3d-up`" corrects the entry that says kind and
                        # `make kind-up`: the replaced term is there, and the same step with the new value.
                        matched = True
                        break
                    if r and r <= t.tokens and any(compound_akin(a, b) for a in ours - r for b in t.tokens - r):
                        # "Der Flottenimport läuft nicht mehr nachts" / "Die Fahrzeugflotte wird nachts …
                        # importiert": the replaced word is there, and a part of a compound (import).
                        matched = True
                        break
                    if r and r <= t.tokens and replaced_name(term, t.values):
                        # Trigger: the correction names what it replaces, and the entry names that very thing
                        # ("We replaced GraphHopper with OSRM" / "The routing engine is GraphHopper, …").
                        # Why: the replaced tool is the subject; the two share no other word because everything
                        # else about it changed too.
                        # Outcome: the correction revises that entry (the closest one if several name it).
                        matched = True
                        break
        if not matched:
            aligned = align(ours, t.tokens)
            shared = len(aligned & t.tokens)
            if (
                weights is not None
                and swap is None
                and shared >= 1
                and _swap(aligned, t.tokens) is None
                and (correction or not other_subjects(mine_typed, t.typed))
            ):
                cos = semantic.cosine(text, t.text) if semantic is not None else None
                tools = same_tools(text, t.text)
                near = weighted_match(aligned, t.tokens, weights, shared=shared, cosine=cos, semantic=semantic,
                                      correction=correction, named=tools)  # fmt: skip
                if near is not None and (top is None or near > top[0]):
                    top = (near, t, sim)
            continue
        score = sim.jaccard + sim.containment
        if any(not k.startswith("tool:") for k in typed):
            # Trigger: of the entries a candidate matches, this one names the very command, path or flag it names.
            # Why: a shared typed subject says what the two are about; shared words are often another rule's
            # ("The lint step is `pnpm check` now; `pnpm lint` was removed from package.json" shares more words
            # with "pnpm for packages; no package-lock.json" than with "Lint with `pnpm lint`", capcorr9).
            # Outcome: it ranks above every matched entry that shares none.
            score += TYPED_BONUS
        if score > best_score:
            best_t, best_score, best_sim, best_value = t, score, sim, swap if value else None
    tool = role_change(text, targets, stated=correction) if best_t is None and cand.kind != "lesson" else None
    if tool is not None:  # another tool in the role an entry names: it changes that entry (roles.py)
        best_t, best_sim, correction, top = tool, similarity(mine, tool.tokens), True, None
    elif best_t is None and cand.kind != "lesson" and (reset := resets(text, targets, bare=cand.resets)):
        best_t, best_sim, correction, top = reset, similarity(mine, reset.tokens), True, None  # resets.py
    if best_t is None and top is None and weights is not None:
        hit = pick_change(text, mine, [(t.text, t.tokens) for t in pool], weights, stated=correction)
        if hit is not None:  # the same subject set to another value: an unmarked correction (subjects.py)
            best_t, best_sim, correction = pool[hit], similarity(mine, pool[hit].tokens), True
        elif cand.kind != "lesson" and (last := just_changed(text, targets)) is not None:  # the entry just written
            best_t, best_sim, correction = last, similarity(mine, last.tokens), True
        elif cand.kind != "lesson" and (last := set_anew(text, targets, stated=correction)) is not None:
            best_t, best_sim, correction = last, similarity(mine, last.tokens), True  # a value of its kind (targets)
        elif not correction and cand.kind != "lesson" and (same := restated_concepts(text, targets)) is not None:
            best_t, best_sim = same, similarity(mine, same.tokens)
        elif not correction and cand.kind != "lesson" and (x := restated_anchor(text, mine_exact, targets, semantic)):
            best_t, best_sim = x, similarity(mine, x.tokens)  # the same anchors in another language (anchors.py)
        elif cand.kind != "lesson" and (meant := nearest_meaning(text, targets, semantic)) is not None:
            best_t, correction = meant[0], correction or meant[1]  # by meaning and a typed subject (meaning.py)
            best_sim = similarity(mine, best_t.tokens)
        elif correction and cand.kind != "lesson" and (holder := corrected_anchor(text, targets)) is not None:
            best_t, best_sim = holder, similarity(mine, holder.tokens)  # the one entry naming what it changes
    if best_t is None and top is not None:
        # Trigger: no rule above matched, and the closest entry shares rare subject terms (weighted by how few
        # entries of this Memory hold them), plus a close meaning when a model is loaded.
        # Why: a restatement or an unmarked correction rewords nearly everything but what it is about; the
        # terms it keeps are the rare ones (issue 16).
        # Outcome: the same entry (a no-op, a revision or a correction), never a rival one.
        best_t, best_sim = top[1], top[2]
    if best_t is None or best_sim is None:
        return make("add", None, text, 0.0, "no similar live entry")
    sim = best_sim
    detail = f"jaccard {sim.jaccard:.2f}, containment {sim.containment:.2f}"
    # A restatement that gives another version, number or host ("… every 2 hours" for "… every 4 hours") changes it.
    correction = correction or (best_value is None and conflicts(values(text) | quantities(text), best_t.values))
    if correction:
        if sim.b_in_a >= CORRECTION_RESTATES:
            return make("revise", best_t, text, sim.jaccard, f"correction restates the entry ({detail})")
        return make("revise", best_t, _merge(best_t.text, text, correction=True), sim.jaccard, f"corrects ({detail})")
    if best_value is not None:
        new, old = best_value
        return make("revise", best_t, text, sim.jaccard, f"a new value: {old} -> {new} ({detail})")
    if sim.a_in_b >= NEAR_CONTAINMENT or (sim.a_in_b == 1.0):
        return make("unchanged", best_t, best_t.text, sim.a_in_b, f"near-duplicate adds nothing ({detail})")
    if sim.b_in_a >= NEAR_CONTAINMENT:
        return make("revise", best_t, text, sim.jaccard, f"near-duplicate with more detail ({detail})")
    return make("revise", best_t, _merge(best_t.text, text, correction=False), sim.jaccard, f"restates ({detail})")


def _merge(old: str, new: str, *, correction: bool) -> str:
    joined = f"{old}\n\nCorrection: {new}" if correction else f"{old}\n\n{new}"
    return new if len(joined) > MAX_MERGED_CHARS else joined
