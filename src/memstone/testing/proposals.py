"""A stored maintenance proposal for access tests: a merge of a fresh restatement into a live entry.

Written through the store's maintenance port (the real store, as a maintenance run records it), so the access
matrices (HTTP and MCP) exercise show/accept/reject on a proposal that exists, in a known scope, on the
entries' current hashes. Accepting it writes a real merge through the service.
"""

from __future__ import annotations

from ..domain.ids import EntryId, new_ulid
from ..domain.maintenance import MaintenanceRun, Proposal
from ..domain.model import EntryInput
from ..ports import MaintenanceStore
from ..service import MemoryService, utc_now


async def seed_proposal(svc: MemoryService, scope: str, survivor: EntryId, text: str) -> Proposal:
    """A PROPOSED ``duplicate`` merge of a new entry restating ``text`` into ``survivor`` (and its run record).

    The proposal's merged text holds ``text``, so a caller refused it must not see ``text`` in the answer.
    """
    backend = svc.backend
    assert isinstance(backend, MaintenanceStore)
    rev = await svc.remember(scope=scope, entries=[EntryInput(kind="fact", text=f"{text} (restated)")])
    assert rev is not None
    live = {v.entry_id: v for v in await svc.entries(rev)}
    restated = next(e for e, v in live.items() if v.text == f"{text} (restated)")
    now = utc_now()
    run = MaintenanceRun(
        run_id=new_ulid("mrun_"), scope=scope, mode="DRY_RUN", status="COMPLETED", created_at=now, holder="test"
    )
    proposal = Proposal(
        proposal_id=new_ulid("mprop_"),
        run_id=run.run_id,
        scope=scope,
        memory_id=rev.memory_id,
        kind="duplicate",
        partition="fact",
        action="merge",
        entries=(survivor, restated),
        hashes=((survivor, live[survivor].entry_content_hash), (restated, live[restated].entry_content_hash)),
        evidence=f"{restated} restates {survivor}",
        text=f"{text} Merged.",
        created_at=now,
    )
    await backend.save_maintenance(run, [proposal])
    return proposal


__all__ = ["seed_proposal"]
