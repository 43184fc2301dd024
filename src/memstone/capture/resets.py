"""A statement that sets a stored subject to another value: found by the subject's type, kept past the screens.

An unmarked correction is often a bare statement of the new value ("The backend is on Ktor 3.0." after "백엔드는
Ktor 2.3 으로 작성합니다."; "The storm-surge warning threshold is 140 cm …" after "Die Sturmflut-Warnschwelle liegt
bei 150 cm …"). It carries no durable-signal word, it reads like an obvious description or a junk line to the
screens, and it shares no word with its entry when the two are in different languages. What it has in common
with its entry is the *typed subject* it sets (capcorr7, issue 16):

- a versioned name (:func:`~.subjects.values`, ``ver:ktor``) the entry gives another version;
- a kind of measured value (:func:`~.measures.measures`: a number of one unit, a weekday, a time of day, a time
  zone) that the candidate gives alone, and that exactly one live entry of the Memory gives, with another value;
- a role (:data:`~.roles.ROLES`) that the candidate fills with one tool, and that exactly one live entry of the
  Memory fills, with another tool.

The last two need the subject to be *unique* in the Memory: a value kind or a role held by two entries says
nothing about which one changes, and a candidate giving values of two kinds, or two tools, is no bare setting.
Working notes and lessons are never reset.

:func:`resets` is that rule; :func:`rescued` applies it at admission: a user sentence the statement reader skipped
for want of a durable signal, or a candidate the glance rules or the learned screens rejected, that resets an
entry is admitted as a correction of it (the planner then finds the same entry with :func:`resets`). A question,
speculation, a one-off or time-bound request, chatter or a task request is never rescued: those reasons stand.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..domain.model import EntryVersion
from ._language import Reading, read_sentence
from ._text import clean, excerpt, sentences
from .candidates import Candidate, Skip
from .measures import measures
from .roles import role_holders, roles
from .subjects import conflicts, values
from .targets import Target

__all__ = ["RESCUED_REASONS", "rescued", "resets"]

# The reasons a sentence or candidate may be dropped for and still be a correction: it lacks a cue, or it reads
# like a description. Never: question, speculation, one_off, chatter, task_request, secret, system_restatement.
RESCUED_REASONS = frozenset(("no_durable_signal", "obvious", "location_only", "file_inventory", "learned_junk"))
_NEVER = ("working_note", "lesson")


def resets(text: str, targets: Sequence[Target], *, bare: bool = True) -> Target | None:
    """The live entry whose typed subject ``text`` sets to another value (module doc), or None; of several by
    version, the newest. ``bare=False`` (any other candidate: a rule, a fact with a cue, a marked correction): by
    a version only. A kind of value or a role held by one entry is evidence only for a bare setting, the statement
    that says nothing else: two rules of a Memory give minutes for two things ("30 minutes now; …" after an older
    entry, test_restatements.py), and "Marketing pages are built with yarn" is no change of "the admin panel
    installs with pnpm" (test_roles.py)."""
    pool = [t for t in targets if t.kind not in _NEVER]
    found = values(text)
    versions = frozenset(v for v in found if v.startswith("ver:") and "name:" + v[4:].split("=", 1)[0] in found)
    if versions:
        hits = [t for t in pool if conflicts(versions, t.values)]
        if hits:
            return max(hits, key=lambda t: t.written)
    if not bare:
        return None
    given = measures(text)
    if len(given) == 1:
        ((kind, numbers),) = given.items()
        holders = [t for t in pool if kind in t.measures]
        if len(holders) == 1 and not numbers & holders[0].measures[kind]:
            return holders[0]
    filled = roles(text)
    if len(filled) == 1:
        ((role, tools),) = filled.items()
        named = role_holders(role, pool)
        if len(tools) == 1 and len(named) == 1 and not tools & named[0][1]:
            return named[0][0]
    return None


def rescued(
    text: str, skipped: Sequence[Skip], rejected: Sequence[tuple[Candidate, str]], live: Sequence[EntryVersion]
) -> list[Candidate]:
    """Corrections among what admission dropped from one user statement ``text``: its sentences skipped for a
    reason of :data:`RESCUED_REASONS` (``skipped``) and its candidates rejected for one (``rejected``: each with
    its reason), those that :func:`resets` a live entry of ``live``."""
    if not live or "\n" in text.strip():  # a bare setting is one line; pasted output is not
        return []
    dropped = {s.excerpt for s in skipped if s.reason in RESCUED_REASONS}
    texts = [s.strip() for s in sentences(clean(text)) if excerpt(s.strip()) in dropped]
    texts += [c.text for c, reason in rejected if reason in RESCUED_REASONS and c.kind != "lesson" and not c.resets]
    texts = [t for t in dict.fromkeys(texts) if _plain(read_sentence(t))]
    if not texts:
        return []
    targets = [Target.of(v) for v in live]
    return [
        Candidate(kind="correction", text=t, origin="correction", important=True, resets=True)
        for t in texts
        if resets(t, targets) is not None
    ]


def _plain(rd: Reading) -> bool:
    """A sentence that states a value and nothing more: not a question, speculation, a one-off, chatter or a task
    request, and no rule either (a sentence with a modality the screens still rejected was judged on its content:
    "I'd rather we bump to Godot 4.4 once the stable is out")."""
    bad = rd.question or rd.speculation or rd.one_off or rd.chatter or rd.task_request or rd.lesson
    return not bad and rd.modality is None
