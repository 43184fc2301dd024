"""Per-request access control: who is asking (authenticated at the request), and what they may touch.

Nothing here caches a grant: :meth:`AppState.authenticate` reads the token, the principal and its grants from
the PrincipalStore for every request, and :class:`Gate` decides each scope against that fresh snapshot.

Visibility rule: an entry (or version) whose scope the caller cannot read is reported as *not found* (404), the
same as one that does not exist, so ids of other organizations reveal nothing. A scope the caller names
explicitly but may not use is *forbidden* (403), with what to ask for.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from starlette.datastructures import Headers

from ...auth.model import Access, Permission, local_access
from ...auth.store import PrincipalStore
from ...domain.errors import InvalidInput, Unauthenticated
from ...domain.ids import EntryId, MemoryId, check_id
from ...domain.model import EntryVersion, Revision
from ...domain.scopes import Scope, parse_scope
from ...service import MemoryService
from ...service.policy import Actor
from .settings import Settings

TOKEN_HINT = "send Authorization: Bearer <token>; create one with `memstone token create --user <you> --org <org>`"


@dataclass
class AppState:
    """What every request shares: settings, the service and the principal store (opened by the app's lifespan)."""

    settings: Settings
    service: MemoryService
    principals: PrincipalStore
    version: str

    async def authenticate(self, headers: Headers) -> Access:
        """The caller, read from the store now. Local mode needs no token; token mode needs an active one."""
        if self.settings.local:
            return local_access(self.settings.author or "local")
        header = headers.get("authorization")
        if not header:
            raise Unauthenticated("this server needs an API token", hint=TOKEN_HINT)
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise Unauthenticated("the Authorization header must be 'Bearer <token>'", hint=TOKEN_HINT)
        access = await self.principals.authenticate(token.strip())
        if access is None:
            raise Unauthenticated("the token is unknown or revoked", hint=TOKEN_HINT)
        return access

    async def org_of(self, user: str) -> str | None:
        """The organization of a user (for an admin's view of a colleague's user scope)."""
        principal = await self.principals.principal(user=user)
        return principal.org if principal is not None else None


@dataclass
class Gate:
    """One request's view of the service, acting as the caller with the grants read when the request arrived.

    The rule itself lives in the service's policy (:mod:`memstone.service.policy`); the gate only builds the
    actor and asks it, so HTTP, MCP and the library decide alike.
    """

    state: AppState
    access: Access
    _view: MemoryService | None = field(default=None, repr=False)

    @property
    def service(self) -> MemoryService:
        """The service acting as the caller: every read and write checks its grants and records it."""
        if self._view is None:
            actor = Actor.of(self.access, surface="api", local_author=self.state.settings.author)
            self._view = self.state.service.acting(actor, user_org=self.state.org_of)
        return self._view

    def writer(self) -> MemoryService:
        return self.service

    @property
    def author(self) -> str | None:
        return self.service.actor.author

    def default_scope(self) -> str:
        if self.access.local:
            return self.state.settings.scope()
        return self.access.principal.user_scope

    def parse(self, value: str | None) -> Scope:
        """A scope from the URL: a URI, its path form (``orgs/acme/projects/web``), or None for the default."""
        if value is None or not value.strip():
            return parse_scope(self.default_scope())
        text = value.strip()
        if "://" not in text:
            text = "memstone://" + text.strip("/")
        return parse_scope(text)

    async def require(self, scope: Scope, need: Permission) -> None:
        """Raise Forbidden unless the caller holds ``need`` on a scope it named."""
        await self.service.policy.require_named(scope, need)

    async def named(self, value: str | None, need: Permission) -> Scope:
        """The scope a request names (:meth:`parse`), once the caller is known to hold ``need`` on it."""
        scope = self.parse(value)
        await self.require(scope, need)
        return scope

    async def held(self, scope: Scope | None) -> Permission | None:
        return (await self.service.policy.decision(scope)).held

    async def scope_of(self, memory_id: MemoryId) -> Scope | None:
        uri = await self.service.scope_of(memory_id)
        return parse_scope(uri) if uri is not None else None

    async def entry(self, entry_id: str, need: Permission) -> tuple[EntryVersion, Scope | None]:
        """An entry's current version and scope, if the caller may ``need`` it; invisible entries are NotFound."""
        eid = EntryId(check_id(entry_id, what="entry", prefix="ent_"))
        version = await self.service.get(eid)
        scope = await self.scope_of(version.memory_id)
        await self.service.policy.require_bound(scope.uri if scope else None, need, hidden=f"no entry {eid}")
        return version, scope

    async def head_of(self, scope: Scope) -> Revision | None:
        return await self.service.resolve(scope.uri)


def positive_int(value: str, what: str) -> int:
    if not value.isdigit() or int(value) < 1:
        raise InvalidInput(f"{what} must be a positive integer, got {value!r}")
    return int(value)


__all__ = ["AppState", "Gate", "positive_int"]
