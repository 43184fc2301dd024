"""The record surface, above the adapters: slug uniqueness inside the write, catalogues, slug lookup and aliases,
incoming links, archived-version search, scope binding and the kind policy.

``DatabaseMemoryBackend`` mixes this in; a concrete adapter supplies the ``_…_sync`` primitives declared here
(plain queries and DDL, no rules). Aliases are not stored anywhere: an entry's older versions already record
every slug it had, so "the old slug redirects to the entry" is read straight from authority.
"""

from __future__ import annotations

import json
from abc import abstractmethod
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Literal

from ..domain.analyzer import informative_terms, query_terms
from ..domain.errors import AlreadyExists, ArtifactNotFoundError, IntegrityError
from ..domain.ids import EntryId, EntryVersionId, MemoryId
from ..domain.manifest import ManifestReader
from ..domain.model import ArtifactRef, Change, EntryContent, EntryVersion, Revision
from ..domain.plan import projection_text
from ..domain.records import Record
from ..domain.search import fts_admits, fts_required_terms
from ..ports import (
    ArchiveMatch,
    ArchiveQuery,
    CatalogueQuery,
    IncomingLink,
    KindPolicy,
    KindsQuery,
    LinksQuery,
    LiveSlug,
    LiveSlugsQuery,
    MemoryVersionsQuery,
    RevisionsQuery,
    ScopeBinding,
    SlugMatch,
    SlugQuery,
)

_BATCH = 500


def archive_text(version: EntryVersion) -> str:
    """What the archive projection indexes for a superseded version: the same text as the head projection."""
    return projection_text(version)


def content_matches(
    c: EntryContent,
    *,
    kinds: Sequence[str],
    tags: Sequence[str],
    important: bool | None,
    mandatory: bool | None,
) -> bool:
    """The catalogue and search filters: kind in ``kinds``, every tag present, flags equal when given."""
    if kinds and c.kind not in kinds:
        return False
    if important is not None and c.important != important:
        return False
    if mandatory is not None and c.mandatory != mandatory:
        return False
    return all(t in c.tags for t in tags)


