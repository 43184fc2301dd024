"""Verify and rebuild, written once: authority is checked against its hashes and chains, projections against
authority; a rebuild refills every projection from authority alone (never touching authoritative rows)."""

from __future__ import annotations

from dataclasses import replace

from ...domain.canonical import REVISION_CONTENT_TAG, canonical_json, tagged_sha256
from ...domain.errors import IntegrityError
from ...domain.ids import EntryId, MemoryId
from ...domain.model import EntryVersion, Revision, VerifyReport, revision_content
from ...domain.plan import projection_text
from .engine import VectorMeta
from .parts import StoreParts
from .records import RecordsPart
from .routes import Route
from .vectors import VectorPart


class Maintenance:
    def __init__(self, parts: StoreParts, vectors: VectorPart, records: RecordsPart) -> None:
        self.p = parts
        self.vectors = vectors
        self.records = records

    def _authority(self) -> tuple[VerifyReport, list[Revision]]:
        damage: list[str] = []
        revisions = 0
        node_seen: set[str] = set()
        version_hash: dict[str, tuple[str, EntryId, MemoryId, bool]] = {}
        versions = 0
        purged = self.p.purged_hashes()
        for v in self.p.rows.iter_versions():
            versions += 1
            good = v.content.content_hash == v.entry_content_hash
            if v.content.purged_hash is not None and purged.pop(v.entry_version_id, None) != v.entry_content_hash:
                good = False  # a purge mark without its tombstone (issue 12: purge)
            if not good:
                damage.append(f"entry version {v.entry_version_id} ({v.entry_id}) does not match its content hash")
            version_hash[v.entry_version_id] = (v.entry_content_hash, v.entry_id, v.memory_id, good)
            if v.previous_version_id is not None:
                prev = version_hash.get(v.previous_version_id)
                if prev is None or prev[1] != v.entry_id or prev[2] != v.memory_id:
                    damage.append(f"entry version {v.entry_version_id} has a broken predecessor link")
        damage.extend(f"tombstone of {vid} names a version that was not purged" for vid in sorted(purged))
        chains: dict[str, int] = {}
        for rev, stored in self.p.rows.raw_revisions():
            revisions += 1
            expected_content = canonical_json(revision_content(rev.manifest_root, rev.changes))
            if stored != expected_content:
                damage.append(f"revision {rev.ref} content does not match its stored fields")
            if tagged_sha256(REVISION_CONTENT_TAG, stored.encode("utf-8")) != rev.content_hash:
                damage.append(f"revision {rev.ref} does not match its content hash")
            last = chains.get(rev.memory_id, 0)
            if rev.revision != last + 1:
                damage.append(f"revision chain of {rev.memory_id} jumps from {last} to {rev.revision}")
            chains[rev.memory_id] = rev.revision
            try:
                for h in self.p.manifests.iter_node_hashes(rev.manifest_root):
                    if h in node_seen:
                        continue
                    node_seen.add(h)
                    node = self.p.manifests.node(h)
                    for e in node.entries or ():
                        known = version_hash.get(e.entry_version_id)
                        if known is None:
                            damage.append(f"revision {rev.ref} names missing version {e.entry_version_id}")
                        elif known[0] != e.entry_content_hash or known[1] != e.entry_id or known[2] != rev.memory_id:
                            damage.append(f"revision {rev.ref} manifest disagrees with version {e.entry_version_id}")
            except (IntegrityError, KeyError, ValueError) as exc:
                damage.append(f"revision {rev.ref} manifest is unreadable: {exc}")
        heads = self.p.rows.heads()
        for head in heads:
            if chains.get(head.memory_id) != head.revision:
                damage.append(f"head of {head.memory_id} is not its last revision")
        report = VerifyReport(
            revisions_checked=revisions,
            versions_checked=versions,
            nodes_checked=len(node_seen),
            authority_damage=tuple(damage),
        )
        return report, heads

    def _expected(self, heads: list[Revision]) -> dict[tuple[str, str], tuple[str, str]]:
        expected: dict[tuple[str, str], tuple[str, str]] = {}  # (memory, entry) -> (version, hash)
        for head in heads:
            active = [e for e in self.p.manifests.iter_entries(head.manifest_root) if e.state == "active"]
            ids = [e.entry_version_id for e in active]
            for i in range(0, len(ids), 500):
                for v in self.p.rows.versions(head.memory_id, ids[i : i + 500]):
                    expected[(head.memory_id, v.entry_id)] = (v.entry_version_id, v.entry_content_hash)
        return expected

    def verify_sync(self) -> VerifyReport:
        with self.p.engine.read_txn():
            report, heads = self._authority()
            damage: list[str] = []
            expected_versions = self._expected(heads)
            versions_cache: dict[str, EntryVersion] = {}
            seen: set[tuple[str, str]] = set()  # (memory, entry)
            rows = 0
            for row in self.p.proj.head_rows(None):
                rows += 1
                key: tuple[str, str] = (row.memory_id, row.entry_id)
                seen.add(key)
                want = expected_versions.get(key)
                if want is None:
                    damage.append(f"projection has {row.entry_id} of {row.memory_id}, which is not active at the head")
                    continue
                if (row.entry_version_id, row.entry_content_hash) != want:
                    damage.append(f"projection of {row.entry_id} points at the wrong version or hash")
                    continue
                v = (
                    versions_cache.get(row.entry_version_id)
                    or self.p.rows.versions(row.memory_id, [row.entry_version_id])[0]
                )
                if row.searchable_text != projection_text(v):
                    damage.append(f"projection text of {row.entry_id} does not match its version")
            for key in sorted(set(expected_versions) - seen):
                damage.append(f"projection is missing active entry {key[1]} of {key[0]}")
            damage.extend(self.p.engine.fts.check(self.p.engine.conn))
            damage.extend(self._vector_check(heads))
            damage.extend(self.records.check())
        return replace(report, projections_checked=rows, projection_damage=tuple(damage))

    def _vector_check(self, heads: list[Revision]) -> list[str]:
        """Stale, orphaned or mis-hashed vectors are projection damage (missing ones only make it incomplete)."""
        return [
            f"vector window {row.chunk} of {row.entry_id} is stale, orphaned or mis-hashed"
            for row, _ in self._invalid_vectors()
        ]

    def _invalid_vectors(self) -> list[tuple[VectorMeta, Route]]:
        """Vector rows that do not hold their Memory's current version under its route's profile."""
        routes = self.vectors.routes
        default = self.p.vector_profile or self.vectors.recorded()
        profiles = routes.org_profiles()
        if default is None and not profiles:
            return []
        routed = routes.routed(profiles)
        out = []
        for row in list(self.p.proj.vector_rows(routes.codecs())):
            org = routed.get(row.memory_id)
            route = routes.of_org(org, profiles[org]) if org is not None else routes.default()
            want = route.profile if org is not None else default
            if want is None or not self.vectors.row_valid(row, want):
                out.append((row, route))
        return out

    def rebuild_sync(self) -> VerifyReport:
        with self.p.engine.write_txn():
            self.p.engine.lock("meta:migration")  # every write takes it shared: a rebuild runs alone
            report, heads = self._authority()
            if report.authority_damage:
                raise IntegrityError(
                    "authoritative data is damaged; projections were not rebuilt: "
                    + "; ".join(report.authority_damage[:5]),
                    hint="restore the database from a backup; memstone never rewrites authoritative rows",
                )
            self.p.engine.fts.clear(self.p.engine.conn)
            for head in heads:
                active = [e for e in self.p.manifests.iter_entries(head.manifest_root) if e.state == "active"]
                ids = [e.entry_version_id for e in active]
                for i in range(0, len(ids), 500):
                    for v in self.p.rows.versions(head.memory_id, ids[i : i + 500]):
                        self.p.proj.put_head(head.revision, v, projection_text(v))
            if self.p.vector_profile or self.vectors.recorded() or self.vectors.routes.org_profiles():
                for row, route in self._invalid_vectors():
                    self.vectors.drop(row.memory_id, row.entry_id, route)  # backfill re-embeds it
                self.vectors.bump_generation()
            self.records.rebuild()
        return self.verify_sync()


__all__ = ["Maintenance"]
