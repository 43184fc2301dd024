"""A live entry (or one planned in this batch) as :func:`~memstone.capture.admission.plan_candidates` compares it:
its text and, computed once each, the subject tokens, typed subjects, values and searchable form."""

from __future__ import annotations

from dataclasses import dataclass

from ..domain.ids import EntryId, EntryVersionId
from ._text import clean, searchable, subject_tokens, typed_subjects
from .subjects import quantities, values

__all__ = ["Target", "norm_text"]


@dataclass(slots=True)
class Target:
    """An entry compared by the planner; ``plan_index`` is the plan that created or last revised it in a batch."""

    entry_id: EntryId | None
    entry_version_id: EntryVersionId | None
    kind: str
    text: str
    slug: str | None
    plan_index: int | None  # the plan that created or last revised it in this batch
    _tokens: frozenset[str] | None = None
    _exact: frozenset[str] | None = None
    _search: str | None = None
    _norm: str | None = None
    _typed: frozenset[str] | None = None
    _values: frozenset[str] | None = None

    @property
    def values(self) -> frozenset[str]:
        if self._values is None:
            self._values = values(self.text) | quantities(self.text)
        return self._values

    @property
    def typed(self) -> frozenset[str]:
        if self._typed is None:
            self._typed = typed_subjects(self.text)
        return self._typed

    @property
    def tokens(self) -> frozenset[str]:
        if self._tokens is None:
            self._tokens = subject_tokens(self.text)
        return self._tokens

    @property
    def exact(self) -> frozenset[str]:
        if self._exact is None:
            self._exact = subject_tokens(self.text, synonyms=False)
        return self._exact

    @property
    def search(self) -> str:
        if self._search is None:
            self._search = searchable(self.text)
        return self._search

    @property
    def norm(self) -> str:
        if self._norm is None:
            self._norm = norm_text(self.text)
        return self._norm

    def retext(self, text: str) -> None:
        self.text, self._tokens, self._exact, self._search, self._norm = text, None, None, None, None
        self._typed, self._values = None, None


def norm_text(text: str) -> str:
    return " ".join(clean(text).casefold().split()).rstrip(".")
