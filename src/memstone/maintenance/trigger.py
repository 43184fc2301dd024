"""The write-threshold signal (Xema ``MaintenanceTrigger.writesSinceRun``): writes to a scope since its last run.

Every write to a scope's Memory is one Revision, so the per-scope write counter is the head's revision number
minus the head the last maintenance run ended at; no second counter can drift from it. When the count reaches
the threshold, :func:`scope_status` records one ``writes_threshold_reached`` event for that crossing (visible
in ``memstone maintenance status``, ``GET /api/maintenance/status`` and to a daemon). It starts no run by itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..domain.errors import InvalidInput
from ..domain.ids import new_ulid
from ..domain.maintenance import MaintenanceEvent, MaintenanceRun
from ..domain.scopes import canonical_scope
from .runner import store_of

if TYPE_CHECKING:
    from ..service import MemoryService

DEFAULT_THRESHOLD = 50


@dataclass(frozen=True, slots=True, kw_only=True)
class ScopeStatus:
    """Where one scope stands: its head, its last run, the writes since, and the threshold event if reached."""

    scope: str
    head_revision: int
    writes_since_run: int
    threshold: int
    last_run: MaintenanceRun | None
    event: MaintenanceEvent | None  # the event of the current crossing (None: the threshold is not reached)

    def to_dict(self) -> dict[str, object]:
        return {
            "scope": self.scope,
            "head_revision": self.head_revision,
            "writes_since_run": self.writes_since_run,
            "threshold": self.threshold,
            "threshold_reached": self.event is not None,
            "event": self.event.to_dict() if self.event is not None else None,
            "last_run": self.last_run.to_dict() if self.last_run is not None else None,
        }


async def scope_status(svc: MemoryService, scope: str, *, threshold: int = DEFAULT_THRESHOLD) -> ScopeStatus:
    """The scope's write counter; records the ``writes_threshold_reached`` event once per crossing.

    >>> (await scope_status(svc, "memstone://orgs/acme/projects/web", threshold=50)).writes_since_run  # doctest: +SKIP
    12
    """
    if isinstance(threshold, bool) or not isinstance(threshold, int) or threshold < 1:
        raise InvalidInput(f"threshold must be a positive number of writes, got {threshold!r}")
    from ..service import utc_now

    store = store_of(svc)
    uri = canonical_scope(scope)
    await svc.policy.require_named(uri, "read")
    head = await svc.resolve(uri)
    revision = head.revision if head is not None else 0
    done = [r for r in await store.maintenance_runs(scope=uri) if r.terminal]
    last = done[0] if done else None
    since = revision - (last.end_revision if last is not None else 0)
    event = None
    if since >= threshold:
        base = last.end_revision if last is not None else 0
        recorded = [e for e in await store.maintenance_events(uri) if e.head_revision > base]
        if recorded:
            event = recorded[-1]  # the first event of this crossing
        else:
            event = MaintenanceEvent(
                event_id=new_ulid("mevt_"),
                scope=uri,
                kind="writes_threshold_reached",
                at=utc_now(),
                writes=since,
                threshold=threshold,
                head_revision=revision,
            )
            await store.record_maintenance_event(event)
    return ScopeStatus(
        scope=uri, head_revision=revision, writes_since_run=since, threshold=threshold, last_run=last, event=event
    )


__all__ = ["DEFAULT_THRESHOLD", "ScopeStatus", "scope_status"]
