"""A live entry (or one planned in this batch) as :func:`~memstone.capture.admission.plan_candidates` compares it:
its text and, computed once each, the subject tokens, typed subjects, values and searchable form."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from ..domain.ids import EntryId, EntryVersionId
from ..domain.model import EntryVersion
from ._text import clean, searchable, subject_tokens, typed_subjects
from .measures import measures, other_value, schedule_words, unmeasured
from .nearness import align
from .subjects import _GENERIC_NAMES, CONCEPT_SHARED, concepts, conflicts, quantities, same_concepts, tool_names, values

__all__ = ["JUST_WRITTEN", "Target", "just_changed", "norm_text", "restated_concepts", "set_anew"]

# A target planned in this batch sorts after every stored entry's creation time (an ISO timestamp).
JUST_WRITTEN = "~"


@dataclass(kw_only=True)
class Target:
    """An entry compared by the planner; ``plan_index`` is the plan that created or last revised it in a batch."""

    entry_id: EntryId | None = None  # None: an entry this batch adds
    entry_version_id: EntryVersionId | None = None
    kind: str
    text: str
    slug: str | None
    plan_index: int | None  # the plan that created or last revised it in this batch
    written: str = ""  # when its live version was written (ISO time; JUST_WRITTEN within this batch)

    # Each derived form is computed on first use and kept until ``retext`` (functools.cached_property).
    @cached_property
    def measures(self) -> dict[str, frozenset[str]]:
        return measures(self.text)

    @cached_property
    def concepts(self) -> frozenset[str]:
        return concepts(self.text)

    @cached_property
    def values(self) -> frozenset[str]:
        return values(self.text) | quantities(self.text)

    @cached_property
    def typed(self) -> frozenset[str]:
        return typed_subjects(self.text)

    @cached_property
    def tokens(self) -> frozenset[str]:
        return subject_tokens(self.text)

    @cached_property
    def exact(self) -> frozenset[str]:
        return subject_tokens(self.text, synonyms=False)

    @cached_property
    def search(self) -> str:
        return searchable(self.text)

    @cached_property
    def norm(self) -> str:
        return norm_text(self.text)

    @classmethod
    def of(cls, v: EntryVersion) -> Target:
        """A stored entry's live version as a target."""
        return cls(
            entry_id=v.entry_id,
            entry_version_id=v.entry_version_id,
            kind=v.kind,
            text=v.text,
            slug=v.content.slug,
            plan_index=None,
            written=v.provenance.created_at,
        )

    @classmethod
    def planned(cls, *, kind: str, text: str, slug: str | None, plan_index: int) -> Target:
        """An entry that plan ``plan_index`` of this batch adds: no id yet, written after every stored entry."""
        return cls(kind=kind, text=text, slug=slug, plan_index=plan_index, written=JUST_WRITTEN)

    def retext(self, text: str) -> None:
        self.text, self.written = text, JUST_WRITTEN
        for name in _DERIVED:
            self.__dict__.pop(name, None)  # computed again from the new text on next use


_DERIVED = tuple(name for name, member in vars(Target).items() if isinstance(member, cached_property))


def just_changed(text: str, targets: list[Target]) -> Target | None:
    """The entry written last, when the candidate ``text`` sets one of its values anew (eighth pass): the same
    unit with another number, the same name with another version (:func:`~.subjects.conflicts`; not a host: two
    hosts of one domain are two places, ``tests/capture/test_values.py``).

    A correction often answers the statement just made and names nothing but the new value ("改成 10 分钟了。" right
    after "未支付的订单 15 分钟后自动取消。", dev): it shares no subject word with it, so no rule that compares words
    finds it, but the entry just written is the one it answers. Only that entry is taken, and only for a value of a
    kind it gives, so a number of another unit, or a value of an older entry, is never a change of it. A number
    written out ("Thirty minutes") is not a quantity here: as one, it made a chatter line ("give me five minutes")
    a change of the entry before it on dev.
    """
    notes = [t for t in targets if t.kind != "working_note"]
    if not notes:
        return None
    last = max(notes, key=lambda t: t.written)
    mine = frozenset(v for v in values(text) | quantities(text) if not v.startswith("host:"))
    theirs = frozenset(v for v in last.values if not v.startswith("host:"))
    return last if conflicts(mine, theirs) else None


_COMMON = ("unit:", "clock", "port")  # kinds of value too common to name an entry without a shared word


