"""Embedding runs over HTTP: ``reembed`` and ``embed --backfill`` of one organization, carried out by the server.

``POST /api/embedding/runs`` starts one and answers once its first batch is stored (202, ``running``) or it ended;
``GET /api/embedding/runs/{run_id}`` is its progress. The rules (who may, one run per org across processes, the
refusals) are :mod:`memstone.maintenance.embedding_runs`' and the service's; this module only translates.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field
from starlette.responses import JSONResponse, Response

from ...maintenance.embedding_runs import run_record, start_run
from .routing import Call, Operation, Param
from .schemas import Open, Strict

EMBEDDING_RUN_ID = r"^erun_[0-9A-Za-z]{1,64}$"
RUN = Param("run_id", "path", {"type": "string", "pattern": EMBEDDING_RUN_ID}, "An embedding run id (erun_…).")


class EmbeddingRunQuery(Strict):
    org: str | None = Field(
        default=None, max_length=128, description="The organization whose Memories the run covers (none: the store)."
    )


class EmbeddingRunIn(Strict):
    kind: Literal["reembed", "backfill"]
    profile: str | None = Field(
        default=None, max_length=256, description="reembed: the profile to migrate to (e.g. use-multilingual-v3)."
    )
    batch: int = Field(default=64, ge=1, le=1024, description="Entries embedded per model call.")


class RunErrorOut(Open):
    code: str
    message: str
    hint: str | None = None


class EmbeddingRunOut(Open):
    run_id: str
    kind: Literal["reembed", "backfill"]
    org: str | None
    profile: str | None
    state: Literal["running", "completed", "failed"]
    done: int
    total: int | None
    error: RunErrorOut | None = Field(description="failed: the error the library raises for the same run")
    holder: str
    started_at: str
    updated_at: str
    finished_at: str | None


class EmbeddingRunOneOut(Open):
    run: EmbeddingRunOut


def _ok(data: object, status: int = 200) -> Response:
    return JSONResponse(EmbeddingRunOneOut.model_validate({"run": data}).model_dump(mode="json"), status_code=status)


async def start(call: Call) -> Response:
    body, org = call.b(EmbeddingRunIn), call.q(EmbeddingRunQuery).org
    run = await start_run(
        call.gate.service, body.kind, org=org, profile=body.profile, batch=body.batch,
        worker=call.gate.state.service,
    )  # fmt: skip
    return _ok(run.to_dict(), 202)


async def show(call: Call) -> Response:
    return _ok((await run_record(call.gate.service, call.path["run_id"])).to_dict())


def embedding_run_operations() -> list[Operation]:
    """The embedding run operations (appended to the /api table)."""
    tags = ("maintenance",)
    return [
        Operation("POST", "/api/embedding/runs", "startEmbeddingRun",
                  "Start a reembed (model migration) or a backfill of one organization's vectors, run by the server",
                  "admin of every scope of the org (a grant of admin on '*'); the whole store: local mode only",
                  start, query=EmbeddingRunQuery, body=EmbeddingRunIn, success=202, response=EmbeddingRunOneOut,
                  errors=(401, 403, 409, 422, 501, 503), tags=tags,
                  description="Answers once the first batch is stored (state running) or the run ended. One run "
                  "per organization at a time across every server on the store: another start while one runs is "
                  "409 maintenance_busy, naming the run to follow. Refusals (unknown profile, a dimension the "
                  "engine cannot index, no per-org tables) are the library's errors, before anything changes."),
        Operation("GET", "/api/embedding/runs/{run_id}", "getEmbeddingRun",
                  "An embedding run's state and progress (done/total), and its error if it failed",
                  "admin of the run's org (others: 404)", show, params=(RUN,), response=EmbeddingRunOneOut,
                  errors=(401, 404, 422), tags=tags),
    ]  # fmt: skip


__all__ = ["embedding_run_operations"]
