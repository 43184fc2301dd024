"""Governed maintenance as MCP tools: ``memory_maintain``, ``memory_maintenance_proposals``,
``memory_maintenance_accept`` and ``memory_maintenance_reject``.

Through :mod:`memstone.maintenance` with the caller's acting service. The scope is ``project`` or ``user`` as the
server resolved them (a tool input never names a scope URI), so a caller cannot maintain another tenant's memory;
in token mode the policy also checks the caller's grant on it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated, Literal, Protocol

from mcp.server.mcpserver import Context
from mcp.types import ToolAnnotations
from pydantic import Field

from ...maintenance import JudgeSettings, MaintenanceSettings, decide, maintain, proposals
from ...maintenance.runner import repo_for
from ...service import MemoryService
from .errors import tool_errors
from .schemas import MaintainOut, ProposalOut, ProposalsOut

READ = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
RUN = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
DECIDE = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False)
ProposalId = Annotated[str, Field(description="A proposal id (mprop_…), from memory_maintenance_proposals.",
                                  pattern=r"^mprop_[0-9A-Za-z]+$")]  # fmt: skip
Which = Annotated[Literal["project", "user"], Field(description="This project's memories (default) or the user's.")]


class _Caller(Protocol):
    @property
    def svc(self) -> MemoryService: ...

    def scopes(self, which: Literal["all", "project", "user"]) -> list[str]: ...


def register_maintenance_tools(
    tool: Callable[[str, str, ToolAnnotations], Callable[[Callable[..., Awaitable[object]]], object]],
    here: Callable[[Context | None], _Caller],
) -> None:
    """Add the maintenance tools to a server (``tool`` and ``here`` are build_server's registrar and caller)."""

    @tool("memory_maintain", "Maintain memories", RUN)
    async def memory_maintain(
        ctx: Context,
        scope: Which = "project",
        mode: Annotated[
            Literal["dry-run", "apply"], Field(description="dry-run (default) only proposes; apply also writes.")
        ] = "dry-run",
        repo: Annotated[
            str | None,
            Field(
                description="A git work tree (a path on this machine) that code-anchored memories cite: a cited "
                "file changed since is proposed stale. Local servers only.",
                max_length=4096,
            ),
        ] = None,
    ) -> MaintainOut:
        """Consolidate memories: merge restatements, retire superseded entries and old working notes, rename
        drifted slugs, flag empty or orphaned entries, demote an oversized mandatory tier.

        Only entries changed since the last maintenance pass are judged, so a repeat run on unchanged memories
        does nothing. dry-run stores proposals for memory_maintenance_accept / _reject; apply writes the ones
        whose entries did not change meanwhile (history keeps every word). One run per scope at a time.
        """
        with tool_errors():
            c = here(ctx)
            (uri,) = c.scopes(scope)
            settings = MaintenanceSettings(judges=JudgeSettings(repo=repo_for(c.svc, repo)))
            report = await maintain(c.svc, scope=uri, mode=mode, settings=settings)
            return MaintainOut.of(report.run, report.proposals)

    @tool("memory_maintenance_proposals", "Maintenance proposals", READ)
    async def memory_maintenance_proposals(
        ctx: Context,
        scope: Which = "project",
        status: Annotated[
            Literal["PROPOSED", "APPLIED", "REJECTED", "SKIPPED_HASH_MISMATCH", "INFORMATIONAL"] | None,
            Field(description="Only proposals in this status (default: all)."),
        ] = None,
    ) -> ProposalsOut:
        """The stored maintenance proposals of this project (or the user), in the order they were made."""
        with tool_errors():
            c = here(ctx)
            (uri,) = c.scopes(scope)
            found = await proposals(c.svc, scope=uri, status=status)
            return ProposalsOut(proposals=[ProposalOut.of(p) for p in found], count=len(found))

    @tool("memory_maintenance_accept", "Accept a maintenance proposal", DECIDE)
    async def memory_maintenance_accept(ctx: Context, id: ProposalId) -> ProposalOut:
        """Write a PROPOSED proposal now. If its entries changed since, it becomes SKIPPED_HASH_MISMATCH and
        nothing is written (the next memory_maintain judges them again)."""
        with tool_errors():
            return ProposalOut.of(await decide(here(ctx).svc, id, accept=True))

    @tool("memory_maintenance_reject", "Reject a maintenance proposal", DECIDE)
    async def memory_maintenance_reject(ctx: Context, id: ProposalId) -> ProposalOut:
        """Reject a PROPOSED proposal: nothing is written."""
        with tool_errors():
            return ProposalOut.of(await decide(here(ctx).svc, id, accept=False))


__all__ = ["register_maintenance_tools"]
