"""The catalogue and search filters as one value: kind, tags and flags.

The service checks and normalizes a caller's filters once (:meth:`EntryFilter.of`) and passes the value down in
``SearchRequest``, ``CatalogueQuery``, ``ArchiveQuery`` and ``NeighboursQuery``. Engines apply it twice, by one
rule: as conditions on head projection rows (``backends/sql/projection.py``, once for every SQL dialect) and, on
verified content, by :meth:`EntryFilter.passes`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .model import EntryContent
from .rules import check_filter, normalize_tags, strings_of


@dataclass(frozen=True, slots=True, kw_only=True)
class EntryFilter:
    """Kind in ``kinds`` (any kind when empty), every tag of ``tags`` present, each flag equal when given."""

    kinds: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    important: bool | None = None
    mandatory: bool | None = None

    @classmethod
    def of(
        cls,
        *,
        kinds: Sequence[str] = (),
        tags: Sequence[str] = (),
        important: bool | None = None,
        mandatory: bool | None = None,
    ) -> EntryFilter:
        """A caller's filters, checked (:class:`~memstone.domain.errors.InvalidInput` names the bad one) and
        normalized as stored: kinds case-folded, tags as ``normalize_tags`` writes them."""
        return cls(
            kinds=tuple(k.strip().lower() for k in strings_of(kinds, "kinds")),
            tags=normalize_tags(strings_of(tags, "tags")),
            important=check_filter(important, "important"),
            mandatory=check_filter(mandatory, "mandatory"),
        )

    @property
    def active(self) -> bool:
        """Whether anything is filtered at all."""
        return bool(self.kinds or self.tags) or self.important is not None or self.mandatory is not None

    def passes(self, content: EntryContent) -> bool:
        """Whether an entry version's content passes the filters."""
        if self.kinds and content.kind not in self.kinds:
            return False
        if self.important is not None and content.important != self.important:
            return False
        if self.mandatory is not None and content.mandatory != self.mandatory:
            return False
        return all(t in content.tags for t in self.tags)


NO_FILTER = EntryFilter()

__all__ = ["NO_FILTER", "EntryFilter"]
