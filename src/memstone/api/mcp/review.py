"""The capture review queue as MCP tools: ``memory_review_list``, ``memory_review_accept``, ``memory_review_reject``.

Through memstone.capture's public API only (``ReviewQueue``, ``accept``, ``reject``). A caller sees and decides
only the items of scopes it may read and write: the service's policy checks each item's scope, so in token mode
a principal never sees another team's queued candidates.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated, Literal, Protocol

from mcp.server.mcpserver import Context
from mcp.types import ToolAnnotations
from pydantic import Field

from ...capture import ReviewQueue, accept, reject, visible_items
from ...service import MemoryService
from .errors import tool_errors
from .schemas import ReviewDecisionOut, ReviewItemOut, ReviewListOut

READ = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
DECIDE = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False)
ItemId = Annotated[str, Field(description="A queued item id (cap_…), from memory_review_list.", min_length=5)]


class _Caller(Protocol):
    @property
    def svc(self) -> MemoryService: ...


def register_review_tools(
    tool: Callable[[str, str, ToolAnnotations], Callable[[Callable[..., Awaitable[object]]], object]],
    here: Callable[[Context | None], _Caller],
) -> None:
    """Add the three review tools to a server (``tool`` and ``here`` are build_server's registrar and caller)."""

    def queue(svc: MemoryService) -> ReviewQueue:
        return ReviewQueue.of(svc)  # kept in the store itself, on any engine

    @tool("memory_review_list", "Review queue", READ)
    async def memory_review_list(
        ctx: Context,
        status: Annotated[
            Literal["pending", "accepted", "rejected", "all"], Field(description="Which items (default pending).")
        ] = "pending",
    ) -> ReviewListOut:
        """What capture queued for review (capture mode 'review'): candidates to accept or reject, oldest first.

        Accept one with memory_review_accept (it is written as capture would write it now), or drop it with
        memory_review_reject (nothing is written, and the same statement is not queued again).
        """
        with tool_errors():
            svc = here(ctx).svc
            found = await visible_items(svc, queue(svc), status=None if status == "all" else status)
            items = [ReviewItemOut.of(i) for i in found]
            return ReviewListOut(items=items, count=len(items))

    @tool("memory_review_accept", "Accept a queued memory", DECIDE)
    async def memory_review_accept(ctx: Context, id: ItemId) -> ReviewDecisionOut:
        """Accept a queued candidate: it is re-planned against the current memories and written (a near-duplicate
        that appeared meanwhile makes it a revision or a no-op). A review flag is just closed."""
        with tool_errors():
            svc = here(ctx).svc
            done = await accept(svc, queue(svc), id, decided_by=svc.actor.author, surface="agent-session")
            return ReviewDecisionOut(
                item=ReviewItemOut.of(await queue(svc).get(id)), entries=list(done.entries()), note=done.reason
            )

    @tool("memory_review_reject", "Reject a queued memory", DECIDE)
    async def memory_review_reject(
        ctx: Context,
        id: ItemId,
        note: Annotated[str | None, Field(description="Why, in a few words.", max_length=512)] = None,
    ) -> ReviewDecisionOut:
        """Reject a queued candidate: nothing is written, and the same statement is not queued again."""
        with tool_errors():
            svc = here(ctx).svc
            done = await reject(svc, queue(svc), id, decided_by=svc.actor.author, note=note)
            return ReviewDecisionOut(item=ReviewItemOut.of(done))


__all__ = ["register_review_tools"]
