"""Principals, tokens, grants and the one authorization rule. Pure: no I/O, standard library only.

A *principal* is a user of one organization (``user`` is the id in ``memstone://users/<user>``). It
authenticates with API tokens, stored only as SHA-256 hashes, and holds *grants*: a permission (read < write <
admin) on a scope pattern of its own organization:

    memstone://orgs/acme                      exactly that scope
    memstone://orgs/acme/projects/web         exactly that scope
    memstone://orgs/acme/*                    every scope under the prefix (here: every project of acme)
    *                                         every org and project scope of the principal's organization

The rule (:func:`authorize`), checked at every request against grants read from the store at that moment:

1. Local mode (the server is bound to 127.0.0.1 and the request comes from the machine): one local principal
   may do everything, the anonymous scope included.
2. The anonymous scope exists only in local mode; with tokens it is refused.
3. An org or project scope is visible only to principals of that organization, and needs a covering grant.
4. A user scope is its user's own (read, write, admin). Another principal sees it only with an ``admin`` grant
   on ``*`` and only when that user belongs to the same organization.
5. A Memory bound to no scope belongs to no organization: only local mode sees it.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from ..domain.errors import Forbidden, InvalidInput
from ..domain.fields import FieldDict, field_dict
from ..domain.scopes import ANONYMOUS, Scope, parse_scope

Permission = Literal["read", "write", "admin"]
PERMISSIONS: tuple[Permission, ...] = ("read", "write", "admin")
RANK: dict[Permission, int] = {"read": 1, "write": 2, "admin": 3}
EVERY_SCOPE = "*"
TOKEN_PREFIX = "mst_"
LOCAL_PRINCIPAL_ID = "prn_local"

_USER_RE = re.compile(r"^[a-z0-9][a-z0-9._\-]{0,127}$")


def check_permission(value: object) -> Permission:
    """``read``, ``write`` or ``admin``; anything else is refused with the list."""
    for p in PERMISSIONS:
        if value == p:
            return p
    raise InvalidInput(f"unknown permission {value!r}", hint="use read, write or admin")


def check_name(value: object, what: str) -> str:
    """A user or org id: the same alphabet as a scope URI segment (lowercase letters, digits, ``. _ -``)."""
    if not isinstance(value, str) or not _USER_RE.fullmatch(value.strip().lower()):
        raise InvalidInput(
            f"invalid {what} {value!r}", hint=f"a {what} is lowercase letters, digits, '.', '_' or '-' (max 128)"
        )
    name = value.strip().lower()
    if what == "user" and name == "anonymous":
        raise InvalidInput("'anonymous' is reserved for the local-only scope", hint="choose another user id")
    return name


def check_grant_scope(value: object, *, org: str) -> str:
    """Canonicalise a grant's scope pattern and check that it lies inside ``org``."""
    if value == EVERY_SCOPE:
        return EVERY_SCOPE
    if not isinstance(value, str):
        raise InvalidInput(f"a grant scope must be a string, got {type(value).__name__}")
    text = value.strip()
    if text.endswith("/*"):
        base = parse_scope(text[:-2])
        if base.tier != "org":
            raise InvalidInput(
                f"grant pattern {value!r} is not supported", hint="use memstone://orgs/<org>/* or an exact scope"
            )
        if base.org != org:
            raise InvalidInput(f"grant {value!r} lies outside organization {org!r}", hint="grant scopes of your org")
        return base.uri + "/*"
    scope = parse_scope(text)
    if scope.tier == "user":
        raise InvalidInput(
            "a user scope is its own user's; it cannot be granted",
            hint="give an admin grant on '*' to let someone read every scope of the organization",
        )
    if scope.org != org:
        raise InvalidInput(f"grant {value!r} lies outside organization {org!r}", hint="grant scopes of your org")
    return scope.uri


def new_token() -> str:
    """A fresh API token: ``mst_`` + 32 random bytes, URL-safe base64. Shown once; only its hash is kept."""
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def token_hash(token: str) -> str:
    """SHA-256 (hex) of the token's UTF-8 bytes: what the store keeps and looks up."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


@dataclass(frozen=True, slots=True, kw_only=True)
class Principal:
    """A user of one organization."""

    principal_id: str
    user: str
    org: str
    name: str | None = None
    created_at: str = ""

    @property
    def user_scope(self) -> str:
        return f"memstone://users/{self.user}"

    def to_dict(self) -> dict[str, object]:
        return {**field_dict(self), "user_scope": self.user_scope}


@dataclass(frozen=True, slots=True, kw_only=True, order=True)
class Grant(FieldDict):
    """A permission on a scope pattern (see the module docstring)."""

    scope: str
    permission: Permission

    def covers(self, scope: Scope) -> bool:
        """Whether the pattern names ``scope`` (the organization is checked by :func:`authorize`)."""
        if self.scope == EVERY_SCOPE:
            return scope.tier != "user"
        if self.scope.endswith("/*"):
            return scope.tier != "user" and scope.uri.startswith(self.scope[:-1])
        return self.scope == scope.uri


@dataclass(frozen=True, slots=True, kw_only=True)
class TokenInfo:
    """A token's public metadata. The secret itself is never stored; ``prefix`` helps a person recognise it."""

    token_id: str
    principal_id: str
    user: str
    org: str
    label: str | None
    prefix: str
    created_at: str
    revoked_at: str | None = None

    @property
    def active(self) -> bool:
        return self.revoked_at is None

    def to_dict(self) -> dict[str, object]:
        return {**field_dict(self), "active": self.active}