class RecordsBackendMixin:
    """Record-surface rules over adapter primitives (mixed into ``DatabaseMemoryBackend``)."""

    _manifests: ManifestReader

    # ------------------------------------------------------------------ what the skeleton provides
    @abstractmethod
    def _write_txn(self) -> AbstractContextManager[None]: ...

    @abstractmethod
    def _read_txn(self) -> AbstractContextManager[None]: ...

    @abstractmethod
    def _head_sync(self, memory_id: MemoryId) -> Revision | None: ...

    @abstractmethod
    def _revision_sync(self, memory_id: MemoryId, revision: int) -> Revision | None: ...

    @abstractmethod
    def _revisions_sync(self, memory_id: MemoryId, first: int, last: int) -> list[Revision]: ...

    @abstractmethod
    def _heads_sync(self) -> list[Revision]: ...

    @abstractmethod
    def _versions_sync(self, memory_id: MemoryId | None, version_ids: Sequence[str]) -> list[EntryVersion]: ...

    @abstractmethod
    def _scope_sync(self, scope: str | None) -> list[ScopeBinding]: ...

    @abstractmethod
    def _bind_scope_sync(self, scope: str, memory_id: MemoryId, created_at: str) -> bool: ...

    # ------------------------------------------------------------------ adapter primitives
    @abstractmethod
    def _slug_holders_sync(self, memory_id: MemoryId, kind: str, slug: str) -> list[EntryId]:
        """Entries of the head projection of a Memory with this kind and slug."""

    @abstractmethod
    def _slug_version_ids_sync(self, memory_ids: Sequence[str], kind: str, slug: str) -> list[EntryVersionId]:
        """Every stored version (any state, any age) of these Memories with this kind and slug."""

    @abstractmethod
    def _live_slugs_sync(self, memory_ids: Sequence[str]) -> list[tuple[MemoryId, EntryId, EntryVersionId, str, str]]:
        """(memory, entry, version, kind, slug) of head projection rows that have a slug."""

    @abstractmethod
    def _catalogue_rows_sync(
        self,
        memory_id: MemoryId,
        kinds: Sequence[str],
        tags: Sequence[str],
        important: bool | None,
        mandatory: bool | None,
    ) -> list[tuple[EntryId, EntryVersionId, str]]:
        """(entry, version, hash) of head projection rows of a Memory that pass the filters."""

    @abstractmethod
    def _first_created_sync(self, entry_ids: Sequence[str]) -> dict[EntryId, str]:
        """``created_at`` of version 1 of each entry."""

    @abstractmethod
    def _linking_version_ids_sync(self, memory_ids: Sequence[str], targets: Sequence[str]) -> list[EntryVersionId]:
        """Stored versions of these Memories with a relation whose target is one of ``targets``."""

    @abstractmethod
    def _memory_version_ids_sync(self, memory_id: MemoryId) -> list[EntryVersionId]:
        """Every version id of a Memory, by entry id then version."""

    @abstractmethod
    def _superseded_version_ids_sync(self) -> list[EntryVersionId]:
        """Every version that has a successor (the archived rows)."""

    @abstractmethod
    def _archive_put_sync(self, version: EntryVersion, text: str) -> None: ...

    @abstractmethod
    def _archive_rows_sync(self) -> Iterator[tuple[MemoryId, EntryId, EntryVersionId, str]]: ...

    @abstractmethod
    def _archive_clear_sync(self) -> None: ...

    @abstractmethod
    def _archive_fts_check_sync(self) -> list[str]: ...

    @abstractmethod
    def _archive_candidates_sync(
        self, memory_ids: Sequence[str], terms: Sequence[str], depth: int
    ) -> list[tuple[MemoryId, EntryId, EntryVersionId, str]]:
        """Top ``depth`` archive rows matching any of ``terms`` by the engine's ranking."""

    @abstractmethod
    def _meta_sync(self, key: str) -> str | None: ...

    @abstractmethod
    def _records_missing_sync(self) -> bool:
        """Whether the record-surface tables and indexes are missing (a store made by an older memstone)."""

    @abstractmethod
    def _records_create_sync(self) -> None: ...

    @abstractmethod
    def _set_meta_sync(self, key: str, value: str) -> None: ...

    # ------------------------------------------------------------------ inside every write
    def _records_after_plan_sync(
        self,
        memory_id: MemoryId,
        changes: Sequence[Change],
        new_versions: Mapping[str, EntryVersion],
        reactivated: Mapping[EntryVersionId, EntryVersion],
    ) -> None:
        """Archive superseded versions and enforce live-slug uniqueness, in the write's own transaction.

        The check runs after every projection row of the write is in place, so swapping two slugs within one
        write is allowed and a slug taken by any other live entry of the same kind is refused.
        """
        touched: set[tuple[str, str]] = set()
        for c in changes:
            version: EntryVersion | None = None
            if c.op == "revise" and c.from_entry_version_id is not None:
                (previous,) = self._versions_sync(memory_id, [c.from_entry_version_id])
                self._archive_put_sync(previous, archive_text(previous))
            if c.op in ("add", "revise") and c.to_entry_version_id is not None:
                version = new_versions[c.to_entry_version_id]
            elif c.op == "reactivate" and c.to_entry_version_id is not None:
                version = reactivated.get(c.to_entry_version_id)
            if version is not None and version.content.slug is not None:
                touched.add((version.content.kind, version.content.slug))
        for kind, slug in sorted(touched):
            holders = sorted(set(self._slug_holders_sync(memory_id, kind, slug)))
            if len(holders) > 1:
                raise AlreadyExists(
                    f"slug {slug!r} is already used by a live {kind} entry in {memory_id} "
                    f"({', '.join(holders)}); slugs are unique among live entries of one kind in a scope",
                    hint="choose another slug, rename the other entry (memstone rename), or forget it first",
                )

    # ------------------------------------------------------------------ reads
    def _records_read_sync(self, query: object) -> object:
        match query:
            case CatalogueQuery():
                return self._catalogue_sync(query)
            case SlugQuery():
                return self._slug_sync(query)
            case LiveSlugsQuery(memory_ids=mids):
                return self._live_slugs_checked_sync(mids)
            case LinksQuery(memory_ids=mids, targets=targets):
                return self._links_sync(mids, targets)
            case RevisionsQuery(memory_id=mid, first=first, last=last):
                with self._read_txn():
                    return self._revisions_sync(mid, first, last)
            case MemoryVersionsQuery(memory_id=mid):
                with self._read_txn():
                    ids = self._memory_version_ids_sync(mid)
                    return self._load_versions_sync(mid, ids)
            case ArchiveQuery():
                return self._archive_search_sync(query)
            case KindsQuery():
                with self._read_txn():
                    return _decode_kinds(self._meta_sync("kinds"))
        raise AssertionError(f"not a records query: {query!r}")

    def _load_versions_sync(self, memory_id: MemoryId | None, ids: Sequence[str]) -> list[EntryVersion]:
        out: list[EntryVersion] = []
        for i in range(0, len(ids), _BATCH):
            out.extend(self._versions_sync(memory_id, ids[i : i + _BATCH]))
        return out

    def _catalogue_sync(self, q: CatalogueQuery) -> list[Record]:
        out: list[Record] = []
        with self._read_txn():
            for ref in q.memories:
                rev = self._revision_sync(ref.memory_id, ref.revision)
                if rev is None:
                    raise ArtifactNotFoundError(f"no revision {ref}")
                head = self._head_sync(ref.memory_id)
                assert head is not None
                states: dict[str, Literal["active", "inactive"]] = {}
                if head.revision == rev.revision and not q.include_inactive:
                    # The head projection filters; the authoritative manifest has the last word on every row.
                    for eid, vid, content_hash in self._catalogue_rows_sync(
                        rev.memory_id, q.kinds, q.tags, q.important, q.mandatory
                    ):
                        m = self._manifests.lookup(rev.manifest_root, eid)
                        if (
                            m is not None
                            and m.state == "active"
                            and m.entry_version_id == vid
                            and m.entry_content_hash == content_hash
                        ):
                            states[vid] = "active"
                else:
                    for m in self._manifests.iter_entries(rev.manifest_root):
                        if q.include_inactive or m.state == "active":
                            states[m.entry_version_id] = m.state
                versions = self._load_versions_sync(rev.memory_id, sorted(states))
                created = self._first_created_sync([v.entry_id for v in versions])
                for v in versions:
                    if v.content.content_hash != v.entry_content_hash:
                        continue  # damaged authority never reaches a caller; verify reports it
                    if not content_matches(
                        v.content, kinds=q.kinds, tags=q.tags, important=q.important, mandatory=q.mandatory
                    ):
                        continue
                    out.append(
                        Record(
                            memory_ref=rev.ref,
                            version=v,
                            state=states[v.entry_version_id],
                            created_at=created.get(v.entry_id, v.provenance.created_at),
                        )
                    )
        return out

    def _slug_sync(self, q: SlugQuery) -> list[SlugMatch]:
        out: list[SlugMatch] = []
        with self._read_txn():
            versions = self._load_versions_sync(None, self._slug_version_ids_sync(q.memory_ids, q.kind, q.slug))
            by_entry: dict[tuple[MemoryId, EntryId], list[EntryVersion]] = {}
            for v in versions:
                by_entry.setdefault((v.memory_id, v.entry_id), []).append(v)
            for (mid, eid), held in sorted(by_entry.items()):
                head = self._head_sync(mid)
                m = self._manifests.lookup(head.manifest_root, eid) if head is not None else None
                if m is None:
                    continue
                live = any(v.entry_version_id == m.entry_version_id for v in held)
                out.append(
                    SlugMatch(
                        memory_id=mid,
                        entry_id=eid,
                        entry_version_id=m.entry_version_id,
                        state=m.state,
                        live=live,
                        held_in_revision=max(v.created_in_revision for v in held),
                    )
                )
        return out

    def _live_slugs_checked_sync(self, memory_ids: Sequence[MemoryId]) -> list[LiveSlug]:
        out: list[LiveSlug] = []
        with self._read_txn():
            heads = {mid: self._head_sync(mid) for mid in memory_ids}
            for mid, eid, vid, kind, slug in self._live_slugs_sync(list(memory_ids)):
                head = heads.get(mid)
                m = self._manifests.lookup(head.manifest_root, eid) if head is not None else None
                if m is not None and m.state == "active" and m.entry_version_id == vid:
                    out.append(LiveSlug(mid, eid, kind, slug))
        return out

    def _links_sync(self, memory_ids: Sequence[MemoryId], targets: Sequence[EntryId]) -> list[IncomingLink]:
        out: list[IncomingLink] = []
        if not memory_ids or not targets:
            return out
        with self._read_txn():
            heads = {mid: self._head_sync(mid) for mid in memory_ids}
            wanted = set(targets)
            for v in self._load_versions_sync(None, self._linking_version_ids_sync(list(memory_ids), list(targets))):
                head = heads.get(v.memory_id)
                m = self._manifests.lookup(head.manifest_root, v.entry_id) if head is not None else None
                if head is None or m is None or m.state != "active" or m.entry_version_id != v.entry_version_id:
                    continue
                if any(r.target in wanted for r in v.content.relations):
                    out.append(IncomingLink(head.ref, v))
        return out

    def _archive_search_sync(self, q: ArchiveQuery) -> list[ArchiveMatch]:
        with self._read_txn():
            heads: dict[str, Revision] = {}
            for ref in q.memories:
                rev = self._revision_sync(ref.memory_id, ref.revision)
                if rev is None:
                    raise ArtifactNotFoundError(f"no revision {ref}")
                heads[ref.memory_id] = rev
            terms = query_terms(q.query)
            informative = informative_terms(terms)
            if not informative or not heads:
                return []
            required = fts_required_terms(terms)
            picked: list[tuple[EntryVersionId, EntryVersionId, ArtifactRef]] = []
            for mid, eid, vid, text in self._archive_candidates_sync(sorted(heads), informative, q.depth):
                if required > 1 and not fts_admits(terms, set(text.split())):
                    continue
                head = heads[mid]
                m = self._manifests.lookup(head.manifest_root, eid)
                # Only entries live at that Revision; their current version is the head search's business.
                if m is None or m.state != "active" or m.entry_version_id == vid:
                    continue
                picked.append((vid, m.entry_version_id, head.ref))
            loaded = {
                v.entry_version_id: v
                for v in self._load_versions_sync(None, sorted({x for p in picked for x in p[:2]}))
            }
            out: list[ArchiveMatch] = []
            for vid, current_vid, ref in picked:
                archived, current = loaded.get(vid), loaded.get(current_vid)
                if archived is None or current is None or archived.entry_id != current.entry_id:
                    continue
                if archived.created_in_revision > ref.revision:
                    continue  # superseded only after the Revision searched: not yet archived there
                if archived.content.content_hash != archived.entry_content_hash:
                    continue
                if content_matches(
                    current.content, kinds=q.kinds, tags=q.tags, important=q.important, mandatory=q.mandatory
                ):
                    out.append(ArchiveMatch(archived, current, ref))
            return out

    # ------------------------------------------------------------------ writes outside a Revision
    def _bind_sync(self, scope: str, memory_id: MemoryId, created_at: str) -> bool:
        with self._write_txn():
            if self._head_sync(memory_id) is None:
                raise ArtifactNotFoundError(f"no memory {memory_id}")
            for bound_scope, bound_memory, _ in self._scope_sync(None):
                if bound_scope == scope:
                    return bound_memory == memory_id
                if bound_memory == memory_id:
                    return False
            return self._bind_scope_sync(scope, memory_id, created_at)

    def _record_kinds_sync(self, kinds: tuple[str, ...] | None) -> tuple[str, ...] | None:
        with self._write_txn():
            recorded, policy = _decode_kinds(self._meta_sync("kinds"))
            if recorded:
                return policy
            # Trigger: the first service to write decides the policy of a store that has none yet.
            # Why: a closed kind set is fixed when a store is created; a store already holding Memories
            #      without a recorded set was created open.
            # Outcome: record the set (or "open") once; it never changes afterwards.
            chosen = None if self._heads_sync() else kinds
            self._set_meta_sync("kinds", json.dumps(None if chosen is None else sorted(chosen)))
            return None if chosen is None else tuple(sorted(chosen))

    # ------------------------------------------------------------------ schema, verify and rebuild
    def _records_check_sync(self) -> list[str]:
        """Archive projection damage: rows that are missing, extra, or whose text is wrong."""
        damage: list[str] = []
        expected: dict[str, EntryVersion] = {
            v.entry_version_id: v for v in self._load_versions_sync(None, self._superseded_version_ids_sync())
        }
        seen: set[str] = set()
        for mid, eid, vid, text in self._archive_rows_sync():
            seen.add(vid)
            v = expected.get(vid)
            if v is None:
                damage.append(f"archive projection has {vid} of {eid}, which has no successor")
            elif v.memory_id != mid or v.entry_id != eid or archive_text(v) != text:
                damage.append(f"archive projection row of {vid} does not match its version")
        for missing in sorted(set(expected) - seen):
            damage.append(f"archive projection is missing superseded version {missing} of {expected[missing].entry_id}")
        damage.extend(self._archive_fts_check_sync())
        return damage

    def _records_rebuild_sync(self) -> None:
        """Rebuild the archive projection from authority (inside the rebuild's write transaction)."""
        self._archive_clear_sync()
        for v in self._load_versions_sync(None, self._superseded_version_ids_sync()):
            if v.content.content_hash != v.entry_content_hash:
                raise IntegrityError(f"entry version {v.entry_version_id} does not match its content hash")
            self._archive_put_sync(v, archive_text(v))


def _decode_kinds(raw: str | None) -> KindPolicy:
    if raw is None:
        return KindPolicy(False, None)
    try:
        value = json.loads(raw)
    except ValueError as exc:
        raise IntegrityError(f"the store's kind policy is unreadable: {exc}") from exc
    if value is None:
        return KindPolicy(True, None)
    if not isinstance(value, list) or not all(isinstance(k, str) for k in value):
        raise IntegrityError("the store's kind policy is not a list of kinds")
    return KindPolicy(True, tuple(value))


__all__ = ["RecordsBackendMixin", "archive_text", "content_matches"]
