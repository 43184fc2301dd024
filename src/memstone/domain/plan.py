"""Plan application, pure: a write plan and the base manifest in, the Revision and what to store out.

Every engine's store core and ``import`` both call :func:`apply_plan`, so the rules of a valid Revision (each
change names the right version, no skips or branches, version numbers count up, the hash commits to the new
manifest root and the sorted changes) are written once. It reads the base manifest through a
:class:`~memstone.domain.manifest.ManifestReader` and older versions through a callback; it writes nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Literal, Protocol

from .analyzer import searchable_text
from .canonical import REVISION_CONTENT_TAG, canonical_json, tagged_sha256
from .errors import IntegrityError, InvalidInput
from .ids import EntryId, EntryVersionId, MemoryId
from .manifest import ManifestReader
from .model import Change, EntryState, EntryVersion, ManifestEntry, Revision, revision_content
from .stamp import Stamped, stamp_of


class PlannedWrite(Stamped, Protocol):
    """What :func:`apply_plan` reads of a write plan (``ports.WritePlan`` is one): its provenance and these."""

    @property
    def memory_id(self) -> MemoryId: ...
    @property
    def base_revision(self) -> int: ...
    @property
    def changes(self) -> tuple[Change, ...]: ...
    @property
    def new_versions(self) -> tuple[EntryVersion, ...]: ...


@dataclass(frozen=True, slots=True, kw_only=True)
class ProjectionOp:
    """One change to the head projection: put ``entry_version_id`` for an entry, or drop the entry.

    ``reactivated`` puts name an older version the store already holds (the core loads and re-checks it).
    """

    op: Literal["put", "drop"]
    entry_id: EntryId
    entry_version_id: EntryVersionId | None = None
    reactivated: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class AppliedPlan:
    """A plan applied to its base: the Revision, its canonical content, new manifest nodes, projection ops."""

    revision: Revision
    content: str  # the canonical JSON whose hash is ``revision.content_hash``
    nodes: Mapping[str, bytes]
    projection: tuple[ProjectionOp, ...]
    manifest: Mapping[str, ManifestEntry]  # the entries this Revision changed, as they are now


def projection_text(version: EntryVersion) -> str:
    """What the full-text projections index for a version: title, text and tags, through Analyzer v1."""
    c = version.content
    return searchable_text(c.title or "", c.text, " ".join(c.tags))


def check_version_hash(version: EntryVersion) -> None:
    """A version's stored hash must be the hash of its content."""
    if version.content.content_hash != version.entry_content_hash:
        raise IntegrityError(f"entry version {version.entry_version_id} does not match its content hash")


def apply_plan(
    plan: PlannedWrite,
    base_root: str,
    manifests: ManifestReader,
    version_number: Callable[[EntryVersionId], int | None],
) -> AppliedPlan:
    """Validate ``plan`` against the manifest at ``base_root`` and build the Revision it makes.

    ``version_number`` gives the version number of a stored entry version (None when it is not stored). Raises
    InvalidInput for a plan that breaks a rule, IntegrityError for a version whose hash does not match.
    """
    memory_id = plan.memory_id
    if not plan.changes:
        raise InvalidInput("a Revision needs at least one change; an empty Revision is never written")
    new_revision = plan.base_revision + 1
    new_versions: dict[str, EntryVersion] = {v.entry_version_id: v for v in plan.new_versions}
    used: set[str] = set()
    updates: dict[str, ManifestEntry] = {}
    for change in plan.changes:
        if change.entry_id in updates:
            raise InvalidInput(f"entry {change.entry_id} is changed twice in one Revision")
        current = manifests.lookup(base_root, change.entry_id)
        updates[change.entry_id] = _check_change(
            memory_id, change, current, new_versions, new_revision, used, version_number
        )
    unused = sorted(set(new_versions) - used)
    if unused:
        raise InvalidInput(f"entry versions not referenced by any change: {', '.join(unused)}")
    changes = tuple(sorted(plan.changes, key=lambda c: c.entry_id.encode("utf-8")))
    root, nodes = manifests.update(base_root, updates)
    manifests.remember_nodes(nodes)
    count, active = manifests.counts(root)
    content = canonical_json(revision_content(root, changes))
    revision = Revision(
        memory_id=memory_id,
        revision=new_revision,
        content_hash=tagged_sha256(REVISION_CONTENT_TAG, content.encode("utf-8")),
        manifest_root=root,
        entry_count=count,
        active_count=active,
        changes=changes,
        **stamp_of(plan),
    )
    projection = tuple(_projection_op(c) for c in changes)
    return AppliedPlan(revision=revision, content=content, nodes=nodes, projection=projection, manifest=updates)


