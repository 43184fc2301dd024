"""The fields an entry's content is written from, read off any value that has them (an importer's draft, a sync
folder file, an HTTP body) as keyword arguments for :class:`~memstone.domain.model.EntryInput`."""

from __future__ import annotations

from typing import Protocol, TypedDict


class Written(Protocol):
    """A value carrying what an entry says: kind, text, title, tags, slug and flags."""

    @property
    def kind(self) -> str: ...
    @property
    def text(self) -> str: ...
    @property
    def title(self) -> str | None: ...
    @property
    def tags(self) -> tuple[str, ...] | list[str]: ...
    @property
    def slug(self) -> str | None: ...
    @property
    def important(self) -> bool: ...
    @property
    def mandatory(self) -> bool: ...


class EntryFields(TypedDict):
    kind: str
    text: str
    title: str | None
    tags: tuple[str, ...] | list[str]
    slug: str | None
    important: bool
    mandatory: bool


def entry_fields(x: Written) -> EntryFields:
    """``x``'s content fields, as keyword arguments for an ``EntryInput``."""
    return EntryFields(
        kind=x.kind, text=x.text, title=x.title, tags=x.tags, slug=x.slug, important=x.important, mandatory=x.mandatory
    )


__all__ = ["EntryFields", "Written", "entry_fields"]
