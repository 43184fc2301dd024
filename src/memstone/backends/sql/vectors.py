"""The vector projection's rules, above the engine's codec: the fixed profile, validation, completeness, backfill
and the vector channel's candidates (windows collapsed per entry, filtered by the head projection)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from ...domain.canonical import EMBEDDING_CONTENT_TAG, canonical_bytes, canonical_json, tagged_sha256
from ...domain.errors import CapabilityNotSupportedError, InvalidInput, ProfileMismatchError
from ...domain.filters import EntryFilter
from ...domain.ids import EntryId, EntryVersionId, MemoryId
from ...domain.model import EntryVersion, Revision
from ...domain.plan import check_version_hash
from ...domain.rules import check_vector
from ...ports import EmbeddingProfile, SearchRequest
from .engine import Nearest, VectorMeta
from .parts import StoreParts
from .routes import ORG_KEY, Route, Routes, profile_from_json


def no_vector_projection() -> CapabilityNotSupportedError:
    """The refusal of a vector operation on a store whose engine has no vector projection, with the way out."""
    return CapabilityNotSupportedError(
        "vector",
        "this backend has no vector projection",
        hint="open the store without a model (--embedding none: full-text search works without vectors), or give "
        "the database its vector extension (PostgreSQL: a superuser runs CREATE EXTENSION vector in it) and reopen",
    )


@dataclass(frozen=True, slots=True)
class VectorCandidate:
    memory_id: MemoryId
    entry_id: EntryId
    entry_version_id: EntryVersionId
    distance: float


HeadMatches = Callable[[VectorCandidate, EntryFilter], bool]


def window_depth(depth: int) -> int:
    """Vector windows fetched for ``depth`` entry candidates (an entry may have several windows)."""
    return min(4096, depth * 3)


class VectorPart:
    def __init__(self, parts: StoreParts, head_matches: HeadMatches) -> None:
        self.p = parts
        self._head_matches = head_matches
        self.routes = Routes(parts)

    # ---------------------------------------------------------------- the profile
    def recorded(self) -> EmbeddingProfile | None:
        """The embedding profile recorded in the store, if any."""
        raw = self.p.rows.meta("embedding_profile")
        return None if raw is None else profile_from_json(raw)

    def record(self, profile: EmbeddingProfile) -> None:
        """Create the vector tables for ``profile`` and record it (configuration or the migration's swap)."""
        codec = self.p.engine.vectors
        if codec is None:
            raise no_vector_projection()
        self.p.engine.lock("meta:embedding_profile")
        codec.create(self.p.engine.conn, profile.dimension)
        self.p.rows.set_meta("embedding_profile", canonical_json(profile.canonical()))

    def configure_sync(self, profile: EmbeddingProfile | None, record: bool) -> EmbeddingProfile | None:
        p = self.p
        with p.engine.read_txn():
            recorded = self.recorded()
        if profile is None:
            p.vector_profile = None
            return recorded
        if recorded is None:
            if not record:
                p.vector_profile = None
                return None
            if p.engine.vectors is None:
                raise no_vector_projection()
            with p.engine.write_txn():
                p.engine.lock("meta:embedding_profile")
                recorded = self.recorded()
                if recorded is None:
                    self.record(profile)
                    recorded = profile
            p.recorded_profile = recorded  # caches change only after COMMIT
        if recorded.canonical() != profile.canonical():
            raise ProfileMismatchError(
                f"this store's embedding profile is {recorded.profile_id} ({recorded.model}, "
                f"{recorded.dimension}-d), not {profile.profile_id} ({profile.model}, {profile.dimension}-d)",
                hint=f"open it with its own model, or migrate: memstone reembed --profile {profile.profile_id}",
            )
        p.vector_profile = recorded
        return recorded

    def moved(self) -> tuple[EmbeddingProfile | None] | None:
        """``(recorded,)`` when the store's recorded profile is no longer the one this backend writes, else None."""
        if self.p.vector_profile is None:
            return None
        recorded = self.recorded()
        if recorded is not None and recorded.canonical() == self.p.vector_profile.canonical():
            return None
        return (recorded,)

    def adopt_moved(self, moved_to: tuple[EmbeddingProfile | None] | None) -> None:
        self.p.recorded_profile = moved_to[0] if moved_to else None
        self.p.vector_profile = None  # this process's model is not the store's any more: no vectors from it
        self.p.complete_cache.clear()

    # ---------------------------------------------------------------- storing
    def embedding_hash(self, entry_content_hash: str, profile: EmbeddingProfile | None = None) -> str:
        profile = profile or self.p.vector_profile
        assert profile is not None
        payload = canonical_bytes(profile.canonical()) + b"\0" + entry_content_hash.encode("ascii")
        return tagged_sha256(EMBEDDING_CONTENT_TAG, payload)

    def store(self, version: EntryVersion, vectors: tuple[tuple[float, ...], ...], route: Route | None = None) -> None:
        """Validate vectors against the route's profile (the store's by default), inside the transaction, and store
        them in the route's table."""
        profile = route.profile if route is not None else self.p.vector_profile
        codec = route.codec if route is not None else None
        assert profile is not None
        if not vectors:
            raise InvalidInput("an entry's vector projection needs at least one vector")
        for vec in vectors:
            check_vector(vec, dimension=profile.dimension)
        for chunk, vec in enumerate(vectors):
            meta = VectorMeta(
                memory_id=version.memory_id,
                entry_id=version.entry_id,
                entry_version_id=version.entry_version_id,
                chunk=chunk,
                chunk_count=len(vectors),
                entry_content_hash=version.entry_content_hash,
                embedding_content_hash=self.embedding_hash(version.entry_content_hash, profile),
                profile_id=profile.profile_id,
            )
            self.p.proj.put_vector(meta, vec, codec)

    def drop(
        self, memory_id: MemoryId, entry_id: EntryId | None, route: Route | None = None, tables: bool | None = None
    ) -> None:
        """Delete an entry's vectors (every entry's with ``entry_id=None``) from the route's table; ``tables``:
        whether the store's vector table exists, as this transaction already read it (None: ask the engine)."""
        if route is not None and route.org is not None:
            self.p.proj.drop_vectors(memory_id, entry_id, route.codec)
            return
        if self.p.vector_profile is None and not (self.p.proj.vector_tables() if tables is None else tables):
            return
        self.p.proj.drop_vectors(memory_id, entry_id)

    def bound(self, memory_id: MemoryId, scope: str) -> None:
        """After a bind, in its transaction: a Memory that joins an org with its own profile leaves the store's
        table (backfill embeds it with the org's model)."""
        if self.routes.route(memory_id, scope).org is not None:
            self.drop(memory_id, None)
            self.bump_generation()

    def check_route(self, route: Route, given: EmbeddingProfile | None) -> None:
        """Refuse vectors of ``given`` for a Memory whose org records another profile (nothing is stored)."""
        expected = route.profile
        if expected is not None and given is not None and expected.canonical() == given.canonical():
            return
        whose = f"organization {route.org}'s" if route.org is not None else "the store's"
        raise ProfileMismatchError(
            f"vectors of embedding profile {given.profile_id if given else 'none'} cannot be stored for this "
            f"Memory: {whose} profile is {expected.profile_id if expected else 'none'}",
            hint="embed with that profile's model (a service does so by itself once it sees the org's profile), or "
            f"migrate the org: memstone reembed --org {route.org or 'ORG'} --profile NAME",
        )

    def record_org(self, org: str, profile: EmbeddingProfile) -> Route:
        """Create the table of ``profile``'s dimension and record it as ``org``'s own (an org's model migration)."""
        route = self.routes.of_org(org, profile)
        assert route.codec is not None
        self.p.engine.lock("meta:embedding_profile")
        route.codec.create(self.p.engine.conn, profile.dimension)
        self.p.rows.set_meta(ORG_KEY + org, canonical_json(profile.canonical()))
        return route

    def generation(self) -> str:
        """A token that changes whenever vectors change outside ordinary writes (backfill, migration, rebuild)."""
        return self.p.rows.meta("vector_generation") or "0"

    def bump_generation(self) -> None:
        self.p.engine.lock("meta:vector_generation")
        self.p.rows.set_meta("vector_generation", str(int(self.generation()) + 1))

    def stored_sync(
        self, version_ids: Sequence[EntryVersionId], org: str | None = None
    ) -> dict[EntryVersionId, tuple[tuple[float, ...], ...]] | None:
        """The stored vectors (every chunk) of these versions under the store's recorded profile (``org``: under
        that organization's own profile, from its table), for ``memstone copy``; None when the engine cannot read
        its vectors back."""
        p = self.p
        out: dict[EntryVersionId, tuple[tuple[float, ...], ...]] = {}
        with p.engine.read_txn():
            profiles = self.routes.org_profiles() if org is not None else {}
            route = self.routes.of_org(org, profiles[org]) if org in profiles else self.routes.default()
            codec, profile = route.codec, route.profile if route.org is not None else p.recorded_profile
            read = getattr(codec, "read", None)
            if codec is None or profile is None or read is None:
                return None
            conn = p.engine.conn
            if not version_ids or not codec.exists(conn):
                return out
            rows = conn.q(
                "SELECT vector_rowid, entry_version_id, chunk, chunk_count FROM memory_entry_vector_metadata "
                f"WHERE profile_id = ? AND entry_version_id IN ({p.engine.dialect.marks(len(version_ids))}) "
                "ORDER BY entry_version_id, chunk",
                [profile.profile_id, *version_ids],
            )
            found: dict[int, tuple[float, ...]] = read(conn, [int(r[0]) for r in rows])
        chunks: dict[str, list[tuple[float, ...]]] = {}
        counts: dict[str, int] = {}
        for rowid, vid, _chunk, count in rows:
            if int(rowid) in found:
                chunks.setdefault(vid, []).append(found[int(rowid)])
                counts[vid] = int(count)
        for vid, vectors in chunks.items():
            if len(vectors) == counts[vid]:  # only whole projections travel
                out[EntryVersionId(vid)] = tuple(vectors)
        return out

    # ---------------------------------------------------------------- completeness and backfill
    def complete(self, memory_id: MemoryId, profiles: Mapping[str, EmbeddingProfile] | None = None) -> bool:
        """Whether every active head entry has a vector projection for its route's profile (cached by head)."""
        p = self.p
        route = self.routes.route(memory_id, profiles=profiles)
        profile = route.profile if route.org is not None else p.vector_profile
        if profile is None:
            return False
        head = p.rows.head(memory_id)
        if head is None:
            return False
        key = (memory_id, head.revision)
        generation = self.generation()
        if generation != p.complete_generation:
            p.complete_cache.clear()
            p.complete_generation = generation
        cached = p.complete_cache.get(key)
        if cached is None:
            cached = not p.proj.incomplete(memory_id, profile.profile_id, 1, route.codec)
            if len(p.complete_cache) > 4096:
                p.complete_cache.clear()
            p.complete_cache[key] = cached
        return cached

    def _selection(self, org: str | None, memory_id: MemoryId | None = None) -> tuple[list[Revision], Route]:
        """The heads of ``org``'s Memories (None: of the Memories on the store's profile), only ``memory_id``'s
        when given, and their route."""
        p = self.p
        profiles = self.routes.org_profiles()
        heads = [h for h in p.rows.heads() if memory_id is None or h.memory_id == memory_id]
        if org is not None:
            members = set(self.routes.members(org))
            route = self.routes.of_org(org, profiles[org]) if org in profiles else self.routes.default()
            return [h for h in heads if h.memory_id in members], route
        routed = self.routes.routed(profiles)
        return [h for h in heads if h.memory_id not in routed], self.routes.default()

    def missing_sync(self, limit: int, org: str | None = None, memory_id: MemoryId | None = None) -> list[EntryVersion]:
        p = self.p
        out: list[EntryVersion] = []
        with p.engine.read_txn():
            heads, route = self._selection(org, memory_id)
            profile = route.profile if route.org is not None else p.vector_profile
            if profile is None:
                raise CapabilityNotSupportedError("vector", "no embedding profile is configured for this store")
            for head in heads:
                rows = p.proj.incomplete(head.memory_id, profile.profile_id, limit - len(out), route.codec)
                if rows:
                    out.extend(p.rows.versions(head.memory_id, [r.entry_version_id for r in rows]))
                if len(out) >= limit:
                    break
        return out

    def backlog_sync(self, org: str | None = None, memory_id: MemoryId | None = None) -> int:
        p = self.p
        with p.engine.read_txn():
            heads, route = self._selection(org, memory_id)
            profile = route.profile if route.org is not None else p.vector_profile
            if profile is None:
                return 0
            return sum(len(p.proj.incomplete(h.memory_id, profile.profile_id, 10**9, route.codec)) for h in heads)

    def put_sync(
        self,
        batch: Mapping[EntryVersionId, tuple[tuple[float, ...], ...]],
        check: Callable[[], None],
        profile: EmbeddingProfile | None = None,
    ) -> int:
        """Store vectors of ``profile`` (None: the store's) for entry versions that are still current and active;
        returns how many were stored. Vectors for a Memory whose route has another profile refuse the batch."""
        p = self.p
        stored = 0
        with p.engine.write_txn():
            p.engine.lock("meta:migration", shared=True)
            check()
            profiles = self.routes.org_profiles()
            for vid, vectors in sorted(batch.items()):
                v = self.current(vid)
                if v is None:
                    continue  # superseded while it was being embedded: never write a stale vector
                route = self.routes.route(v.memory_id, profiles=profiles)
                if route.org is not None or profile is not None:
                    self.check_route(route, profile or p.vector_profile)
                self.drop(v.memory_id, v.entry_id, route)
                self.store(v, vectors, route if route.org is not None else None)
                stored += 1
            self.bump_generation()
        return stored

    def current(self, vid: EntryVersionId) -> EntryVersion | None:
        """Inside a write transaction: the version if it is the current version of an active entry and not purged
        (the only versions a vector is stored or staged for), locking its Memory; else None."""
        p = self.p
        found = p.rows.versions(None, [vid])
        if not found:
            return None
        v = found[0]
        p.engine.lock(f"memory:{v.memory_id}")
        head = p.rows.head(v.memory_id)
        m = p.manifests.lookup(head.manifest_root, v.entry_id) if head else None
        if m is None or m.state != "active" or m.entry_version_id != vid or v.content.purged_hash is not None:
            return None
        check_version_hash(v)
        return v

    # ---------------------------------------------------------------- the vector channel
    def search_route(
        self, memory_ids: Sequence[str], vector: tuple[float, ...] | None, given: EmbeddingProfile | None = None
    ) -> Route:
        """The one route of the searched Memories, with the query vector (of the ``given`` model's profile) checked
        against its profile (``vector`` None: still being computed; ``check_query`` checks it when it comes)."""
        route = self.routes.one_route(memory_ids)
        if given is not None or route.org is not None:
            self.check_route(route, given or self.p.vector_profile)
        profile = self._search_profile(route)
        if vector is not None:
            check_vector(vector, dimension=profile.dimension)
        return route

    def check_query(self, route: Route, vector: tuple[float, ...]) -> None:
        """Refuse a query vector that is not of the dimension of ``route``'s profile."""
        check_vector(vector, dimension=self._search_profile(route).dimension)

    def _search_profile(self, route: Route) -> EmbeddingProfile:
        profile = route.profile if route.org is not None else self.p.vector_profile
        if profile is None:
            raise CapabilityNotSupportedError("vector", "no embedding profile is configured for this store")
        return profile

    def share(self) -> None:
        """Before a hybrid search's first statement: let the engine's codec prepare a scan beside the FTS statement
        (an optional codec method ``share(conn)``; PostgreSQL exports the read transaction's snapshot)."""
        share = getattr(self.p.engine.vectors, "share", None)
        if share is not None:
            share(self.p.engine.conn)

    def prefetch(self, memory_ids: Sequence[str], vector: tuple[float, ...], k: int) -> None:
        """Before a vector search's first statement: let the codec send its nearest-neighbour statement along with it
        (an optional codec method ``prefetch(conn, ask)``; PostgreSQL saves a round trip). ``knn`` uses it only when
        it asks exactly that of the store's table."""
        prefetch = getattr(self.p.engine.vectors, "prefetch", None)
        if prefetch is not None:
            prefetch(self.p.engine.conn, Nearest(memory_ids, vector, k, ""))

    def begin(
        self, memory_ids: Sequence[str], vector: tuple[float, ...], k: int, route: Route
    ) -> Callable[[], list[VectorCandidate]] | None:
        """Start the scan of a hybrid search so it overlaps the FTS statement; None runs it later."""
        codec = route.codec
        if codec is None:
            return None
        started = codec.begin(self.p.engine.conn, Nearest(memory_ids, vector, k, self.generation()))
        if started is None:
            return None
        return lambda: self.resolve(started(), k)

    def knn(
        self, memory_ids: Sequence[str], vector: tuple[float, ...], k: int, *, exact: bool, route: Route | None = None
    ) -> list[VectorCandidate]:
        """Nearest vector windows (one row per window), nearest first, in the route's table (default the store's)."""
        codec = route.codec if route is not None else self.p.engine.vectors
        if codec is None:
            raise no_vector_projection()
        scored = codec.knn(self.p.engine.conn, Nearest(memory_ids, vector, k, self.generation(), exact))
        return self.resolve(scored, k)

    def resolve(self, scored: list[tuple[float, int]], k: int) -> list[VectorCandidate]:
        """The ``k`` nearest (distance, rowid) windows as candidates bound to their entry versions."""
        scored = sorted(scored)[:k]
        meta = self.p.proj.windows([rowid for _, rowid in scored])
        out = []
        for distance, rowid in scored:
            m = meta.get(rowid)
            if m is not None:
                out.append(VectorCandidate(m[0], m[1], m[2], distance))
        return out

    def nearest(
        self,
        memory_ids: Sequence[str],
        vector: tuple[float, ...],
        depth: int,
        request: SearchRequest,
        begun: Callable[[], list[VectorCandidate]] | None = None,
        route: Route | None = None,
    ) -> tuple[list[VectorCandidate], bool]:
        """Per-entry nearest candidates (max similarity over an entry's windows), nearest first, and whether the
        windows read filled their depth (more lie beyond it)."""
        route = route or self.search_route(memory_ids, vector)
        k = window_depth(depth)
        windows = begun() if begun is not None else self.knn(memory_ids, vector, k, exact=request.exact, route=route)
        best: dict[tuple[str, str], VectorCandidate] = {}
        for w in windows:
            key = (w.memory_id, w.entry_id)
            if key not in best or w.distance < best[key].distance:
                best[key] = w
        ordered = sorted(best.values(), key=lambda c: (c.distance, c.memory_id, c.entry_id))
        if request.filters.active:
            ordered = [c for c in ordered if self._head_matches(c, request.filters)]
        return ordered[:depth], len(windows) >= k or len(ordered) > depth

    def row_valid(self, row: VectorMeta, profile: EmbeddingProfile) -> bool:
        if row.profile_id != profile.profile_id or row.embedding_content_hash != self.embedding_hash(
            row.entry_content_hash, profile
        ):
            return False
        head = self.p.rows.head(row.memory_id)
        m = self.p.manifests.lookup(head.manifest_root, row.entry_id) if head else None
        return (
            m is not None
            and m.state == "active"
            and m.entry_version_id == row.entry_version_id
            and m.entry_content_hash == row.entry_content_hash
        )


__all__ = ["VectorCandidate", "VectorPart", "window_depth"]
