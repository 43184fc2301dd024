"""Stored proposals, listed and decided: accept (written through the service now) or reject (nothing written).

A decision takes the scope's maintenance lease for its write, so it never interleaves with a run applying the
same scope; the proposal's run record is saved again with totals derived from all of its proposals.
"""

from __future__ import annotations

import asyncio
import os
import socket
import time
from dataclasses import replace
from typing import TYPE_CHECKING

from ..domain.errors import InvalidInput, MaintenanceBusyError, NotFound
from ..domain.ids import EntryId
from ..domain.maintenance import MaintenanceRun, Proposal, ProposalStatus, totals
from ..ports import MaintenanceStore
from .apply import apply_proposal
from .runner import record_decision, store_of

if TYPE_CHECKING:
    from ..service import MemoryService

DECISION_WAIT_S = 30.0


async def proposals(
    svc: MemoryService,
    *,
    scope: str | None = None,
    run_id: str | None = None,
    status: ProposalStatus | None = None,
) -> list[Proposal]:
    """Stored proposals the actor may read, in the order they were made."""
    from ..domain.scopes import canonical_scope

    found = await store_of(svc).maintenance_proposals(
        scope=canonical_scope(scope) if scope is not None else None, run_id=run_id, status=status
    )
    return [p for p in found if await svc.policy.readable(p.scope)]


async def runs(svc: MemoryService, *, scope: str | None = None) -> list[MaintenanceRun]:
    """Run records the actor may read, newest first."""
    from ..domain.scopes import canonical_scope

    found = await store_of(svc).maintenance_runs(scope=canonical_scope(scope) if scope is not None else None)
    return [r for r in found if await svc.policy.readable(r.scope)]


async def proposal(svc: MemoryService, proposal_id: str) -> Proposal:
    """One stored proposal (NotFound when it does not exist or the actor cannot read its scope)."""
    found = await store_of(svc).maintenance_proposals(proposal_id=proposal_id)
    if not found or not await svc.policy.readable(found[0].scope):
        raise NotFound(f"no maintenance proposal {proposal_id}", hint="list them with `memstone maintain proposals`")
    return found[0]


async def decide(svc: MemoryService, proposal_id: str, *, accept: bool) -> Proposal:
    """Accept (apply now, through the service) or reject a PROPOSED proposal; returns it decided.

    >>> done = await decide(svc, "mprop_…", accept=True)   # doctest: +SKIP
    >>> done.status                                        # doctest: +SKIP
    'APPLIED'
    """
    from ..service import utc_now

    store = store_of(svc)
    p = await proposal(svc, proposal_id)
    await svc.policy.require_named(p.scope, "write")
    if p.status != "PROPOSED":
        raise InvalidInput(
            f"proposal {proposal_id} is {p.status}, not PROPOSED",
            hint="a proposal is decided only once; list the PROPOSED ones",
        )
    (run,) = await store.maintenance_runs(run_id=p.run_id)
    if not accept:
        decided = p.decided("REJECTED", result="rejected", at=utc_now())
        # Trigger: a rejection. Why: the caller judged these entries at these hashes; were they left unseen (a
        # dry run records nothing), the next APPLY run would propose the same thing again and apply it.
        # Outcome: the ledger sees them at the proposal's hashes; an entry changed since is listed again.
        await _save(store, run, decided, dict(p.hashes))
        return decided
    holder = f"{socket.gethostname()}:{os.getpid()}"
    lease = f"decide:{proposal_id}"
    deadline = time.monotonic() + DECISION_WAIT_S
    while (other := await store.lease_maintenance(p.scope, lease, holder, 60.0)) is not None:
        if time.monotonic() > deadline:
            raise MaintenanceBusyError(f"maintenance run {other} is active for {p.scope}", hint="decide once it ends")
        await asyncio.sleep(0.25)
    try:
        decided, seen = await apply_proposal(svc, p, at=utc_now())
        await _save(store, run, decided, seen)
        return decided
    finally:
        await store.release_maintenance(p.scope, lease)


async def _save(store: MaintenanceStore, run: MaintenanceRun, decided: Proposal, seen: dict[EntryId, str]) -> None:
    others = [q for q in await store.maintenance_proposals(run_id=run.run_id) if q.proposal_id != decided.proposal_id]
    await record_decision(store, replace(run, totals=totals([*others, decided])), decided, seen)


__all__ = ["decide", "proposal", "proposals", "runs"]
