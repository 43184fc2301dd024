"""Who is acting, and the rules every read and write passes, whatever the front end.

A composition root builds an :class:`Actor` from what it authenticated (an HTTP or MCP token, or the local
user) and asks the service for a view that acts as it: ``service.acting(actor)``. The library, the CLI, the
stdio MCP server, the hooks and the importers act as the local user. The rules below live here only; no
front end re-implements them (the front-end parity test runs the same inputs through each surface).

- **Secrets** — every text field of every write (entry text, title, tags, slug, relation kinds, reasons, and
  the content of recorded evidence) is scanned with the domain's detector (:mod:`memstone.domain.secrets`).
  A finding refuses the whole write with :class:`~memstone.domain.errors.SecretRefusedError`, naming the kind
  of secret and the field, never the value; nothing is stored. Authority is append-only, so a secret that got
  in could never be erased: refusing at the door is the only safe place.
- **Grants** — the rule of :mod:`memstone.auth.model`, applied to the scope a Memory is bound to. A read needs
  ``read``, a write ``write``. A Memory the actor cannot read is reported as not found (ids of other
  organizations reveal nothing); a scope the actor names explicitly but may not use is forbidden, with what to
  ask for. The local user may do everything.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..domain.errors import Forbidden, NotFound, SecretRefusedError
from ..domain.model import EntryContent, Surface
from ..domain.scopes import Scope, parse_scope
from ..ports import WritePlan

if TYPE_CHECKING:  # the grant rule loads only for a principal: the local paths (hooks) never pay for it
    from ..auth.model import Access, Decision, Permission

UserOrg = Callable[[str], Awaitable[str | None]]
SECRET_HINT = "name the environment variable or vault path that holds the secret instead"


@dataclass(frozen=True, slots=True, kw_only=True)
class Actor:
    """Who is acting (an authenticated principal, or the local user) and through which surface."""

    access: Access | None = None  # None: the local user
    surface: Surface = "api"
    author: str | None = None  # recorded on writes; a principal is always recorded by its user id

    @classmethod
    def local(cls, *, author: str | None = None, surface: Surface = "api") -> Actor:
        """The local user: the library, the CLI, stdio MCP, hooks, and a server in local mode."""
        return cls(access=None, surface=surface, author=author)

    @classmethod
    def of(cls, access: Access, *, surface: Surface = "api", local_author: str | None = None) -> Actor:
        """The actor behind an authenticated request: a token's principal, or the local user."""
        if access.local:
            return cls(access=access, surface=surface, author=local_author)
        return cls(access=access, surface=surface, author=access.principal.user)

    @property
    def trusted(self) -> bool:
        """The local user may do everything; only a principal's grants are checked."""
        return self.access is None or self.access.local


def refuse_secrets(fields: Iterable[tuple[str, str | None]]) -> None:
    """Raise SecretRefusedError if any ``(field name, value)`` holds a secret."""
    from ..domain.secrets import describe_findings, find_secrets  # its patterns compile on first write, not on reads

    for where, value in fields:
        if not value:
            continue
        found = find_secrets(value)
        if found:
            raise SecretRefusedError(
                f"refused: {describe_findings(found, where=f'the {where}')}; nothing was stored", hint=SECRET_HINT
            )


def content_fields(content: EntryContent) -> list[tuple[str, str | None]]:
    """Every text field of an entry's content, named for a refusal message."""
    fields: list[tuple[str, str | None]] = [("text", content.text), ("title", content.title), ("slug", content.slug)]
    fields.extend(("tags", tag) for tag in content.tags)
    fields.extend(("relation kind", r.kind) for r in content.relations)
    return fields


def refuse_secrets_in_plan(plan: WritePlan) -> None:
    """The secret rule over one write: every new version's fields and every change's reason."""
    for version in plan.new_versions:
        refuse_secrets(content_fields(version.content))
    refuse_secrets(("reason", c.reason) for c in plan.changes)


class Policy:
    """The grant rule for one actor, with the lookup of a user scope's organization it needs."""

    def __init__(self, actor: Actor, *, user_org: UserOrg | None = None) -> None:
        self.actor = actor
        self._user_org = user_org

    async def decision(self, scope: Scope | None) -> Decision:
        from ..auth.model import held_permission, local_access

        access = self.actor.access or local_access()
        org = None
        if scope is not None and scope.tier == "user" and scope.user is not None and not self.actor.trusted:
            org = await self._user_org(scope.user) if self._user_org is not None else None
        return held_permission(access, scope, user_org=org)

    async def require_named(self, scope: str | Scope, need: Permission) -> None:
        """A scope the actor named itself: Forbidden unless it holds ``need`` there, saying what to ask for."""
        if self.actor.trusted:
            return
        parsed = parse_scope(scope) if isinstance(scope, str) else scope
        decision = await self.decision(parsed)
        self._raise_unless(decision, parsed, need, hidden=None)

    async def require_bound(self, scope: str | None, need: Permission, *, hidden: str) -> None:
        """A Memory found by id (bound to ``scope``, or to none): NotFound (``hidden``) unless the actor can read
        it; Forbidden when it can read but not ``need``."""
        if self.actor.trusted:
            return
        parsed = parse_scope(scope) if scope is not None else None
        decision = await self.decision(parsed)
        self._raise_unless(decision, parsed, need, hidden=hidden)

    def require_org_admin(self, org: str | None) -> None:
        """Work over every Memory of an organization (an embedding run of ``org``): Forbidden unless the actor is
        an admin of every scope of that org (a grant of ``admin`` on ``*``); over the whole store (``org`` None),
        only the local user (the server's operator), since a principal administers one organization at most."""
        if self.actor.trusted:
            return
        from ..auth.model import org_admin

        assert self.actor.access is not None  # a trusted actor returned above
        me = self.actor.access.principal
        if org is None:
            raise Forbidden(
                f"{me.user} may not work over the whole store (every organization's Memories)",
                hint=f"name your organization (--org {me.org}); the whole store is for the server's operator",
            )
        if org != me.org or not org_admin(self.actor.access):
            raise Forbidden(
                f"{me.user} is not an admin of every scope of organization {org}",
                hint=f"ask an admin of {org} for: memstone token grant --user {me.user} --scope '*' --permission admin",
            )

    async def readable(self, scope: str | None) -> bool:
        if self.actor.trusted:
            return True
        return (await self.decision(parse_scope(scope) if scope is not None else None)).held is not None

    def _raise_unless(self, decision: Decision, scope: Scope | None, need: Permission, *, hidden: str | None) -> None:
        from ..auth.model import local_access, require_permission

        if decision.held is None and hidden is not None:
            raise NotFound(hidden, hint="search or list a scope you can read to find an id")
        require_permission(decision, (self.actor.access or local_access()).principal, scope, need)


__all__ = ["Actor", "Policy", "UserOrg", "content_fields", "refuse_secrets", "refuse_secrets_in_plan"]
