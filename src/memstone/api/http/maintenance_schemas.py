"""Request and response models of the maintenance routes (``api/http/maintenance.py``), beside ``schemas.py``."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ...domain.maintenance import JudgeName, MaintenanceMode, ProposalKind, ProposalStatus, RunStatus
from .schemas import Open, Strict

MAINTENANCE_PROPOSAL_ID = r"^mprop_[0-9A-Za-z]{1,64}$"
MAINTENANCE_RUN_ID = r"^mrun_[0-9A-Za-z]{1,64}$"


class MaintainIn(Strict):
    mode: Literal["dry-run", "apply", "DRY_RUN", "APPLY"] = "dry-run"
    timeout_s: float = Field(default=1800.0, gt=0, le=86400)
    wait: bool = Field(default=True, description="Queue behind a run that holds the scope (false: 409).")
    background: bool = Field(
        default=False,
        description="Answer at once with the QUEUED run (201) and run it in the server; poll "
        "GET /api/maintenance/runs/{run_id} for its status.",
    )
    repo: str | None = Field(
        default=None,
        max_length=4096,
        description="A git work tree on the server that code-anchored memories cite (a cited file changed since "
        "is proposed stale). Local mode only: a caller with a token is refused (403).",
    )


class MaintainQuery(Strict):
    scope: str | None = Field(default=None, max_length=512, description="Default: your own user scope.")


class MaintenanceQuery(MaintainQuery):
    run: str | None = Field(default=None, max_length=128)
    status: ProposalStatus | None = None


class MaintenanceRunOut(Open):
    run_id: str
    scope: str
    mode: MaintenanceMode
    status: RunStatus
    queued_behind: str | None
    repo: str | None = Field(default=None, description="The git work tree code evidence is checked in, if any.")
    listed: int
    retries: int
    model_calls: int
    input_tokens: int
    failed_model_calls: int = 0
    totals: dict[str, int]
    error: str | None


class MaintenanceProposalOut(Open):
    proposal_id: str
    run_id: str
    scope: str
    kind: ProposalKind
    action: str
    entries: list[str]
    hashes: dict[str, str]
    evidence: str
    text: str | None
    slug: str | None
    status: ProposalStatus
    result: str | None
    judge: JudgeName = Field(
        default="rules", description="model: the optional model judge's candidate; it waits for a decision."
    )


class MaintenanceReportOut(Open):
    run: MaintenanceRunOut
    proposals: list[MaintenanceProposalOut]


class MaintenanceRunsOut(Open):
    runs: list[MaintenanceRunOut]


class MaintenanceProposalsOut(Open):
    proposals: list[MaintenanceProposalOut]


class MaintenanceProposalOneOut(Open):
    proposal: MaintenanceProposalOut


class MaintenanceStatusQuery(MaintainQuery):
    threshold: int = Field(default=50, ge=1, le=1_000_000)


class MaintenanceStatusOut(Open):
    scope: str
    head_revision: int
    writes_since_run: int
    threshold: int
    threshold_reached: bool
    event: dict[str, object] | None
    last_run: MaintenanceRunOut | None
    daemons: list[dict[str, object]] = Field(
        default_factory=list, description="each maintenance daemon's health record (memstone daemon, serve)"
    )
