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

from ...auth.errors import Forbidden, Unauthenticated
from ...auth.model import RANK, Access, Permission, authorize, held_permission, local_access
from ...auth.store import PrincipalStore
from ...domain.errors import InvalidInput, NotFound
from ...domain.ids import EntryId, MemoryId, check_id
from ...domain.model import EntryVersion, Revision
from ...domain.scopes import Scope, parse_scope
from ...service import MemoryService
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


def acting_as(service: MemoryService, author: str) -> MemoryService:
    """A service over the same open backend whose writes are recorded as ``author`` (surface ``api``).

    Trigger: a write in token mode. Why: provenance must name the authenticated principal, and only
    ``remember`` takes an ``author=`` argument; flag, relate, forget and the rest record the service's own
    author. Outcome: a per-request service view sharing the backend, the model and the kind policy.
    """
    view = MemoryService(
        service.backend,
        clock=service._clock,
        new_id=service._new_id,
        author=author,
        surface="api",
        closed_kinds=service._closed_kinds,
    )
    view.indexer = service.indexer
    view._kind_cache = service._kind_cache
    view.migration_wait_s = service.migration_wait_s
    return view


@dataclass
class Gate:
    """One request's access decisions, against the grants read when the request arrived."""

    state: AppState
    access: Access
    _scopes: dict[MemoryId, str] | None = field(default=None, repr=False)

    @property
    def service(self) -> MemoryService:
        return self.state.service

    def writer(self) -> MemoryService:
        """The service to write through: the shared one locally, else one that records the principal."""
        if self.access.local:
            return self.state.service
        return acting_as(self.state.service, self.access.principal.user)

    @property
    def author(self) -> str | None:
        return self.state.settings.author if self.access.local else self.access.principal.user

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

    async def user_org(self, scope: Scope | None) -> str | None:
        if scope is None or scope.tier != "user" or scope.user is None or self.access.local:
            return None
        principal = await self.state.principals.principal(user=scope.user)
        return principal.org if principal is not None else None

    async def require(self, scope: Scope, need: Permission) -> None:
        """Raise Forbidden unless the caller holds ``need`` on a scope it named."""
        authorize(self.access, scope, need, user_org=await self.user_org(scope))

    async def held(self, scope: Scope | None) -> Permission | None:
        return held_permission(self.access, scope, user_org=await self.user_org(scope)).held

    async def scope_of(self, memory_id: MemoryId) -> Scope | None:
        if self._scopes is None:
            self._scopes = {m: s for s, m in await self.service.scopes()}
        uri = self._scopes.get(memory_id)
        return parse_scope(uri) if uri is not None else None

    async def entry(self, entry_id: str, need: Permission) -> tuple[EntryVersion, Scope | None]:
        """An entry's current version and scope, if the caller may ``need`` it; invisible entries are NotFound."""
        eid = EntryId(check_id(entry_id, what="entry", prefix="ent_"))
        version = await self.service.get(eid)
        scope = await self.scope_of(version.memory_id)
        held = await self.held(scope)
        if held is None:
            raise NotFound(f"no entry {eid}", hint="search or list a scope you can read to find an id")
        if RANK[held] < RANK[need]:
            where = scope.uri if scope is not None else version.memory_id
            raise Forbidden(
                f"{self.access.principal.user} may {held} but not {need} {where}",
                hint=f"ask an admin of {self.access.principal.org} for a {need} grant on {where}",
            )
        return version, scope

    async def head_of(self, scope: Scope) -> Revision | None:
        return await self.service.resolve(scope.uri)


def positive_int(value: str, what: str) -> int:
    if not value.isdigit() or int(value) < 1:
        raise InvalidInput(f"{what} must be a positive integer, got {value!r}")
    return int(value)


__all__ = ["AppState", "Gate", "acting_as", "positive_int"]
