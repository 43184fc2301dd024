"""Governed maintenance (issue #14): digest-gated runs per scope that propose, and in APPLY mode write, the
consolidation of what capture and agents appended: duplicates merged, superseded entries and old working notes
retired, drifted slugs renamed, empty or orphaned entries flagged, an oversized mandatory tier demoted.

Every write goes through the service (:class:`~memstone.service.MemoryService`), acting as the caller, so
secrets, grants, compare-and-swap and retries apply exactly as for an agent's writes::

    from memstone.maintenance import maintain, proposals, decide

    report = await maintain(svc, scope="memstone://orgs/acme/projects/web")          # DRY_RUN: proposals only
    for p in report.proposals:
        print(p.kind, p.action, p.entries, p.evidence)
    await decide(svc, report.proposals[0].proposal_id, accept=True)       # write one now
    await maintain(svc, scope="memstone://orgs/acme/projects/web", mode="apply")     # the ledger records what it saw
    again = await maintain(svc, scope="memstone://orgs/acme/projects/web", mode="apply")  # unchanged: lists nothing
    assert again.run.listed == 0 and again.run.usage.model_calls == 0

A dry run changes nothing, the ledger included. Stale items: with ``JudgeSettings(repo=…)`` a code-anchored
entry whose cited file changed in git is proposed stale (``evidence.py``), as is a summary whose summarized
entry changed; accepted, the entry is tagged ``stale`` and shown so in search hits, recall and the Explorer.
"""

from ..domain.maintenance import (
    MaintenanceEvent,
    MaintenanceMode,
    MaintenanceRun,
    Proposal,
    ProposalStatus,
    Usage,
    parse_mode,
)
from .decisions import decide, proposal, proposals, runs
from .judges import JudgeSettings
from .runner import MaintenanceSettings, RunReport, maintain
from .trigger import DEFAULT_THRESHOLD, ScopeStatus, scope_status

__all__ = [
    "DEFAULT_THRESHOLD",
    "JudgeSettings",
    "MaintenanceEvent",
    "MaintenanceMode",
    "MaintenanceRun",
    "MaintenanceSettings",
    "Proposal",
    "ProposalStatus",
    "RunReport",
    "ScopeStatus",
    "Usage",
    "decide",
    "maintain",
    "parse_mode",
    "proposal",
    "proposals",
    "runs",
    "scope_status",
]
