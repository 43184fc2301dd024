"""Agent settings: which store, which scopes, which budgets. Read once, in a composition root, from env and cwd.

A stdlib dataclass rather than pydantic-settings, because the hook path must not import pydantic. Precedence:
argument > environment (``MEMSTONE_…``) > derived (the project of the working directory) > default.

=================================  ===============================================================
``MEMSTONE_URL``                   the store (default ``~/.memstone/memstone.db``)
``MEMSTONE_PROJECT_SCOPE``         the project scope URI (default: derived from the working directory)
``MEMSTONE_USER_SCOPE``            the user scope URI (default ``memstone://users/anonymous``)
``MEMSTONE_AUTHOR``                the author recorded on writes
``MEMSTONE_HOOK_BUDGET_TOKENS``    session-start injection budget (default 1500 tokens)
``MEMSTONE_HOOK_PROMPT_TOKENS``    per-prompt injection budget (default 400 tokens; 0 turns it off)
=================================  ===============================================================
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from ..domain.errors import InvalidInput
from ..domain.scopes import ANONYMOUS, canonical_scope, parse_scope
from .project import project_scope

DEFAULT_URL = "sqlite:///~/.memstone/memstone.db"
ScopeChoice = Literal["project", "user", "all"]


def store_path(url: str | None, env: Mapping[str, str] | None = None) -> str:
    """The SQLite file a store URL names (``:memory:`` for an in-memory store), without opening it."""
    target = url or (env if env is not None else os.environ).get("MEMSTONE_URL") or DEFAULT_URL
    rest = target[len("sqlite://") :] if target.startswith("sqlite://") else target
    if rest in (":memory:", "/:memory:"):
        return ":memory:"
    if target.startswith("sqlite://") and rest.startswith("/"):
        rest = rest[1:]
    return os.path.abspath(os.path.expanduser(rest)) if rest else rest


def store_dir(url: str | None, env: Mapping[str, str] | None = None) -> Path:
    """The folder of the store's file: where hook logs and session state live (``~/.memstone`` for memory)."""
    path = store_path(url, env)
    if path in (":memory:", ""):
        return Path("~/.memstone").expanduser()
    return Path(path).parent


def _int(env: Mapping[str, str], name: str, default: int) -> int:
    raw = env.get(name)
    if raw is None or not raw.strip():
        return default
    try:
        value = int(raw)
    except ValueError:
        raise InvalidInput(f"{name} must be an integer, got {raw!r}") from None
    if value < 0:
        raise InvalidInput(f"{name} must not be negative, got {value}")
    return value


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentSettings:
    """What the MCP server and the hooks need to know, resolved once."""

    url: str | None
    project_scope: str | None
    user_scope: str = ANONYMOUS
    author: str | None = None
    session_budget_tokens: int = 1500
    prompt_budget_tokens: int = 400
    prompt_limit: int = 3
    home: Path = field(default_factory=lambda: Path.home() / ".memstone")  # hooks.log and session state live here

    @classmethod
    def load(
        cls,
        *,
        url: str | None = None,
        cwd: str | os.PathLike[str] | None = None,
        scope: str | None = None,
        env: Mapping[str, str] | None = None,
    ) -> AgentSettings:
        """Resolve settings: ``scope`` (a project or user scope URI, e.g. the CLI's ``--scope``) pins that tier.

        >>> AgentSettings.load(cwd="/work/main").project_scope  # doctest: +SKIP
        'memstone://orgs/local/projects/main-3f2a9c1d'
        """
        env = os.environ if env is None else env
        url = url or env.get("MEMSTONE_URL") or None
        project = env.get("MEMSTONE_PROJECT_SCOPE") or None
        user = env.get("MEMSTONE_USER_SCOPE") or ANONYMOUS
        if scope:
            tier = parse_scope(scope).tier
            if tier == "org":
                raise InvalidInput(f"{scope} is an org scope", hint="agents use a project scope and a user scope")
            if tier == "project":
                project = scope
            else:
                user = scope
        if project is None:
            project = project_scope(cwd if cwd is not None else os.getcwd())
        return cls(
            url=url,
            project_scope=canonical_scope(project) if project else None,
            user_scope=canonical_scope(user),
            author=env.get("MEMSTONE_AUTHOR") or None,
            session_budget_tokens=_int(env, "MEMSTONE_HOOK_BUDGET_TOKENS", 1500),
            prompt_budget_tokens=_int(env, "MEMSTONE_HOOK_PROMPT_TOKENS", 400),
            home=store_dir(url, env),
        )

    def scopes(self, which: ScopeChoice = "all") -> tuple[str, ...]:
        """The scope URIs a read covers: ``project``, ``user`` or ``all`` (project first)."""
        if which == "project":
            return (self.project_scope,) if self.project_scope else ()
        if which == "user":
            return (self.user_scope,)
        return tuple(s for s in (self.project_scope, self.user_scope) if s)

    def write_scope(self, which: Literal["project", "user"]) -> str:
        """The scope URI a write goes to; refuses ``project`` when no project is known."""
        if which == "user":
            return self.user_scope
        if self.project_scope is None:
            raise InvalidInput(
                "no project scope: this session runs outside a project (the working directory is / or the home dir)",
                hint="pass scope='user' for a cross-project preference, or set MEMSTONE_PROJECT_SCOPE",
            )
        return self.project_scope

    @property
    def log_path(self) -> Path:
        return self.home / "hooks.log"

    @property
    def state_dir(self) -> Path:
        return self.home / "hook-sessions"


__all__ = ["DEFAULT_URL", "AgentSettings", "ScopeChoice", "store_dir", "store_path"]
