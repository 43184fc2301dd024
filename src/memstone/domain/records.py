"""The record surface of Graphit and Xema over entries: catalogue rows, category-first ordering, recall bundles.

A *record* is an entry as Graphit shows it: its current version (title, type, tags, flags, body), its
timestamps (``created_at`` of version 1, ``updated_at`` of the current version), its author (``updated_by``),
its revision number (the entry version number), its scope, and whether a more specific scope shadows it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Literal, TypeVar

from .fields import FieldDict, PlainDict
from .ids import EntryId, EntryVersionId
from .model import STALE_TAG, ArtifactRef, ContentFields, EntryContent, EntryState, EntryVersion, MemoryHit, Shadowed

Category = Literal["mandatory", "important", "normal"]
CATEGORY_RANK: dict[Category, int] = {"mandatory": 0, "important": 1, "normal": 2}
T = TypeVar("T")


def category(*, important: bool, mandatory: bool) -> Category:
    """Graphit's classification: mandatory, then important, then normal (mandatory wins when both are set)."""
    if mandatory:
        return "mandatory"
    return "important" if important else "normal"


def priority_sorted(
    items: Iterable[T],
    *,
    category_of: Callable[[T], Category],
    date_of: Callable[[T], str],
    tiebreak: Callable[[T], tuple[object, ...]],
) -> list[T]:
    """Category first (mandatory → important → normal), then date descending, then ``tiebreak`` ascending.

    Sorting is stable in three passes, so a score in ``tiebreak`` can never outrank a category or a date.
    """
    out = sorted(items, key=tiebreak)
    out.sort(key=date_of, reverse=True)
    out.sort(key=lambda x: CATEGORY_RANK[category_of(x)])
    return out


@dataclass(frozen=True, slots=True, kw_only=True)
class Record(ContentFields):
    """One entry as a catalogue row: its version current at ``memory_ref``, state, scope and timestamps."""

    memory_ref: ArtifactRef
    version: EntryVersion
    state: EntryState
    created_at: str
    scope: str | None = None
    shadowed_by: EntryId | None = None
    shadowed_by_scope: str | None = None

    @property
    def entry_id(self) -> EntryId:
        return self.version.entry_id

    @property
    def entry_version_id(self) -> EntryVersionId:
        return self.version.entry_version_id

    def shown_content(self) -> EntryContent:
        return self.version.content

    @property
    def revision(self) -> int:
        """Graphit's revision number of a record: its entry version number (the write count, from 1)."""
        return self.version.version

    @property
    def updated_at(self) -> str:
        return self.version.provenance.created_at or self.created_at

    @property
    def updated_by(self) -> str | None:
        return self.version.provenance.author

    @property
    def stale(self) -> bool:
        """Flagged stale by maintenance: its evidence changed after it was written (the ``stale`` tag)."""
        return STALE_TAG in self.version.content.tags

    @property
    def category(self) -> Category:
        return category(important=self.important, mandatory=self.mandatory)

    def to_dict(self) -> dict[str, object]:
        c = self.version.content
        return {
            "memory_ref": self.memory_ref.to_dict(),
            "scope": self.scope,
            "entry_id": self.entry_id,
            "entry_version_id": self.entry_version_id,
            "kind": c.kind,
            "title": c.title,
            "text": c.text,
            "tags": list(c.tags),
            "slug": c.slug,
            "important": c.important,
            "mandatory": c.mandatory,
            "category": self.category,
            "relations": [r.to_dict() for r in c.relations],
            "state": self.state,
            "revision": self.revision,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            "updated_by": self.updated_by,
            "entry_content_hash": self.version.entry_content_hash,
            "shadowed_by": self.shadowed_by,
            "shadowed_by_scope": self.shadowed_by_scope,
            "stale": self.stale,
        }


def order_records(records: Iterable[Record]) -> list[Record]:
    """Catalogue order: mandatory → important → normal, then ``updated_at`` descending, then entry id."""
    return priority_sorted(
        records,
        category_of=lambda r: r.category,
        date_of=lambda r: r.updated_at,
        tiebreak=lambda r: (r.entry_id.encode("utf-8"),),
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class CrossLink(FieldDict):
    """A relation touching a recalled entry: ``outgoing`` (it points elsewhere) or ``incoming`` (it is cited)."""

    direction: Literal["outgoing", "incoming"]
    kind: str
    source: EntryId
    target: EntryId
    other_title: str | None = None
    other_kind: str | None = None
    other_state: EntryState | Literal["missing"] = "active"


@dataclass(frozen=True, slots=True, kw_only=True)
class Omission(FieldDict):
    """Something the recall bundle left out, and why."""

    entry_id: EntryId
    section: Literal["mandatory", "contextual"]
    reason: Literal["budget", "shadowed"]
    cost: int


@dataclass(frozen=True, slots=True, kw_only=True)
class RecallBundle(PlainDict):
    """The initial recall protocol's result: mandatory memories in full, then the contextual search.

    ``budget``/``unit`` are what the caller allowed (``None``: unlimited), ``used`` what the bundle spends, in
    the same unit. ``omitted`` and ``note`` say what was left out.
    """

    mandatory: tuple[Record, ...]
    contextual: tuple[MemoryHit, ...]
    links: tuple[CrossLink, ...]
    omitted: tuple[Omission, ...]
    budget: int | None
    unit: Literal["tokens", "chars"]
    used: int
    mode: str
    note: str


_WIDE = re.compile("[\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef\U00020000-\U0003ffff]")


def estimate_tokens(text: str) -> int:
    """A deterministic, model-independent token estimate: one per CJK character, one per 4 other characters.

    It errs on the generous side for English (≈ 4 characters per token) and matches CJK tokenizers closely.
    """
    wide = 0 if text.isascii() else len(_WIDE.findall(text))
    return wide + math.ceil((len(text) - wide) / 4)


def recall_text(kind: str, title: str | None, text: str) -> str:
    """What a recall bundle spends budget on for one memory: its heading line and its body."""
    head = f"[{kind}] {title}" if title else f"[{kind}]"
    return f"{head}\n{text}"


def cost(text: str, unit: Literal["tokens", "chars"]) -> int:
    return estimate_tokens(text) if unit == "tokens" else len(text)


def budget_note(omitted: Sequence[Omission], budget: int | None, unit: str, used: int) -> str:
    """A one-line summary of what the budget left out (empty budget: everything was included)."""
    lost = [o for o in omitted if o.reason == "budget"]
    if budget is None:
        return "no budget: everything selected was included"
    if not lost:
        return f"used {used} of {budget} {unit}; nothing was left out"
    mandatory = sum(1 for o in lost if o.section == "mandatory")
    parts = []
    if mandatory:
        parts.append(f"{mandatory} mandatory")
    if len(lost) - mandatory:
        parts.append(f"{len(lost) - mandatory} contextual")
    return (
        f"used {used} of {budget} {unit}; left out {' and '.join(parts)} memor{'y' if len(lost) == 1 else 'ies'} "
        f"({sum(o.cost for o in lost)} {unit}): {', '.join(o.entry_id for o in lost)}"
    )


__all__ = [
    "CATEGORY_RANK",
    "Category",
    "CrossLink",
    "Omission",
    "RecallBundle",
    "Record",
    "Shadowed",
    "budget_note",
    "category",
    "cost",
    "estimate_tokens",
    "order_records",
    "priority_sorted",
    "recall_text",
]
