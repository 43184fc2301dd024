"""The persisted queue of maintenance runs: a request is a ``QUEUED`` run record in the store that no process
has claimed yet (``holder`` empty). Whoever works the queue (``memstone daemon``, or the HTTP server for an
async start) claims a request by taking the scope's lease under the request's run id, re-reads it, and carries
it out with :func:`~memstone.maintenance.maintain`; a request stays queued across restarts until then.

The caller's permission is checked when the request is made (:func:`enqueue` resolves the scope from its
verified principal, like a direct start), so a request never names a scope its caller could not maintain.
"""

from __future__ import annotations

import os
import socket
from typing import TYPE_CHECKING

from ..domain.errors import NotFound
from ..domain.ids import new_ulid
from ..domain.maintenance import MaintenanceMode, MaintenanceRun, parse_mode
from .evidence import GitEvidence
from .runner import MaintenanceSettings, Progress, RunReport, maintain, scope_for, store_of, take_lease

if TYPE_CHECKING:
    from ..service import MemoryService


async def enqueue(
    svc: MemoryService, *, scope: str | None = None, mode: MaintenanceMode | str = "DRY_RUN", repo: str | None = None
) -> MaintenanceRun:
    """Record a run request (QUEUED, unclaimed) for the caller's scope; returns it. Nothing runs yet. ``repo``:
    the git work tree code evidence is checked in, as the caller's direct run would use it (checked now; whoever
    carries the request out uses it, see :func:`~memstone.maintenance.maintain`).

    >>> req = await enqueue(svc, scope="memstone://orgs/acme/projects/web", mode="apply")   # doctest: +SKIP
    >>> (await run_record(svc, req.run_id)).status                                         # doctest: +SKIP
    'QUEUED'
    """
    from ..service import utc_now

    run_mode = parse_mode(mode)
    store = store_of(svc)
    uri = await scope_for(svc, scope)
    top = str(GitEvidence(repo).root) if repo is not None else None  # not a work tree: InvalidInput, nothing queued
    run = MaintenanceRun(
        run_id=new_ulid("mrun_"), scope=uri, mode=run_mode, status="QUEUED", created_at=utc_now(), holder="", repo=top
    )
    await store.save_maintenance(run)
    return run


async def pending(svc: MemoryService, *, scope: str | None = None) -> list[MaintenanceRun]:
    """Unclaimed requests, oldest first (of ``scope`` only, when given)."""
    found = await store_of(svc).maintenance_runs(scope=scope)
    return [r for r in reversed(found) if r.status == "QUEUED" and not r.holder]


async def carry_out(
    svc: MemoryService,
    request: MaintenanceRun,
    *,
    settings: MaintenanceSettings | None = None,
    progress: Progress | None = None,
) -> RunReport | None:
    """Claim one request and run it; None when another worker claimed it first (or it is no longer queued)."""
    store = store_of(svc)
    holder = f"{socket.gethostname()}:{os.getpid()}"
    cfg = settings or MaintenanceSettings()
    if await take_lease(store, request.scope, request.run_id, holder, cfg.lease_ttl_s) is not None:
        return None  # a run holds the scope; the request waits for the next pass
    try:
        found = await store.maintenance_runs(run_id=request.run_id)
    except BaseException:
        await store.release_maintenance(request.scope, request.run_id)
        raise
    current = found[0] if found else None
    if current is None or current.status != "QUEUED" or current.holder:
        await store.release_maintenance(request.scope, request.run_id)
        return None
    # ``maintain`` renews the lease under the same run id, and releases it when the run ends.
    return await maintain(svc, settings=cfg, progress=progress, request=current)


async def run_record(svc: MemoryService, run_id: str) -> MaintenanceRun:
    """One run record the actor may read (NotFound otherwise): poll it for an async run's status."""
    found = await store_of(svc).maintenance_runs(run_id=run_id)
    if not found or not await svc.policy.readable(found[0].scope):
        raise NotFound(f"no maintenance run {run_id}", hint="list them with GET /api/maintenance/runs")
    return found[0]


__all__ = ["carry_out", "enqueue", "pending", "run_record"]
