"""The embedding-model migration (``memstone reembed``), over any engine.

Writes pause (StoreMigratingError) while every active head is embedded with the new model into a staging table;
one final transaction swaps the vector projection and the recorded profile. Until that commit the store serves the
old profile, so an interrupted migration leaves it usable as it was. The migration holds a lease in the meta table:
its holder and an expiry it renews with every staged batch. Liveness is the lease, not a process id, so it means
the same on every machine sharing a server engine.
"""

from __future__ import annotations

import time
from collections.abc import Mapping

from ...domain.errors import CapabilityNotSupportedError, InvalidInput, StoreMigratingError
from ...domain.ids import EntryVersionId
from ...domain.model import EntryVersion
from ...domain.plan import check_version_hash
from ...ports import EmbeddingProfile
from .parts import StoreParts
from .rows import dumps_json, loads_json
from .vectors import VectorPart


class ModelMigration:
    def __init__(self, parts: StoreParts, vectors: VectorPart) -> None:
        self.p = parts
        self.vectors = vectors

    def state(self) -> dict[str, object] | None:
        raw = self.p.rows.meta("migration")
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
            raise CapabilityNotSupportedError("vector", "this backend has no vector projection")
        p.rows.set_meta("migration", dumps_json(value))
        codec.staging(p.engine.conn, keep=True)

    def check_not_migrating(self) -> None:
        """Inside a write transaction: refuse the write while a live migration holds the lease."""
        state = self.state()
        if state is None:
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

    def _renew_lease(self, profile_id: str) -> None:
        """Take or renew the migration lease (inside a write transaction); refused while another holder has it."""
        self.p.engine.lock("meta:migration")
        state = self.state()
        if state is not None and state.get("holder") != self.p.lease_holder:
            self.check_not_migrating()  # clears an expired lease, else raises: another migration runs
            state = None
        if state is not None and state.get("profile_id") != profile_id:
            raise StoreMigratingError(f"the store is migrating to {state.get('profile_id')}, not {profile_id}")
        self._set_state(
            {
                "profile_id": profile_id,
                "holder": self.p.lease_holder,
                "expires_at": time.time() + self.p.migration_lease_s,
            }
        )

    def _hold_lease(self) -> str:
        """The profile id of the migration this backend holds; StoreMigratingError when the lease was lost."""
        state = self.state()
        if state is None or state.get("holder") != self.p.lease_holder:
            raise StoreMigratingError(
                "this migration lost its lease (it ran out and was cleared, or another migration took over)",
                hint="run memstone reembed again; the store kept its old profile",
            )
        return str(state.get("profile_id"))

    def start_sync(self, profile: EmbeddingProfile) -> None:
        check = getattr(self.p.engine.vectors, "check_dimension", None)
        if check is not None:
            check(profile.dimension)  # an engine that cannot index this profile refuses before anything is embedded
        with self.p.engine.write_txn():
            self.p.engine.lock("meta:migration")
            state = self.state()
            if state is not None and state.get("holder") == self.p.lease_holder:
                raise StoreMigratingError("this store already runs a migration")
            self._renew_lease(profile.profile_id)

    def unstaged_sync(self, limit: int) -> list[EntryVersion]:
        p = self.p
        with p.engine.read_txn():
            if self.state() is None:
                return []
            out: list[EntryVersion] = []
            for mid, vid in p.proj.unstaged(limit):
                out.extend(p.rows.versions(mid, [vid]))
            return out

    def stage_sync(self, batch: Mapping[EntryVersionId, tuple[tuple[float, ...], ...]]) -> None:
        p = self.p
        with p.engine.write_txn():
            p.engine.lock("meta:migration")
            self._renew_lease(self._hold_lease())
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
            raise CapabilityNotSupportedError("vector", "this backend has no vector projection")
        with p.engine.write_txn():
            p.engine.lock("meta:migration")
            if self._hold_lease() != profile.profile_id:
                raise StoreMigratingError(f"this store is not migrating to {profile.profile_id}")
            if p.proj.unstaged(1):
                raise InvalidInput("some active entries are not embedded with the new model yet")
            staged = dict(p.proj.staged())
            codec.drop(p.engine.conn)
            self.vectors.record(profile)
            self.vectors.bump_generation()
            for head in p.rows.heads():
                for e in p.manifests.iter_entries(head.manifest_root):
                    if e.state != "active":
                        continue
                    (v,) = p.rows.versions(head.memory_id, [e.entry_version_id])
                    check_version_hash(v)
                    self.vectors.store(v, staged[v.entry_version_id], profile)
            self._set_state(None)
        # Caches change only after COMMIT: a failed swap keeps the old profile.
        p.vector_profile = profile
        p.recorded_profile = profile
        p.complete_cache.clear()

    def abort_sync(self) -> None:
        with self.p.engine.write_txn():
            self.p.engine.lock("meta:migration")
            state = self.state()
            if state is not None and state.get("holder") == self.p.lease_holder:
                self._set_state(None)  # never another holder's migration


__all__ = ["ModelMigration"]
