"""Purge: real erasure of an entry's content (issue 12). Admin only; never offered to agents over MCP.

``purge(entry, reason=…)`` erases the text, title and tags of every version of the entry (or of the chosen
``versions``) from the store's files, keeping a tombstone per version with its original hash, so the revision
chain still verifies and ``history`` shows what was purged, when, by whom and why. An entry whose current
version is purged is forgotten first (a normal Revision), so nothing purged stays searchable. A purge of versions
already purged writes nothing but redoes the physical erasure (the engine's rewrite of its files), so a purge whose
erasure failed after its commit (an object store failing partway) is finished by running it again.

>>> report = await svc.purge("ent_…", reason="a customer's card number, written by mistake")  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Sequence

from ..domain.errors import InvalidInput, NotFound
from ..domain.ids import EntryVersionId
from ..domain.purge import PurgeReport, Tombstone
from ..domain.rules import check_revision, items_of, normalize_reason
from ..ports import ManifestQuery
from .core import EntryLike, ServiceCore, _entry_id
from .writes import Writes


class Purges:
    """The purge use case (and the tombstones it leaves)."""

    def __init__(self, core: ServiceCore, writes: Writes) -> None:
        self._core = core
        self._writes = writes

    async def purge(self, entry: EntryLike, *, reason: str, versions: Sequence[int] | None = None) -> PurgeReport:
        """Erase the content of an entry's versions (all, or these version numbers); admin on its scope only."""
        why = normalize_reason(reason)
        if why is None:
            raise InvalidInput("a purge needs a reason", hint="say why the content must be erased, e.g. --reason …")
        entry_id = _entry_id(entry)
        items = await self._core.history(entry_id)  # NotFound when the actor cannot read it
        memory_id = items[0].version.memory_id
        scope = await self._core.scope_of(memory_id)
        await self._core.policy.require_bound(scope, "admin", hidden=f"no entry {entry_id}")
        numbers = {v.version.version for v in items}
        if versions is None:
            chosen = list(items)
        else:
            wanted = {check_revision(n, "version") for n in items_of(versions, "versions")}
            missing = sorted(wanted - numbers)
            if missing:
                raise NotFound(f"{entry_id} has no version {missing[0]}", hint=f"its versions are 1..{max(numbers)}")
            chosen = [i for i in items if i.version.version in wanted]
        already = tuple(i.version.entry_version_id for i in chosen if i.version.content.purged_hash is not None)
        todo = [i.version for i in chosen if i.version.content.purged_hash is None]
        forgotten = None
        head = await self._core.head(memory_id)
        manifest = await self._core.backend.read(ManifestQuery(ref=head.ref, entry_ids=(entry_id,)))
        current = manifest.get(entry_id)
        if (
            current is not None
            and current.state == "active"
            and any(v.entry_version_id == current.entry_version_id for v in todo)
        ):
            done = await self._writes.forget(head, entries=[entry_id], reason=f"purge: {why}")
            forgotten = done.revision
        now = self._core._clock()
        tombstones = tuple(
            Tombstone(
                purge_id=self._core._new_id("prg_"), memory_id=v.memory_id, entry_id=v.entry_id,
                entry_version_id=EntryVersionId(v.entry_version_id), version=v.version,
                entry_content_hash=v.entry_content_hash, reason=why, author=self._core._author,
                surface=self._core._surface, purged_at=now,
            )
            for v in todo
        )  # fmt: skip
        if tombstones or already:  # a re-run over purged versions redoes the erasure an earlier one left unfinished
            await self._core.backend.purge_versions(tombstones)
        return PurgeReport(
            entry_id=entry_id, tombstones=tombstones, already_purged=already, forgotten_in_revision=forgotten
        )

    async def tombstones(self, entry: EntryLike) -> tuple[Tombstone, ...]:
        """What was purged of an entry: one tombstone per purged version (who, when, why, the hash it had)."""
        entry_id = _entry_id(entry)
        await self._core.history(entry_id)  # the actor must be able to read the entry
        return await self._core.backend.tombstones(entry_id)


__all__ = ["Purges"]
