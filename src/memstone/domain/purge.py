"""Purge (real erasure): the tombstone that replaces the content of a purged entry version.

Append-only history means a secret or personal data written by mistake stays in every version. A purge removes
the content bytes of chosen versions (text, title and tags) and keeps a :class:`Tombstone` in their place: the
version keeps its id, kind, flags, links and — recorded in the tombstone — its original content hash, so every
manifest and Revision that names it still verifies, and ``history`` shows what was purged, when, by whom and why.

In memory a purged version's text is :data:`PURGE_MARK` followed by its original hash. Writes never accept a
NUL character (:func:`memstone.domain.rules.normalize_text`), so no caller can forge the mark. The store core
keeps a purged row as an empty text (which no write accepts either) with the hash in its title column
(``backends/sql/rows.py``: PostgreSQL cannot store a NUL; stores purged before hold the mark itself, still read).
``verify`` checks that every purged version has its tombstone and every tombstone its purged version (issue 12).
"""

from __future__ import annotations

from dataclasses import dataclass

from .fields import FieldDict
from .ids import EntryId, EntryVersionId, MemoryId

PURGE_MARK = "\x00memstone:purged:"
PURGED_TEXT = "[purged]"


def purge_mark(entry_content_hash: str) -> str:
    """The stored text of a purged version (the original hash after the mark)."""
    return PURGE_MARK + entry_content_hash


@dataclass(frozen=True, slots=True, kw_only=True)
class Tombstone(FieldDict):
    """What a purge removed: one entry version's content, and the hash it had."""

    purge_id: str
    memory_id: MemoryId
    entry_id: EntryId
    entry_version_id: EntryVersionId
    version: int
    entry_content_hash: str
    reason: str
    author: str | None
    surface: str
    purged_at: str


@dataclass(frozen=True, slots=True, kw_only=True)
class PurgeReport:
    """What one purge did: the tombstones it wrote (none when every chosen version was already purged)."""

    entry_id: EntryId
    tombstones: tuple[Tombstone, ...]
    already_purged: tuple[EntryVersionId, ...] = ()
    forgotten_in_revision: int | None = None

    def to_dict(self) -> dict[str, object]:
        return {
            "entry_id": self.entry_id,
            "purged": [t.to_dict() for t in self.tombstones],
            "already_purged": list(self.already_purged),
            "forgotten_in_revision": self.forgotten_in_revision,
        }


__all__ = ["PURGED_TEXT", "PURGE_MARK", "PurgeReport", "Tombstone", "purge_mark"]
