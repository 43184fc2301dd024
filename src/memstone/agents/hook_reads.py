"""What a hook reads to brief an agent, from a local store or from a team server (issue 13).

The hook's own logic (which events brief, what a session was shown, re-sending after compaction, the budgets and
the text in :mod:`memstone.agents.briefing`) lives once in :mod:`memstone.agents.hooks`; it asks one of these two
for the memories. :class:`LocalReads` asks the open service; :class:`RemoteReads` asks a ``memstone serve`` over
its ``/api`` (recall, the catalogue, search), whose grants and rules decide what comes back.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ..domain.model import Revision
    from ..remote.client import RemoteClient
    from ..service import MemoryService
    from .briefing import Shown
    from .settings import AgentSettings


@dataclass(frozen=True, slots=True)
class BriefingParts:
    """The mandatory memories the recall protocol fits in the budget, the important ones no narrower scope
    shadows (none when only the mandatory ones are asked for), and how many the budget left out."""

    mandatory: Sequence[Shown]
    important: Sequence[Shown]
    omitted: int


class HookReads(Protocol):
    """The three reads a hook makes."""

    async def has_memories(self) -> bool:
        """Whether the project or the user scope holds a Memory yet (a scope nobody wrote to has none)."""
        ...

    async def briefing_parts(self, budget_tokens: int, *, mandatory_only: bool) -> BriefingParts:
        """What the session briefing shows (see :class:`BriefingParts`)."""
        ...

    async def search(self, query: str, *, limit: int) -> Sequence[Shown]:
        """Full-text matches, mandatory memories left out (they are in the briefing)."""
        ...


class LocalReads:
    """The reads of an open service over the settings' scopes."""

    def __init__(self, svc: MemoryService, settings: AgentSettings) -> None:
        self.svc = svc
        self.settings = settings
        self._heads: list[Revision] | None = None

    async def heads(self) -> list[Revision]:
        if self._heads is None:
            found = []
            for scope in self.settings.scopes("all"):
                head = await self.svc.resolve(scope)
                if head is not None:
                    found.append(head)
            self._heads = found
        return self._heads

    async def has_memories(self) -> bool:
        return bool(await self.heads())

    async def briefing_parts(self, budget_tokens: int, *, mandatory_only: bool) -> BriefingParts:
        heads = await self.heads()
        bundle = await self.svc.recall(None, memories=heads, budget_tokens=budget_tokens)
        omitted = sum(1 for o in bundle.omitted if o.reason == "budget")
        important: Sequence[Shown] = ()
        if not mandatory_only:
            records = await self.svc.important(memories=heads, mandatory=False, limit=50)
            important = tuple(r for r in records if r.shadowed_by is None)
        return BriefingParts(tuple(bundle.mandatory), important, omitted)

    async def search(self, query: str, *, limit: int) -> Sequence[Shown]:
        heads = await self.heads()
        result = await self.svc.search(query, memories=heads, limit=limit, mode="fts", exclude_mandatory=True)
        return result.hits


@dataclass(frozen=True, slots=True)
class Item:
    """A memory as the server sent it (a record or a search hit): what a briefing shows."""

    entry_id: str
    entry_version_id: str
    kind: str
    title: str | None
    text: str
    scope: str | None

    @classmethod
    def of(cls, data: dict[str, Any]) -> Item:
        return cls(
            entry_id=str(data["entry_id"]), entry_version_id=str(data["entry_version_id"]), kind=str(data["kind"]),
            title=data.get("title"), text=str(data["text"]), scope=data.get("scope"),
        )  # fmt: skip


class RemoteReads:
    """The reads of a team server over the settings' scopes, with the settings' token."""

    def __init__(self, client: RemoteClient, settings: AgentSettings) -> None:
        self.client = client
        self.scopes = list(settings.scopes("all"))
        self._bound: list[str] | None = None

    async def bound(self) -> list[str]:
        """The settings' scopes that hold a Memory the caller can read (in the settings' order)."""
        if self._bound is None:
            out = await self.client.json("GET", "/api/memories/scopes")
            held = {i["scope"] for i in out.get("items", []) if i.get("memory_id")}
            self._bound = [s for s in self.scopes if s in held]
        return self._bound

    async def has_memories(self) -> bool:
        return bool(await self.bound())

    async def briefing_parts(self, budget_tokens: int, *, mandatory_only: bool) -> BriefingParts:
        """As locally; the important ones come scope by scope (project first), each scope's newest first."""
        scopes = await self.bound()
        out = await self.client.json(
            "GET", "/api/memories/recall", params={"scope": scopes, "budget_tokens": budget_tokens}
        )
        mandatory = tuple(Item.of(r) for r in out.get("mandatory", []))
        omitted = sum(1 for o in out.get("omitted", []) if o.get("reason") == "budget")
        important: list[Item] = []
        if not mandatory_only:
            for scope in scopes:
                page = await self.client.json(
                    "GET", "/api/memories",
                    params={"scope": scope, "important": True, "mandatory": False, "limit": 50},
                )  # fmt: skip
                important += [Item.of(r) for r in page.get("items", []) if r.get("shadowed_by") is None]
        return BriefingParts(mandatory, tuple(important[:50]), omitted)

    async def search(self, query: str, *, limit: int) -> Sequence[Shown]:
        scopes = await self.bound()
        out = await self.client.json(
            "GET", "/api/memories/search",
            params={"q": query, "scope": scopes, "limit": limit, "mode": "fts", "exclude_mandatory": True},
        )  # fmt: skip
        return [Item.of(h) for h in out.get("hits", [])]


__all__ = ["BriefingParts", "HookReads", "Item", "LocalReads", "RemoteReads"]
