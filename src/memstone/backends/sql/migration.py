"""The embedding-model migration (``memstone reembed``), over any engine.

With an organization (``reembed --org``) only its Memories move, to its own profile and the vector table of that
profile's dimension (``routes.py``); only writes to its Memories pause, and no other Memory's vectors change.
Without one, the Memories on the store's profile move (an org with its own profile keeps it).

Writes pause (StoreMigratingError) while every active head is embedded with the new model into a staging table;
one final transaction swaps the vector projection and the recorded profile. Until that commit the store serves the
old profile, so an interrupted migration leaves it usable as it was. The migration holds a lease in the meta table:
its holder and an expiry it renews with every staged batch. Liveness is the lease, not a process id, so it means
the same on every machine sharing a server engine.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Literal

from ...domain.errors import InvalidInput, StoreMigratingError
from ...domain.ids import EntryVersionId, MemoryId
from ...domain.model import EntryVersion
from ...domain.plan import check_version_hash
from ...ports import EmbeddingProfile
from .parts import StoreParts
from .routes import Route, sharded
from .rows import dumps_json, loads_json
from .vectors import VectorPart, no_vector_projection


class ModelMigration:
    def __init__(self, parts: StoreParts, vectors: VectorPart) -> None:
        self.p = parts
        self.vectors = vectors

    def state(self, raw: str | Literal[False] | None = False) -> dict[str, object] | None:
        """The migration marker (``raw``: its value as the caller already read it)."""
        raw = self.p.rows.meta("migration") if raw is False else raw
        if raw is None:
            return None
        data = loads_json(raw)
        assert isinstance(data, dict)
        return data

    def _set_state(self, value: dict[str, object] | None) -> None:
        p = self.p
        codec = p.engine.vectors
        p.engine.lock("meta:migration")
        if value is None:
            p.rows.set_meta("migration", None)
            if codec is not None:
                codec.staging(p.engine.conn, keep=False)
            return
        if codec is None:
            raise no_vector_projection()
        p.rows.set_meta("migration", dumps_json(value))
        codec.staging(p.engine.conn, keep=True)

    def check_not_migrating(
        self, org_of: Callable[[], str | None] | None = None, raw: str | Literal[False] | None = False
    ) -> None:
        """Inside a write transaction: refuse the write while a live migration holds the lease (an org's migration
        only refuses writes whose Memory ``org_of`` says is that org's). ``raw``: the marker as already read."""
        state = self.state(raw)
        if state is None:
            return
        if state.get("org") is not None and org_of is not None and org_of() != state.get("org"):
            return
        expires = state.get("expires_at")
        if not isinstance(expires, int | float) or expires < time.time():
            # Trigger: a migration's lease ran out (its process died or hung), or a marker without a lease.
            # Why: the old profile's projection was never touched, so the store is consistent as it was.
            # Outcome: clear the stale marker and its staging rows; writes continue on the old profile.
            self._set_state(None)
            return
        raise StoreMigratingError(
            f"writes are paused: the store is migrating to embedding profile {state.get('profile_id')}",
            hint="retry shortly; the migration resumes writes when it finishes",
        )

    def _renew_lease(self, profile_id: str, org: str | None) -> None:
        """Take or renew the migration lease (inside a write transaction); refused while another holder has it."""
        self.p.engine.lock("meta:migration")
        state = self.state()
        if state is not None and state.get("holder") != self.p.lease_holder:
            self.check_not_migrating()  # clears an expired lease, else raises: another migration runs
            state = None
        if state is not None and (state.get("profile_id"), state.get("org")) != (profile_id, org):
            raise StoreMigratingError(f"the store is migrating to {state.get('profile_id')}, not {profile_id}")
        self._set_state(
            {
                "profile_id": profile_id,
                "org": org,
                "holder": self.p.lease_holder,
                "expires_at": time.time() + self.p.migration_lease_s,
            }
        )

    def _hold_lease(self) -> tuple[str, str | None]:
        """The profile id of the migration this backend holds; StoreMigratingError when the lease was lost."""
        state = self.state()
        if state is None or state.get("holder") != self.p.lease_holder:
            raise StoreMigratingError(
                "this migration lost its lease (it ran out and was cleared, or another migration took over)",
                hint="run memstone reembed again; the store kept its old profile",
            )
        org = state.get("org")
        return str(state.get("profile_id")), org if isinstance(org, str) else None

    def start_sync(self, profile: EmbeddingProfile, org: str | None = None) -> None:
        check = getattr(self.p.engine.vectors, "check_dimension", None)
        if check is not None:
            check(profile.dimension)  # an engine that cannot index this profile refuses before anything is embedded
        if org is not None:
            sharded(self.p.engine.vectors, profile.dimension)  # an engine without per-org tables refuses now
        with self.p.engine.write_txn():
            self.p.engine.lock("meta:migration")
            state = self.state()
            if state is not None and state.get("holder") == self.p.lease_holder:
                raise StoreMigratingError("this store already runs a migration")
            self._renew_lease(profile.profile_id, org)

    def _targets(self, org: str | None) -> tuple[list[str] | None, list[str]]:
        """The Memories a migration moves, as ``ProjectionRows.unstaged``'s ``only`` and ``but``."""
        routes = self.vectors.routes
        if org is not None:
            return sorted(routes.members(org)), []
        return None, sorted(routes.routed())

    def unstaged_sync(self, limit: int) -> list[EntryVersion]:
        p = self.p
        with p.engine.read_txn():
            state = self.state()
            if state is None:
                return []
            org = state.get("org")
            out: list[EntryVersion] = []
            for mid, vid in p.proj.unstaged(limit, *self._targets(org if isinstance(org, str) else None)):
                out.extend(p.rows.versions(mid, [vid]))
            return out

    def stage_sync(self, batch: Mapping[EntryVersionId, tuple[tuple[float, ...], ...]]) -> None:
        p = self.p
        with p.engine.write_txn():
            p.engine.lock("meta:migration")
            self._renew_lease(*self._hold_lease())
            for vid, vectors in sorted(batch.items()):
                v = self.vectors.current(vid)
                if v is None:
                    # A vector for anything but a current version would outlive its content (a purge erases the
                    # staged vectors of what it purges): refuse the whole batch, nothing is staged.
                    raise InvalidInput(
                        f"{vid} is not the current version of an active entry (or it was purged): not staged",
                        hint="stage only what unstaged_versions returns; it lists the current versions",
                    )
                p.proj.stage(v, vectors)

    def finish_sync(self, profile: EmbeddingProfile) -> None:
        p = self.p
        codec = p.engine.vectors
        if codec is None:
            raise no_vector_projection()
        with p.engine.write_txn():
            p.engine.lock("meta:migration")
            profile_id, org = self._hold_lease()
            if profile_id != profile.profile_id:
                raise StoreMigratingError(f"this store is not migrating to {profile.profile_id}")
            only, but = self._targets(org)
            if p.proj.unstaged(1, only, but):
                raise InvalidInput("some active entries are not embedded with the new model yet")
            staged = dict(p.proj.staged())
            routes = self.vectors.routes
            if org is None:
                if codec.exists(p.engine.conn):  # the metadata of every Memory on the store's profile goes
                    keep = f" WHERE memory_artifact_id NOT IN ({p.engine.dialect.marks(len(but))})" if but else ""
                    p.engine.conn.x(f"DELETE FROM memory_entry_vector_metadata{keep}", but)
                codec.drop(p.engine.conn)  # and the store's table; an org on its own profile keeps its own
                self.vectors.record(profile)
                route = Route(profile, codec, None)
            else:
                old = routes.route(MemoryId(only[0])) if only else routes.default()
                for mid in only or ():
                    self.vectors.drop(MemoryId(mid), None, old)  # the org's rows leave the table they were in
                route = self.vectors.record_org(org, profile)
            self.vectors.bump_generation()
            wanted = set(only) if only is not None else None
            for head in p.rows.heads():
                if (wanted is not None and head.memory_id not in wanted) or head.memory_id in but:
                    continue
                for e in p.manifests.iter_entries(head.manifest_root):
                    if e.state != "active":
                        continue
                    (v,) = p.rows.versions(head.memory_id, [e.entry_version_id])
                    check_version_hash(v)
                    self.vectors.store(v, staged[v.entry_version_id], route)
            self._set_state(None)
        # Caches change only after COMMIT: a failed swap keeps the old profile.
        if org is None:
            p.vector_profile = profile
            p.recorded_profile = profile
        else:
            p.org_profiles = {**p.org_profiles, org: profile}
        p.complete_cache.clear()

    def abort_sync(self) -> None:
        with self.p.engine.write_txn():
            self.p.engine.lock("meta:migration")
            state = self.state()
            if state is not None and state.get("holder") == self.p.lease_holder:
                self._set_state(None)  # never another holder's migration


__all__ = ["ModelMigration"]
