"""Who calls a tool: the open service and scopes of the local user, or of an authenticated principal."""

from __future__ import annotations

from dataclasses import dataclass

from mcp.server.mcpserver import Context

from ...agents.settings import AgentSettings, ScopeChoice
from ...auth.model import Access
from ...domain.model import Revision
from ...service import MemoryService

ACCESS_KEY = "memstone.access"  # where the HTTP mount leaves the authenticated access on the request's state


@dataclass(frozen=True, slots=True)
class Caller:
    """The service and scopes of one tool call's caller (the local user, or an authenticated principal)."""

    svc: MemoryService
    settings: AgentSettings

    def scopes(self, which: ScopeChoice) -> list[str]:
        return list(self.settings.scopes(which))

    async def heads(self, which: ScopeChoice) -> list[Revision]:
        found = []
        for scope in self.scopes(which):
            head = await self.svc.resolve(scope)
            if head is not None:
                found.append(head)
        return found


def access_of(ctx: Context | None) -> Access | None:
    """The access the HTTP mount authenticated for this request (None over stdio, or outside a request)."""
    if ctx is None:
        return None
    try:
        request = ctx.request_context.request
    except ValueError:
        return None
    state = getattr(request, "scope", {}).get("state") if request is not None else None
    found = state.get(ACCESS_KEY) if isinstance(state, dict) else None
    return found if isinstance(found, Access) else None


__all__ = ["ACCESS_KEY", "Caller", "access_of"]
