"""History you can use: field-level diffs between any two versions of an entry, and per-field blame."""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass

from .errors import InvalidInput
from .fields import FieldDict
from .ids import EntryId, EntryVersionId, MemoryId
from .model import EntryContent, EntryVersion, Revision

FIELDS = ("kind", "title", "text", "tags", "slug", "important", "mandatory", "sources", "artifacts", "relations")
_SETS = ("tags", "sources", "artifacts", "relations")


def field_value(content: EntryContent, name: str) -> object:
    """A content field as plain JSON data (lists for the set-valued fields)."""
    return content.canonical()[name]


@dataclass(frozen=True, slots=True, kw_only=True)
class FieldChange:
    """How one field differs. Set-valued fields also say what was added and removed."""

    field: str
    old: object
    new: object
    added: tuple[object, ...] = ()
    removed: tuple[object, ...] = ()

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {"field": self.field, "old": self.old, "new": self.new}
        if self.field in _SETS:
            out["added"] = list(self.added)
            out["removed"] = list(self.removed)
        return out


@dataclass(frozen=True, slots=True, kw_only=True)
class EntryDiff:
    """What changed between two versions of one entry (``changes`` empty: identical content)."""

    entry_id: EntryId
    from_version: EntryVersion
    to_version: EntryVersion
    changes: tuple[FieldChange, ...]
    text_diff: tuple[str, ...]

    @property
    def identical(self) -> bool:
        return not self.changes

    def to_dict(self) -> dict[str, object]:
        return {
            "entry_id": self.entry_id,
            "from": _version_ref(self.from_version),
            "to": _version_ref(self.to_version),
            "identical": self.identical,
            "changes": [c.to_dict() for c in self.changes],
            "text_diff": list(self.text_diff),
        }


def _version_ref(v: EntryVersion) -> dict[str, object]:
    return {
        "entry_version_id": v.entry_version_id,
        "version": v.version,
        "revision": v.created_in_revision,
        "author": v.provenance.author,
        "created_at": v.provenance.created_at,
        "entry_content_hash": v.entry_content_hash,
    }


def version_reasons(revisions: Sequence[Revision]) -> dict[EntryVersionId, str | None]:
    """The reason each entry version was written for, as the Revision that wrote it recorded it (its Change)."""
    return {
        c.to_entry_version_id: c.reason
        for rev in revisions
        for c in rev.changes
        if c.to_entry_version_id is not None and c.op in ("add", "revise")
    }


def revision_runs(versions: Sequence[EntryVersion], *, max_gap: int = 8) -> list[tuple[MemoryId, int, int]]:
    """The Revisions that wrote ``versions`` as (memory, first, last) runs: nearby ones read in one range."""
    runs: list[tuple[MemoryId, int, int]] = []
    for mid, n in sorted({(v.memory_id, v.created_in_revision) for v in versions}):
        if runs and runs[-1][0] == mid and n - runs[-1][2] <= max_gap:
            runs[-1] = (mid, runs[-1][1], n)
        else:
            runs.append((mid, n, n))
    return runs


def _key(item: object) -> str:
    return repr(sorted(item.items())) if isinstance(item, dict) else repr(item)


def diff_versions(a: EntryVersion, b: EntryVersion) -> EntryDiff:
    """Field-by-field differences from ``a`` to ``b`` (two versions of the same entry, in either order)."""
    if a.entry_id != b.entry_id:
        raise InvalidInput(
            f"{a.entry_version_id} and {b.entry_version_id} belong to different entries",
            hint="diff compares two versions of one entry",
        )
    changes: list[FieldChange] = []
    for name in FIELDS:
        old, new = field_value(a.content, name), field_value(b.content, name)
        if old == new:
            continue
        if name in _SETS:
            assert isinstance(old, list) and isinstance(new, list)
            old_keys = {_key(x): x for x in old}
            new_keys = {_key(x): x for x in new}
            changes.append(
                FieldChange(
                    field=name,
                    old=old,
                    new=new,
                    added=tuple(new_keys[k] for k in sorted(set(new_keys) - set(old_keys))),
                    removed=tuple(old_keys[k] for k in sorted(set(old_keys) - set(new_keys))),
                )
            )
        else:
            changes.append(FieldChange(field=name, old=old, new=new))
    text_diff: tuple[str, ...] = ()
    if a.content.text != b.content.text:
        text_diff = tuple(
            difflib.unified_diff(
                a.content.text.splitlines(),
                b.content.text.splitlines(),
                fromfile=f"{a.entry_version_id} (v{a.version})",
                tofile=f"{b.entry_version_id} (v{b.version})",
                lineterm="",
            )
        )
    return EntryDiff(entry_id=a.entry_id, from_version=a, to_version=b, changes=tuple(changes), text_diff=text_diff)


@dataclass(frozen=True, slots=True, kw_only=True)
class BlameField(FieldDict):
    """Which version (and author, time, Revision) last changed one field, and its current value."""

    field: str
    value: object
    entry_version_id: EntryVersionId
    version: int
    revision: int
    author: str | None
    created_at: str


def blame_fields(versions: Sequence[EntryVersion], *, upto: EntryVersionId | None = None) -> tuple[BlameField, ...]:
    """Per field, the last version (oldest first chain, up to ``upto``) that set its current value."""
    if not versions:
        raise InvalidInput("blame needs at least one version")
    chain = list(versions)
    if upto is not None:
        ids = [v.entry_version_id for v in chain]
        if upto not in ids:
            raise InvalidInput(f"{upto} is not a version of {chain[0].entry_id}")
        chain = chain[: ids.index(upto) + 1]
    last: dict[str, EntryVersion] = {}
    previous: EntryVersion | None = None
    for v in chain:
        for name in FIELDS:
            if previous is None or field_value(previous.content, name) != field_value(v.content, name):
                last[name] = v
        previous = v
    assert previous is not None
    return tuple(
        BlameField(
            field=name,
            value=field_value(previous.content, name),
            entry_version_id=last[name].entry_version_id,
            version=last[name].version,
            revision=last[name].created_in_revision,
            author=last[name].provenance.author,
            created_at=last[name].provenance.created_at,
        )
        for name in FIELDS
    )


__all__ = [
    "FIELDS",
    "BlameField",
    "EntryDiff",
    "FieldChange",
    "blame_fields",
    "diff_versions",
    "field_value",
    "version_reasons",
]
