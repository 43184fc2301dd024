"""Governed maintenance over HTTP: start a run, list runs and proposals, inspect, accept or reject a proposal.

Everything goes through :mod:`memstone.maintenance` with the request's acting service, so the scope comes
from the caller's token (its own user scope unless it names one it may write) and every write is the
service's normal write path.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from starlette.responses import JSONResponse, Response

from ...maintenance import JudgeSettings, MaintenanceSettings, decide, maintain, proposal, proposals, runs
from ...maintenance.daemon import status_report
from ...maintenance.queue import carry_out, enqueue, run_record
from ...maintenance.runner import repo_for
from . import maintenance_schemas as s
from .routing import Call, Operation, Param
from .schemas import Open

if TYPE_CHECKING:
    from ...domain.maintenance import MaintenanceRun
    from ...service import MemoryService

RUN = Param("run_id", "path", {"type": "string", "pattern": s.MAINTENANCE_RUN_ID}, "A run id (mrun_…).")
PROPOSAL = Param(
    "proposal_id", "path", {"type": "string", "pattern": s.MAINTENANCE_PROPOSAL_ID}, "A proposal id (mprop_…)."
)


def _ok(model: type[Open], data: object, status: int = 200) -> Response:
    return JSONResponse(model.model_validate(data).model_dump(mode="json"), status_code=status)


_BACKGROUND: set[asyncio.Task[object]] = set()  # async runs in flight (held so they are not collected)


async def start_run(call: Call) -> Response:
    body, scope = call.b(s.MaintainIn), call.q(s.MaintainQuery).scope
    judged = JudgeSettings(repo=repo_for(call.gate.service, body.repo))
    settings = MaintenanceSettings(timeout_s=body.timeout_s, wait=body.wait, judges=judged)
    if body.background:
        # The request is a QUEUED record in the store first: were this server to stop before the run starts,
        # the request stays queued for `memstone daemon` (or the next async start's worker) to carry out.
        request = await enqueue(call.gate.service, scope=scope, mode=body.mode, repo=judged.repo)
        task: asyncio.Task[object] = asyncio.create_task(_carry(call.gate.service, request, settings))
        _BACKGROUND.add(task)
        task.add_done_callback(_BACKGROUND.discard)
        return _ok(s.MaintenanceReportOut, {"run": request.to_dict(), "proposals": []}, 201)
    report = await maintain(call.gate.service, scope=scope, mode=body.mode, settings=settings)
    return _ok(s.MaintenanceReportOut, report.to_dict(), 201)


async def _carry(svc: MemoryService, request: MaintenanceRun, settings: MaintenanceSettings) -> object:
    try:
        return await carry_out(svc, request, settings=settings)
    except Exception as exc:  # an async run has no caller to answer: its record says what happened
        logging.getLogger("memstone.maintenance").warning("async maintenance run %s: %s", request.run_id, exc)
        return None


async def show_run(call: Call) -> Response:
    run = await run_record(call.gate.service, call.path["run_id"])
    found = await proposals(call.gate.service, run_id=run.run_id)
    return _ok(s.MaintenanceReportOut, {"run": run.to_dict(), "proposals": [p.to_dict() for p in found]})


async def list_runs(call: Call) -> Response:
    q = call.q(s.MaintenanceQuery)
    found = await runs(call.gate.service, scope=q.scope)
    return _ok(s.MaintenanceRunsOut, {"runs": [r.to_dict() for r in found]})


async def list_proposals(call: Call) -> Response:
    q = call.q(s.MaintenanceQuery)
    found = await proposals(call.gate.service, scope=q.scope, run_id=q.run, status=q.status)
    return _ok(s.MaintenanceProposalsOut, {"proposals": [p.to_dict() for p in found]})


async def show_proposal(call: Call) -> Response:
    found = await proposal(call.gate.service, call.path["proposal_id"])
    return _ok(s.MaintenanceProposalOneOut, {"proposal": found.to_dict()})


async def accept_proposal(call: Call) -> Response:
    done = await decide(call.gate.service, call.path["proposal_id"], accept=True)
    return _ok(s.MaintenanceProposalOneOut, {"proposal": done.to_dict()})


async def reject_proposal(call: Call) -> Response:
    done = await decide(call.gate.service, call.path["proposal_id"], accept=False)
    return _ok(s.MaintenanceProposalOneOut, {"proposal": done.to_dict()})


async def status(call: Call) -> Response:
    q = call.q(s.MaintenanceStatusQuery)
    svc = call.gate.service
    scope = q.scope
    if scope is None:
        access = svc.actor.access
        scope = access.principal.user_scope if access is not None and not access.local else None
    if scope is None:
        from ...domain.errors import InvalidInput

        raise InvalidInput("name the scope", hint="GET /api/maintenance/status?scope=memstone://…")
    return _ok(s.MaintenanceStatusOut, await status_report(svc, scope, threshold=q.threshold))


def maintenance_operations() -> list[Operation]:
    """The maintenance operations (appended to the /api table)."""
    tags = ("maintenance",)
    one = (PROPOSAL,)
    return [
        Operation("POST", "/api/maintenance/runs", "startMaintenanceRun",
                  "Run maintenance over one scope (dry-run by default; apply writes the proposals that survive)",
                  "write on ?scope= (default: your own user scope)", start_run, query=s.MaintainQuery,
                  body=s.MaintainIn,
                  body_required=False, success=201, response=s.MaintenanceReportOut, errors=(401, 403, 409, 422, 501),
                  tags=tags),
        Operation("GET", "/api/maintenance/status", "getMaintenanceStatus",
                  "Writes to a scope since its last run, and the writes_threshold_reached event",
                  "read on ?scope= (default: your own user scope)", status, query=s.MaintenanceStatusQuery,
                  response=s.MaintenanceStatusOut, errors=(401, 403, 422, 501), tags=tags),
        Operation("GET", "/api/maintenance/runs", "listMaintenanceRuns", "Maintenance runs, newest first",
                  "lists only runs of scopes you can read", list_runs, query=s.MaintenanceQuery,
                  response=s.MaintenanceRunsOut, errors=(401, 422, 501), tags=tags),
        Operation("GET", "/api/maintenance/runs/{run_id}", "getMaintenanceRun",
                  "One run (poll an async start's status) and the proposals it recorded", "read on its scope",
                  show_run, params=(RUN,), response=s.MaintenanceReportOut, errors=(401, 404, 422, 501), tags=tags),
        Operation("GET", "/api/maintenance/proposals", "listMaintenanceProposals",
                  "Stored maintenance proposals, in the order they were made",
                  "lists only proposals of scopes you can read", list_proposals, query=s.MaintenanceQuery,
                  response=s.MaintenanceProposalsOut, errors=(401, 422, 501), tags=tags),
        Operation("GET", "/api/maintenance/proposals/{proposal_id}", "getMaintenanceProposal",
                  "One proposal, with the content hashes it was made on", "read on its scope", show_proposal,
                  params=one, response=s.MaintenanceProposalOneOut, errors=(401, 404, 422, 501), tags=tags),
        Operation("POST", "/api/maintenance/proposals/{proposal_id}/accept", "acceptMaintenanceProposal",
                  "Accept a proposal: write it now (SKIPPED_HASH_MISMATCH when its entries changed)",
                  "write on its scope", accept_proposal, params=one, response=s.MaintenanceProposalOneOut,
                  errors=(401, 403, 404, 409, 422, 501), tags=tags),
        Operation("POST", "/api/maintenance/proposals/{proposal_id}/reject", "rejectMaintenanceProposal",
                  "Reject a proposal: nothing is written", "write on its scope", reject_proposal, params=one,
                  response=s.MaintenanceProposalOneOut, errors=(401, 403, 404, 422, 501), tags=tags),
    ]  # fmt: skip


__all__ = ["maintenance_operations"]
