"""The record surface, above the engines: slug uniqueness inside the write, catalogues, slug lookup and aliases,
incoming links, archived-version search, scope binding and the kind policy.

A component of the store core over the shared row statements (``rows.py``, ``projection.py``). Aliases are not
stored anywhere: an entry's older versions already record
every slug it had, so "the old slug redirects to the entry" is read straight from authority.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Literal

from ...domain.analyzer import informative_terms, query_terms
from ...domain.errors import AlreadyExists, ArtifactNotFoundError, IntegrityError
from ...domain.ids import EntryId, EntryVersionId, MemoryId
from ...domain.model import ArtifactRef, Change, EntryVersion, Revision
from ...domain.plan import projection_text
from ...domain.records import Record
from ...domain.search import fts_admits, fts_required_terms, matched_share
from ...ports import (
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
    SlugMatch,
    SlugQuery,
)
from .parts import StoreParts

_BATCH = 500


def archive_text(version: EntryVersion) -> str:
    """What the archive projection indexes for a superseded version: the same text as the head projection."""
    return projection_text(version)


class RecordsPart:
    """Record-surface rules over the shared row statements."""

    def __init__(self, parts: StoreParts) -> None:
        self.p = parts
        self._manifests = parts.manifests

    # ------------------------------------------------------------------ inside every write
    def after_plan(
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
                (previous,) = self.p.rows.versions(memory_id, [c.from_entry_version_id])
                self.p.proj.put_archive(previous, archive_text(previous))
            if c.op in ("add", "revise") and c.to_entry_version_id is not None:
                version = new_versions[c.to_entry_version_id]
            elif c.op == "reactivate" and c.to_entry_version_id is not None:
                version = reactivated.get(c.to_entry_version_id)
            if version is not None and version.content.slug is not None:
                touched.add((version.content.kind, version.content.slug))
        for kind, slug in sorted(touched):
            holders = sorted(set(self.p.proj.slug_holders(memory_id, kind, slug)))
            if len(holders) > 1:
                raise AlreadyExists(
                    f"slug {slug!r} is already used by a live {kind} entry in {memory_id} "
                    f"({', '.join(holders)}); slugs are unique among live entries of one kind in a scope",
                    hint="choose another slug, rename the other entry (memstone rename), or forget it first",
                )

    # ------------------------------------------------------------------ reads
    def read_sync(self, query: object) -> object:
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
                with self.p.engine.read_txn():
                    return self.p.rows.revisions(mid, first, last)
            case MemoryVersionsQuery(memory_id=mid):
                with self.p.engine.read_txn():
                    ids = self.p.proj.memory_version_ids(mid)
                    return self._load_versions_sync(mid, ids)
            case ArchiveQuery():
                return self._archive_search_sync(query)
            case KindsQuery():
                with self.p.engine.read_txn():
                    return _decode_kinds(self.p.rows.meta("kinds"))
        raise AssertionError(f"not a records query: {query!r}")

    def _load_versions_sync(self, memory_id: MemoryId | None, ids: Sequence[str]) -> list[EntryVersion]:
        out: list[EntryVersion] = []
        for i in range(0, len(ids), _BATCH):
            out.extend(self.p.rows.versions(memory_id, ids[i : i + _BATCH]))
        return out

    def _catalogue_sync(self, q: CatalogueQuery) -> list[Record]:
        out: list[Record] = []
        with self.p.engine.read_txn():
            for ref in q.memories:
                rev = self.p.rows.revision(ref.memory_id, ref.revision)
                if rev is None:
                    raise ArtifactNotFoundError(f"no revision {ref}")
                head = self.p.rows.head(ref.memory_id)
                assert head is not None
                states: dict[str, Literal["active", "inactive"]] = {}
                if head.revision == rev.revision and not q.include_inactive:
                    # The head projection filters; the authoritative manifest has the last word on every row.
                    for eid, vid, content_hash in self.p.proj.catalogue_rows(rev.memory_id, q.filters):
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
                created = self.p.proj.first_created([v.entry_id for v in versions])
                for v in versions:
                    if v.content.content_hash != v.entry_content_hash:
                        continue  # damaged authority never reaches a caller; verify reports it
                    if not q.filters.passes(v.content):
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
        with self.p.engine.read_txn():
            versions = self._load_versions_sync(None, self.p.proj.slug_version_ids(q.memory_ids, q.kind, q.slug))
            by_entry: dict[tuple[MemoryId, EntryId], list[EntryVersion]] = {}
            for v in versions:
                by_entry.setdefault((v.memory_id, v.entry_id), []).append(v)
            for (mid, eid), held in sorted(by_entry.items()):
                head = self.p.rows.head(mid)
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
        with self.p.engine.read_txn():
            heads = {mid: self.p.rows.head(mid) for mid in memory_ids}
            for mid, eid, vid, kind, slug in self.p.proj.live_slugs(list(memory_ids)):
                head = heads.get(mid)
                m = self._manifests.lookup(head.manifest_root, eid) if head is not None else None
                if m is not None and m.state == "active" and m.entry_version_id == vid:
                    out.append(LiveSlug(mid, eid, kind, slug))
        return out

    def _links_sync(self, memory_ids: Sequence[MemoryId], targets: Sequence[EntryId]) -> list[IncomingLink]:
        out: list[IncomingLink] = []
        if not memory_ids or not targets:
            return out
        with self.p.engine.read_txn():
            heads = {mid: self.p.rows.head(mid) for mid in memory_ids}
            wanted = set(targets)
            for v in self._load_versions_sync(None, self.p.proj.linking_version_ids(list(memory_ids), list(targets))):
                head = heads.get(v.memory_id)
                m = self._manifests.lookup(head.manifest_root, v.entry_id) if head is not None else None
                if head is None or m is None or m.state != "active" or m.entry_version_id != v.entry_version_id:
                    continue
                if any(r.target in wanted for r in v.content.relations):
                    out.append(IncomingLink(head.ref, v))
        return out

    def _archive_search_sync(self, q: ArchiveQuery) -> list[ArchiveMatch]:
        with self.p.engine.read_txn():
            heads: dict[str, Revision] = {}
            for ref in q.memories:
                rev = self.p.rows.revision(ref.memory_id, ref.revision)
                if rev is None:
                    raise ArtifactNotFoundError(f"no revision {ref}")
                heads[ref.memory_id] = rev
            terms = query_terms(q.query)
            informative = informative_terms(terms)
            if not informative or not heads:
                return []
            required = fts_required_terms(terms)
            picked: list[tuple[EntryVersionId, EntryVersionId, ArtifactRef, float, float]] = []
            for mid, eid, vid, text, bm25 in self.p.engine.fts.archive_candidates(
                self.p.engine.conn, sorted(heads), informative, q.depth
            ):
                tokens = set(text.split())
                if required > 1 and not fts_admits(terms, tokens):
                    continue
                head = heads[mid]
                m = self._manifests.lookup(head.manifest_root, eid)
                # Only entries live at that Revision; their current version is the head search's business.
                if m is None or m.state != "active" or m.entry_version_id == vid:
                    continue
                picked.append((vid, m.entry_version_id, head.ref, bm25, matched_share(informative, tokens)))
            loaded = {
                v.entry_version_id: v
                for v in self._load_versions_sync(None, sorted({x for p in picked for x in p[:2]}))
            }
            out: list[ArchiveMatch] = []
            for vid, current_vid, ref, bm25, share in picked:
                archived, current = loaded.get(vid), loaded.get(current_vid)
                if archived is None or current is None or archived.entry_id != current.entry_id:
                    continue
                if archived.created_in_revision > ref.revision:
                    continue  # superseded only after the Revision searched: not yet archived there
                if archived.content.content_hash != archived.entry_content_hash:
                    continue
                if q.filters.passes(current.content):
                    out.append(ArchiveMatch(archived, current, ref, bm25, share))
            return out

    # ------------------------------------------------------------------ writes outside a Revision
    def bind_sync(self, scope: str, memory_id: MemoryId, created_at: str) -> bool:
        with self.p.engine.write_txn():
            self.p.engine.lock(f"scope:{scope}")
            self.p.engine.lock(f"memory:{memory_id}")
            if self.p.rows.head(memory_id) is None:
                raise ArtifactNotFoundError(f"no memory {memory_id}")
            taken = self.p.rows.scopes(scope)
            if taken:
                return taken[0].memory_id == memory_id
            if self.p.rows.scopes_of([memory_id]):
                return False
            return self.p.rows.bind_scope(scope, memory_id, created_at)

    def record_kinds_sync(self, kinds: tuple[str, ...] | None) -> tuple[str, ...] | None:
        with self.p.engine.write_txn():
            self.p.engine.lock("meta:kinds")
            recorded, policy = _decode_kinds(self.p.rows.meta("kinds"))
            if recorded:
                return policy
            # Trigger: the first service to write decides the policy of a store that has none yet.
            # Why: a closed kind set is fixed when a store is created; a store already holding Memories
            #      without a recorded set was created open.
            # Outcome: record the set (or "open") once; it never changes afterwards.
            chosen = None if self.p.rows.heads() else kinds
            self.p.rows.set_meta("kinds", json.dumps(None if chosen is None else sorted(chosen)))
            return None if chosen is None else tuple(sorted(chosen))

    # ------------------------------------------------------------------ schema, verify and rebuild
    def check(self) -> list[str]:
        """Archive projection damage: rows that are missing, extra, or whose text is wrong."""
        damage: list[str] = []
        expected: dict[str, EntryVersion] = {
            v.entry_version_id: v for v in self._load_versions_sync(None, self.p.proj.superseded_version_ids())
        }
        seen: set[str] = set()
        for mid, eid, vid, text, *_ in self.p.proj.archive_rows():
            seen.add(vid)
            v = expected.get(vid)
            if v is None:
                damage.append(f"archive projection has {vid} of {eid}, which has no successor")
            elif v.memory_id != mid or v.entry_id != eid or archive_text(v) != text:
                damage.append(f"archive projection row of {vid} does not match its version")
        for missing in sorted(set(expected) - seen):
            damage.append(f"archive projection is missing superseded version {missing} of {expected[missing].entry_id}")
        return damage

    def rebuild(self) -> None:
        """Fill the archive projection from authority (inside a rebuild or migration, on an empty projection)."""
        for v in self._load_versions_sync(None, self.p.proj.superseded_version_ids()):
            if v.content.content_hash != v.entry_content_hash:
                raise IntegrityError(f"entry version {v.entry_version_id} does not match its content hash")
            self.p.proj.put_archive(v, archive_text(v))


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


__all__ = ["RecordsPart", "archive_text"]