def _projection_op(change: Change) -> ProjectionOp:
    if change.op in ("add", "revise", "reactivate"):
        return ProjectionOp(
            op="put",
            entry_id=change.entry_id,
            entry_version_id=change.to_entry_version_id,
            reactivated=change.op == "reactivate",
        )
    return ProjectionOp(op="drop", entry_id=change.entry_id)


# A state change flips an entry between its two states and names the current version on one side only:
# op -> (the state before, the state after, whether the named side is the source (else the target)).
_FLIPS: dict[str, tuple[EntryState, EntryState, bool]] = {
    "deactivate": ("active", "inactive", True),
    "reactivate": ("inactive", "active", False),
}


def _check_change(
    memory_id: MemoryId,
    change: Change,
    current: ManifestEntry | None,
    new_versions: Mapping[str, EntryVersion],
    new_revision: int,
    used: set[str],
    version_number: Callable[[EntryVersionId], int | None],
) -> ManifestEntry:
    eid = change.entry_id
    if change.op in ("add", "revise"):
        version = new_versions.get(change.to_entry_version_id or "")
        if version is None or version.entry_id != eid or version.memory_id != memory_id:
            raise InvalidInput(f"change {change.op} of {eid} names no new version of that entry")
        check_version_hash(version)
        if version.created_in_revision != new_revision:
            raise InvalidInput(f"version {version.entry_version_id} must be created in revision {new_revision}")
        used.add(version.entry_version_id)
        if change.op == "add":
            if current is not None:
                raise InvalidInput(f"entry {eid} already exists in this Memory")
            if version.version != 1 or version.previous_version_id is not None or change.from_entry_version_id:
                raise InvalidInput(f"a new entry starts at version 1 with no predecessor ({eid})")
        else:
            if current is None:
                raise InvalidInput(f"entry {eid} is not in this Memory")
            if current.state != "active":
                raise InvalidInput(
                    f"entry {eid} is inactive", hint="reactivate it first, then revise it against the new head"
                )
            if change.from_entry_version_id != current.entry_version_id or (
                version.previous_version_id != current.entry_version_id
            ):
                raise InvalidInput(
                    f"revision of {eid} must follow its current version {current.entry_version_id}",
                    hint="no skip, branch or cross-entry revisions; read the head and retry",
                )
            previous = version_number(current.entry_version_id)
            if previous is None or previous + 1 != version.version:
                raise InvalidInput(f"version number of {eid} must be its predecessor's plus one")
        return ManifestEntry(
            entry_id=eid,
            entry_version_id=version.entry_version_id,
            entry_content_hash=version.entry_content_hash,
            state="active",
        )
    if current is None:
        raise InvalidInput(f"entry {eid} is not in this Memory")
    flip = _FLIPS.get(change.op)
    if flip is None:
        raise InvalidInput(f"unknown change op {change.op!r}")
    before, after, names_source = flip
    named, other = change.from_entry_version_id, change.to_entry_version_id
    if not names_source:
        named, other = other, named
    if current.state != before or named != current.entry_version_id:
        raise InvalidInput(f"{change.op} of {eid} must name its current {before} version")
    if other is not None:
        raise InvalidInput(f"{change.op} has no {'target' if names_source else 'source'} version")
    return replace(current, state=after)


__all__ = [
    "AppliedPlan",
    "PlannedWrite",
    "ProjectionOp",
    "apply_plan",
    "check_version_hash",
    "projection_text",
]
