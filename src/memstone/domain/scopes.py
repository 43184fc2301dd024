"""Scope URIs (Graphit scopes, Xema owner Spaces) and most-specific-wins precedence.

A scope names who owns a Memory::

    memstone://orgs/<org>                       tier "org"
    memstone://orgs/<org>/projects/<project>    tier "project"
    memstone://users/<user>                     tier "user"   (memstone://users/anonymous without authentication)

Ids are ASCII letters, digits, ``.``, ``_`` and ``-`` (starting with a letter or digit, at most 128 characters).
URIs are canonicalised: the scheme and the ``orgs``/``projects``/``users`` words are case-insensitive, ids are
lowercased (ULIDs are case-insensitive, and an export must not depend on the file system's case rules), and a
trailing ``/`` is dropped. ``xema://`` URIs are accepted and mean the same owner.

Precedence (Xema): a user entry shadows a project entry of the same kind and slug, which shadows an org entry of
its own org. Scopes of the same tier never shadow each other.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

from .errors import InvalidInput, shown
from .ids import EntryId

Tier = Literal["org", "project", "user"]
TIER_RANK: Mapping[Tier, int] = {"org": 1, "project": 2, "user": 3}
ANONYMOUS = "memstone://users/anonymous"

_SEGMENT = re.compile(r"^[a-z0-9][a-z0-9._\-]{0,127}$")
_SCHEMES = ("memstone://", "xema://")
_HINT = (
    "use memstone://orgs/<org>, memstone://orgs/<org>/projects/<project>, memstone://users/<user> "
    "or memstone://users/anonymous (ids: letters, digits, . _ -)"
)


@dataclass(frozen=True, slots=True, kw_only=True, order=True)
class Scope:
    """A validated, canonical scope."""

    tier: Tier
    org: str | None = None
    project: str | None = None
    user: str | None = None

    @property
    def uri(self) -> str:
        match self.tier:
            case "org":
                return f"memstone://orgs/{self.org}"
            case "project":
                return f"memstone://orgs/{self.org}/projects/{self.project}"
            case "user":
                return f"memstone://users/{self.user}"

    @property
    def path(self) -> tuple[str, ...]:
        """The URI's path segments (``("orgs", "acme", "projects", "web")``): the export directory of the scope."""
        return tuple(self.uri[len("memstone://") :].split("/"))

    @property
    def rank(self) -> int:
        return TIER_RANK[self.tier]

    def shadows(self, other: Scope) -> bool:
        """Whether an entry here hides an entry of the same kind and slug in ``other`` (most-specific-wins)."""
        if self.tier == "user":
            return other.tier != "user"
        if self.tier == "project":
            return other.tier == "org" and other.org == self.org
        return False

    def __str__(self) -> str:
        return self.uri


def parse_scope(value: object) -> Scope:
    """Validate and canonicalise a scope URI; a clear InvalidInput says what a scope looks like."""
    if isinstance(value, Scope):
        return value
    if not isinstance(value, str):
        raise InvalidInput(f"a scope must be a string URI, got {type(value).__name__}", hint=_HINT)
    text = value.strip()
    lowered = text.lower()
    scheme = next((s for s in _SCHEMES if lowered.startswith(s)), None)
    if scheme is None:
        raise InvalidInput(f"invalid scope {shown(value)}: it must start with memstone://", hint=_HINT)
    rest = lowered[len(scheme) :].rstrip("/")
    parts = rest.split("/") if rest else []
    for part in parts:
        if not _SEGMENT.fullmatch(part):
            raise InvalidInput(f"invalid scope {shown(value)}: bad segment {shown(part)}", hint=_HINT)
    match parts:
        case ["orgs", org]:
            return Scope(tier="org", org=org)
        case ["orgs", org, "projects", project]:
            return Scope(tier="project", org=org, project=project)
        case ["users", user]:
            return Scope(tier="user", user=user)
    raise InvalidInput(f"invalid scope {shown(value)}", hint=_HINT)


def canonical_scope(value: object) -> str:
    """The canonical URI of a scope (``memstone://Orgs/ACME/`` → ``memstone://orgs/acme``)."""
    return parse_scope(value).uri


def org_of_scope(value: object) -> str | None:
    """The organization whose embedding profile serves a Memory bound to this scope: the org of an org or project
    scope; None for a user scope (it uses the store's profile, like a Memory bound to no scope)."""
    scope = parse_scope(value)
    return scope.org if scope.tier in ("org", "project") else None


@dataclass(frozen=True, slots=True, kw_only=True)
class SlugHolder:
    """A live entry holding a (kind, slug) in a scope: the input of precedence."""

    scope: Scope | None
    kind: str
    slug: str
    entry_id: EntryId


def shadowing(holders: Iterable[SlugHolder]) -> dict[EntryId, SlugHolder]:
    """Which entries are shadowed, and by which (the most specific) entry: most-specific-wins across tiers.

    Entries of unbound Memories (``scope=None``) neither shadow nor are shadowed.
    """
    groups: dict[tuple[str, str], list[SlugHolder]] = {}
    for h in holders:
        if h.scope is not None:
            groups.setdefault((h.kind, h.slug), []).append(h)
    out: dict[EntryId, SlugHolder] = {}
    for group in groups.values():
        if len(group) < 2:
            continue
        for h in group:
            assert h.scope is not None
            winners = [w for w in group if w.scope is not None and w.scope.shadows(h.scope)]
            if winners:
                winners.sort(key=lambda w: (-(w.scope.rank if w.scope else 0), w.entry_id.encode("utf-8")))
                out[h.entry_id] = winners[0]
    return out


__all__ = [
    "ANONYMOUS",
    "TIER_RANK",
    "Scope",
    "SlugHolder",
    "Tier",
    "canonical_scope",
    "org_of_scope",
    "parse_scope",
    "shadowing",
]
