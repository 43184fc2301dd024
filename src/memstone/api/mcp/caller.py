"""Who calls a tool: the open service and scopes of the local user, or of an authenticated principal."""

from __future__ import annotations

from dataclasses import dataclass

from mcp.server.mcpserver import Context

from ...agents.settings import AgentSettings, ScopeChoice
from ...auth.model import Access
from ...domain.model import Revision
from ...service import MemoryService

ACCESS_KEY = "memstone.access"  # where the HTTP mount leaves the authenticated access on the request's state
PROJECT_KEY = "memstone.project"  # and the project scope the client works in (header X-Memstone-Project)
PROJECT_HEADER = "x-memstone-project"


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


def _state(ctx: Context | None) -> dict[str, object]:
    if ctx is None:
        return {}
    try:
        request = ctx.request_context.request
    except ValueError:
        return {}
    state = getattr(request, "scope", {}).get("state") if request is not None else None
    return state if isinstance(state, dict) else {}


def access_of(ctx: Context | None) -> Access | None:
    """The access the HTTP mount authenticated for this request (None over stdio, or outside a request)."""
    found = _state(ctx).get(ACCESS_KEY)
    return found if isinstance(found, Access) else None


def project_of(ctx: Context | None) -> str | None:
    """The project scope a remote client works in (``memstone mcp --url https://…`` sends its own), if any."""
    found = _state(ctx).get(PROJECT_KEY)
    return found if isinstance(found, str) else None


__all__ = ["ACCESS_KEY", "PROJECT_HEADER", "PROJECT_KEY", "Caller", "access_of", "project_of"]