def set_anew(text: str, targets: list[Target], *, stated: bool) -> Target | None:
    """The entry a candidate gives a new value of one kind (capcorr5): a number of the same unit, a weekday, a
    time of day, a version of the same release line (:func:`~.measures.measures`, in any language), where the entry
    gives a value of that kind and the candidate none of the entry's values of it.

    An unmarked correction in another language than its entry ("Production releases moved to Thursday nights" /
    "本番への反映は毎週火曜日の夜だけです"; "原始读数 60 天后就降采样" / "Readings older than 90 days are downsampled")
    shares no word with it; the kind of value it sets is what the two have in common. A value alone is weak
    evidence (two rules of a project give minutes), so the entry must also share a subject token with it (as
    :func:`~.nearness.align` reads them, numbers and unit words left out), a concept (:func:`~.subjects.concepts`)
    or what a schedule is about (:func:`~.measures.schedule_words`: deploys, backups), unless the candidate says
    that something changed (``stated``) and the value is of a rare kind (a weekday, a time zone, a release line;
    not a number of a unit nor a time of day: "30 minutes now" after two other rules is no change of an older
    entry, ``tests/capture/test_restatements.py``). Of several, the one sharing most, then the latest. Working
    notes are never compared.
    """
    mine = measures(text)
    if not mine:
        return None
    own = subject_tokens(unmeasured(text))
    own_concepts = concepts(text) | schedule_words(text)
    best: tuple[int, str, Target] | None = None
    for t in targets:
        if t.kind == "working_note" or not other_value(mine, t.measures):
            continue
        # A number of minutes is given by many rules; a weekday, a time zone or a release line by few.
        rare = any(k in t.measures and not mine[k] & t.measures[k] for k in mine if not k.startswith(_COMMON))
        theirs = subject_tokens(unmeasured(t.text))
        # A two-letter token is a function word of some language ("de", "en", "el") or an acronym too common to name
        # a subject: it is no shared word here (capcorr9: "… le port 9100" / "El servidor … de … puerto 3000").
        words = {w for w in align(own, theirs) & theirs if len(w) > 2}
        shared = len(words) + len(own_concepts & (t.concepts | schedule_words(t.text)))
        changed = [k for k in mine if k in t.measures and not mine[k] & t.measures[k]]
        if changed == ["port"] and not stated and shared < 2:
            continue  # many services have a port: one shared word ("firmware") is two devices as often as one
        if (shared or (stated and rare)) and (best is None or (shared, t.written) > best[:2]):
            best = (shared, t.written, t)
    return None if best is None else best[2]


def restated_concepts(text: str, targets: list[Target]) -> Target | None:
    """The entry a candidate says again by its concepts (capdup4), when no word of the two matched: the two are one
    rule by :func:`~.subjects.same_concepts` (money, an integer, no floats: "Money is integer cents in an i64" /
    "Los importes se guardan en céntimos como i64"; "价格一律用整数“分”存" / "Preise … in Cent als ganze Zahl"), the
    candidate names no tool, command or path the entry does not (another name is another rule: "Tax is computed
    in integer cents by Stripe Tax"), and gives no other value of one the entry gives (that is a change, found by
    :func:`just_changed` and :func:`~.subjects.pick_change`). Of several, the closest by concepts, then the latest.
    Working notes are never compared. A word that is itself a concept (``float``, ``UTC``) is no name here.
    """
    mine = concepts(text)
    if len(mine) < CONCEPT_SHARED:
        return None
    own = _names(text)
    own_values = values(text) | quantities(text)
    best: tuple[float, str, Target] | None = None
    for t in targets:
        if t.kind == "working_note" or not same_concepts(mine, t.concepts) or not own <= _names(t.text):
            continue
        if conflicts(own_values, t.values):
            continue
        score = len(mine & t.concepts) / len(mine | t.concepts)
        if best is None or (score, t.written) > best[:2]:
            best = (score, t.written, t)
    return None if best is None else best[2]


def _names(text: str) -> frozenset[str]:
    """The tool-like names, commands and paths of a statement that are not themselves concept words."""
    found = set(tool_names(text)) | {v.split(":", 1)[1] for v in typed_subjects(text) if not v.startswith("tool:")}
    return frozenset(n for n in found if not concepts(n) and n not in _GENERIC_NAMES)


def norm_text(text: str) -> str:
    return " ".join(clean(text).casefold().split()).rstrip(".")
