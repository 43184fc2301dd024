"""A restatement or an unmarked correction found by its meaning and a typed subject (capmatch8, issue 16).

When no rule on words, names or values matched, a statement may still be about a live entry it shares no word with:
the same rule said in another language or in other words ("Logs may hold the specimen ID but never a patient's
name." / "患者名はログに出してはいけない。"), or the same setting given a new value with no marker ("Las alertas de
cocina llegan a las tablets por FCM." / "Kitchen alerts reach the tablets through OneSignal."). With a multilingual
model loaded, :func:`nearest_meaning` takes the live entry nearest in meaning, in any language, when

- its cosine is at least the profile's :data:`~.nearness.NEAREST_COSINE` and it leads the next entry by
  :data:`~.nearness.NEAREST_LEAD` (two rules of one area are both near; a restatement is near one entry only);
- the two have a subject in common that no language changes (:func:`subject_match`): a tool of the same role, a
  value of the same kind (a number of one unit, a weekday, a time zone), a tool-like name, a command, path or flag,
  or a subject token.

When the two give different tools of one role or different values of one kind, the statement is a correction of the
entry (:func:`subject_match` says so), never a rival entry beside it; since a new value lowers the cosine, such a
statement needs only :data:`~.nearness.NEAREST_CHANGE_COSINE` with a lead of :data:`~.nearness.NEAREST_CHANGE_LEAD`.
Without such a model nothing changes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ._text import subject_tokens, typed_subjects
from .measures import measures, other_value
from .nearness import NEAREST_CHANGE_LEAD, NEAREST_LEAD, Semantic
from .roles import roles
from .subjects import tool_names
from .targets import Target

__all__ = ["nearest_meaning", "ranked_by_meaning", "subject_match"]


def ranked_by_meaning(
    text: str, targets: Sequence[Target], semantic: Semantic, keep: Callable[[Target], bool] | None = None
) -> list[tuple[float, Target]]:
    """The live entries ``semantic`` can compare with ``text``, nearest first, with their cosines: never a working
    note, an entry with a slug or one with no id; ``keep`` narrows them further (capdup6: other languages only)."""
    scored: list[tuple[float, Target]] = []
    for t in targets:
        if t.kind == "working_note" or t.slug is not None or t.entry_id is None or (keep is not None and not keep(t)):
            continue
        cos = semantic.cosine(text, t.text)
        if cos is not None:
            scored.append((cos, t))
    scored.sort(key=lambda x: -x[0])
    return scored


def subject_match(text: str, entry: str) -> tuple[bool, bool]:
    """Whether ``text`` and ``entry`` have a language-neutral subject in common, and whether ``text`` gives it
    another value (another tool of a shared role, another value of a shared kind).

    >>> subject_match("Las alertas de cocina llegan a las tablets por FCM.", "Kitchen alerts go through OneSignal.")
    (True, True)
    >>> subject_match("Alert e-mails go out through Amazon SES.", "Kitchen alerts reach the tablets.")
    (False, False)
    """
    mine_roles, their_roles = roles(text), roles(entry)
    shared_roles = mine_roles.keys() & their_roles.keys()
    mine_kinds, their_kinds = measures(text), measures(entry)
    changed = any(mine_roles[r] - their_roles[r] for r in shared_roles) or other_value(mine_kinds, their_kinds)
    same = (
        bool(shared_roles)
        or bool(mine_kinds.keys() & their_kinds.keys())
        or bool(tool_names(text) & tool_names(entry))
        or bool(typed_subjects(text) & typed_subjects(entry))
        or bool(subject_tokens(text) & subject_tokens(entry))
    )
    return same, same and changed


def nearest_meaning(text: str, targets: Sequence[Target], semantic: Semantic | None) -> tuple[Target, bool] | None:
    """The live entry ``text`` restates or corrects by meaning (module doc), with whether it corrects it; or None.

    Trigger: a profile in :data:`~.nearness.NEAREST_COSINE` is loaded and no other rule took the candidate.
    Why: a restatement in another language or other words, and a new value of a setting with no marker, share no
    word with their entry; the meaning finds the entry, the typed subject keeps an unrelated near one out.
    Outcome: that entry and whether the candidate changes a value of it. Entries with a slug, working notes and
    entries with no vector (not embedded this event) are never taken.
    """
    if semantic is None or semantic.nearest is None:
        return None
    scored = ranked_by_meaning(text, targets, semantic)
    if not scored:
        return None
    cos, t = scored[0]
    lead = cos - scored[1][0] if len(scored) > 1 else 1.0
    same, changed = subject_match(text, t.text)
    if same and cos >= semantic.nearest and lead >= NEAREST_LEAD:
        return t, changed
    # A new value of the entry's subject lowers the cosine: a lower one, with a clearer lead (NEAREST_CHANGE_COSINE).
    floor = semantic.nearest_change
    return (t, True) if changed and floor is not None and cos >= floor and lead >= NEAREST_CHANGE_LEAD else None