@dataclass(frozen=True, slots=True, kw_only=True)
class PrincipalRecords:
    """Every row of a principal store, ids and token hashes included (never a secret): what ``memstone copy``
    carries, so a token issued on the source authenticates on the target. Grants are
    ``(principal_id, scope, permission, created_at)``; tokens are their metadata plus ``token_hash``."""

    principals: tuple[Principal, ...] = ()
    tokens: tuple[tuple[TokenInfo, str], ...] = ()
    grants: tuple[tuple[str, str, Permission, str], ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class Access:
    """Who is asking, with the grants the store holds for them right now (read at request time)."""

    principal: Principal
    grants: tuple[Grant, ...] = ()
    local: bool = False
    token_id: str | None = None

    def to_dict(self) -> dict[str, object]:
        return {
            "principal": self.principal.to_dict(),
            "grants": [g.to_dict() for g in self.grants],
            "local": self.local,
        }


def local_access(user: str = "local") -> Access:
    """The single user of a server in local mode: bound to 127.0.0.1, no token, every scope."""
    return Access(
        principal=Principal(principal_id=LOCAL_PRINCIPAL_ID, user=user, org="local", name="local user"),
        grants=(Grant(scope=EVERY_SCOPE, permission="admin"),),
        local=True,
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class Decision:
    """What :func:`allowed` found: the permission the principal holds on a scope (None: none at all)."""

    held: Permission | None
    reason: str = ""
    hint: str | None = None
    extra: dict[str, object] = field(default_factory=dict)


def org_admin(access: Access) -> bool:
    """Whether ``access`` administers every scope of its organization (an ``admin`` grant on ``*``)."""
    return access.local or any(g.scope == EVERY_SCOPE and g.permission == "admin" for g in access.grants)


def held_permission(access: Access, scope: Scope | None, *, user_org: str | None) -> Decision:
    """The highest permission ``access`` holds on ``scope``; ``user_org`` is the org of a user scope's user.

    ``scope=None`` is a Memory bound to no scope.
    """
    if access.local:
        return Decision(held="admin")
    if scope is None:
        return Decision(held=None, reason="this Memory is bound to no scope, so it belongs to no organization")
    if scope.uri == ANONYMOUS:
        return Decision(
            held=None,
            reason="the anonymous scope exists only on the local machine, when the server runs in local mode",
            hint="use your own user scope (memstone://users/<you>) or a scope of your organization",
        )
    me = access.principal
    if scope.tier == "user":
        if scope.user == me.user:
            return Decision(held="admin")
        if user_org != me.org:
            return Decision(held=None, reason=f"{scope.uri} is another organization's user scope")
        if org_admin(access):
            return Decision(held="admin")
        return Decision(
            held=None,
            reason=f"{scope.uri} is readable only by its user",
            hint="an admin grant on '*' covers every scope of the organization",
        )
    if scope.org != me.org:
        return Decision(held=None, reason=f"{scope.uri} belongs to another organization")
    best: Permission | None = None
    for g in access.grants:
        if g.covers(scope) and (best is None or RANK[g.permission] > RANK[best]):
            best = g.permission
    if best is None:
        return Decision(
            held=None,
            reason=f"no grant covers {scope.uri}",
            hint=f"ask an admin of {me.org} for one: memstone token grant --user {me.user} --scope {scope.uri} ...",
        )
    return Decision(held=best)


def authorize(access: Access, scope: Scope | None, need: Permission, *, user_org: str | None = None) -> None:
    """Raise :class:`Forbidden` unless ``access`` holds at least ``need`` on ``scope``."""
    require_permission(held_permission(access, scope, user_org=user_org), access.principal, scope, need)


def require_permission(decision: Decision, principal: Principal, scope: Scope | None, need: Permission) -> None:
    """Raise :class:`Forbidden` unless ``decision`` (``principal``'s on ``scope``) holds at least ``need``; the
    message says what the principal may do, or why it may do nothing, and whom to ask."""
    if decision.held is not None and RANK[decision.held] >= RANK[need]:
        return
    if decision.held is not None:
        where = scope.uri if scope is not None else "this Memory"
        raise Forbidden(
            f"{principal.user} may {decision.held} but not {need} {where}",
            hint=f"ask an admin of {principal.org} for a {need} grant on {where}",
        )
    raise Forbidden(decision.reason, hint=decision.hint)


def readable(access: Access, scope: Scope | None, *, user_org: str | None = None) -> bool:
    """Whether ``access`` may read ``scope`` (the catalogue of visible scopes uses it)."""
    return held_permission(access, scope, user_org=user_org).held is not None


def grants_of(rows: Sequence[Sequence[object]]) -> tuple[Grant, ...]:
    """Grants from ``(scope, permission)`` rows, sorted."""
    return tuple(sorted(Grant(scope=str(r[0]), permission=check_permission(r[1])) for r in rows))


__all__ = [
    "EVERY_SCOPE",
    "LOCAL_PRINCIPAL_ID",
    "PERMISSIONS",
    "Access",
    "Decision",
    "Grant",
    "Permission",
    "Principal",
    "PrincipalRecords",
    "TokenInfo",
    "authorize",
    "check_grant_scope",
    "check_name",
    "check_permission",
    "grants_of",
    "held_permission",
    "local_access",
    "new_token",
    "org_admin",
    "readable",
    "require_permission",
    "token_hash",
]
