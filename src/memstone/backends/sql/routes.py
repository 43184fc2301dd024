"""Embedding profiles per organization (Xema "Embeddings"): which profile, and which vector table, serves a Memory.

The store's recorded profile stays the default. An organization may record its own profile (a ``store_meta`` row
keyed ``embedding_profile@org:<org>``, written only by that org's model migration); the Memories bound to its
scopes (``memstone://orgs/<org>`` and its projects) then keep their vectors in the engine's table of that profile's
dimension (the codec's ``shard(dimension)``), and every write, backfill and search of them uses that profile.
Memories bound to no scope or to a user scope, and the Memories of an org with no profile of its own, use the
store's profile and its table. The rule that maps a scope to its org is the domain's (``org_of_scope``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import NamedTuple

from ...domain.errors import CapabilityNotSupportedError, InvalidInput
from ...domain.ids import MemoryId
from ...domain.scopes import org_of_scope
from ...ports import EmbeddingProfile, WritePlan
from .engine import VectorCodec, snapshot_of
from .parts import StoreParts
from .rows import ORG_KEY, loads_json


def profile_from_json(raw: str) -> EmbeddingProfile:
    data = loads_json(raw)
    assert isinstance(data, dict)
    return EmbeddingProfile(
        profile_id=data["profile_id"],
        model=data["model"],
        dimension=int(data["dimension"]),
        distance=data["distance"],
        normalization=data["normalization"],
    )


class WriteStart(NamedTuple):
    """What a write reads in its first statement, after its locks (``Routes.write_start``)."""

    marker: str | None  # the model migration's marker (``store_meta`` key ``migration``)
    profiles: dict[str, EmbeddingProfile]  # every org's own profile
    head: int | None  # the Memory's head revision (None: no head yet)
    tables: bool | None  # whether the store's vector table exists (None: the engine cannot say it in SQL)


class Route(NamedTuple):
    """Where a Memory's vectors live: the profile they must have (None: the store has none), the codec of their
    table, and the org whose own profile it is (None: the store's default)."""

    profile: EmbeddingProfile | None
    codec: VectorCodec | None
    org: str | None


def sharded(codec: VectorCodec | None, dimension: int) -> VectorCodec:
    """The codec of the engine's vector table for ``dimension`` (refused by an engine without per-org tables)."""
    shard = getattr(codec, "shard", None)
    if codec is None or shard is None:
        raise CapabilityNotSupportedError(
            "org-embedding", "this engine cannot keep an embedding profile per organization", hint="use PostgreSQL"
        )
    found: VectorCodec = shard(dimension)
    return found


class Routes:
    """Reads of the per-org profiles and the route of each Memory, inside the caller's transaction."""

    def __init__(self, parts: StoreParts) -> None:
        self.p = parts
        # The store-wide part of the last write's start (no migration, no org profile; whether the vector table
        # existed), on an engine that can guard it (``defer_guard``): a hint for the next write, never trusted.
        self.hint: WriteStart | None = None

    def org_profiles(self) -> dict[str, EmbeddingProfile]:
        """Every organization's own profile (none: every Memory uses the store's)."""
        if snapshot_of(self.p.engine.conn) is not None:  # a read that keeps its reads: with the routing rows
            meta = self.p.rows.routing_meta()
            return {k[len(ORG_KEY) :]: profile_from_json(v) for k, v in meta.items() if k.startswith(ORG_KEY)}
        return self._read("", None).profiles

    def write_start(self, memory_id: MemoryId) -> WriteStart:
        """A write's first statement, after its locks (so none of it is stale): the migration marker, every org's
        own profile, the head revision of ``memory_id`` and, where the engine's codec says it in SQL
        (``exists_sql``), whether the store's vector table exists. One round trip on a server engine."""
        start = self._read("migration", memory_id)
        guarded = getattr(self.p.engine.conn, "defer_guard", None) is not None
        self.hint = start._replace(head=None) if guarded and start.marker is None and not start.profiles else None
        return start

    def guarded_start(self, plan: WritePlan) -> WriteStart | None:
        """A write's start without a round trip of its own (None: read it, ``write_start``): the last write's store-
        wide start (``hint``) and the plan's base as the head, when this process holds that Revision. Queued after
        the locks, a guard fails the transaction with ``StaleStart`` (nothing written; the caller reads the start
        and writes again) unless the hint still holds: no migration marker, no org profile, the vector table as it
        was, and no version of the Memory with one of the hashes the write must not duplicate (``unless_live``:
        the read decides whether such a version is live). The head is not guarded here: the head's compare-and-swap
        decides it, as after a read."""
        hint, guard = self.hint, getattr(self.p.engine.conn, "defer_guard", None)
        memory_id, base = plan.memory_id, plan.base_revision
        if hint is None or guard is None or base == 0 or plan.bind_scope is not None:
            return None
        if not self.p.rows.holds(memory_id, base):
            return None
        sql = "NOT EXISTS (SELECT 1 FROM store_meta WHERE key = ? OR substr(key, 1, ?) = ?)"
        args: list[object] = ["migration", len(ORG_KEY), ORG_KEY]
        tables = getattr(self.p.engine.vectors, "exists_sql", None)
        if tables is not None and hint.tables is not None:
            sql += f" AND ({tables}) = ?"
            args.append(hint.tables)
        if plan.unless_live:
            marks = self.p.engine.dialect.marks(len(plan.unless_live))
            sql += (
                " AND NOT EXISTS (SELECT 1 FROM memory_entry_versions WHERE memory_artifact_id = ? "
                f"AND entry_content_hash IN ({marks}))"
            )
            args += [memory_id, *plan.unless_live]
        guard(sql, args)
        return hint._replace(head=base)

    def _read(self, key: str, memory_id: MemoryId | None) -> WriteStart:
        """The ``store_meta`` value of ``key`` and every org's own profile (with ``memory_id``: its head revision
        and the codec's ``exists_sql``), in one statement."""
        tables = getattr(self.p.engine.vectors, "exists_sql", None) if memory_id is not None else None
        rows = self.p.rows.meta_rows((key,), memory_id, tables)
        found = [(str(k), str(v)) for _, _, k, v in rows if k is not None]  # no meta row: one row of NULLs
        return WriteStart(
            marker=next((v for k, v in found if k == key), None),
            profiles={k[len(ORG_KEY) :]: profile_from_json(v) for k, v in found if k != key},
            head=None if rows[0][0] is None else int(rows[0][0]),
            tables=None if tables is None else bool(rows[0][1]),
        )

    def org_of(self, memory_id: MemoryId, bind_scope: str | None = None) -> str | None:
        if bind_scope is not None:
            return org_of_scope(bind_scope)
        found = self.p.rows.q("SELECT scope FROM scope_bindings WHERE memory_id = ?", (memory_id,))
        return org_of_scope(str(found[0][0])) if found else None

    def members(self, org: str) -> list[MemoryId]:
        """The Memories bound to the scopes of ``org``."""
        return [b.memory_id for b in self.p.rows.scopes(None) if org_of_scope(b.scope) == org]

    def routed(self, profiles: Mapping[str, EmbeddingProfile] | None = None) -> dict[MemoryId, str]:
        """The Memories whose org has its own profile, with that org."""
        profiles = self.org_profiles() if profiles is None else profiles
        if not profiles:
            return {}
        out: dict[MemoryId, str] = {}
        for b in self.p.rows.scopes(None):
            org = org_of_scope(b.scope)
            if org is not None and org in profiles:
                out[b.memory_id] = org
        return out

    def default(self) -> Route:
        return Route(self.p.vector_profile or self.p.recorded_profile, self.p.engine.vectors, None)

    def of_org(self, org: str, profile: EmbeddingProfile) -> Route:
        return Route(profile, sharded(self.p.engine.vectors, profile.dimension), org)

    def route(
        self,
        memory_id: MemoryId,
        bind_scope: str | None = None,
        profiles: Mapping[str, EmbeddingProfile] | None = None,
    ) -> Route:
        profiles = self.org_profiles() if profiles is None else profiles
        if profiles:
            org = self.org_of(memory_id, bind_scope)
            if org is not None and org in profiles:
                return self.of_org(org, profiles[org])
        return self.default()

    def one_route(self, memory_ids: Iterable[str]) -> Route:
        """The one route of the Memories a search selects (refused when they span profiles)."""
        profiles = self.org_profiles()
        routes = {self.route(MemoryId(m), profiles=profiles) for m in memory_ids}
        if len(routes) > 1:
            raise InvalidInput(
                "the selected Memories use different embedding profiles (their organizations chose their own)",
                hint="search one organization's Memories at a time, or use mode='fts'",
            )
        return routes.pop() if routes else self.default()

    def codecs(self) -> list[VectorCodec]:
        """The codec of every vector table in use: the store's and one per dimension of an org profile."""
        codec = self.p.engine.vectors
        if codec is None:
            return []
        dims = sorted({p.dimension for p in self.org_profiles().values()})
        return [codec, *(sharded(codec, d) for d in dims)]


__all__ = ["ORG_KEY", "Route", "Routes", "WriteStart", "profile_from_json", "sharded"]
