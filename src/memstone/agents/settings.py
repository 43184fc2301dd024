"""Agent settings: which store, which scopes, which budgets, resolved once from :class:`memstone.config.Config`.

A stdlib dataclass rather than pydantic, because the hook path must not import pydantic. Every value comes from
the config module (argument > environment > file > derived > default; ``memstone config show`` prints them), so
the MCP server, the hooks, the CLI and the Explorer address the same project and user scopes by default.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from ..backends.url import state_dir
from ..config import DEFAULT_URL, Config
from ..domain.errors import InvalidInput
from ..domain.scopes import ANONYMOUS, canonical_scope, parse_scope

ScopeChoice = Literal["project", "user", "all"]


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentSettings:
    """What the MCP server and the hooks need to know, resolved once."""

    url: str | None
    project_scope: str | None
    user_scope: str = ANONYMOUS
    author: str | None = None
    embedding: str | None = None  # MEMSTONE_EMBEDDING: the model the detached capture child loads (None: the store's)
    session_budget_tokens: int = 1500
    prompt_budget_tokens: int = 400
    prompt_limit: int = 3
    home: Path = field(default_factory=lambda: Path.home() / ".memstone")  # hooks.log and session state live here
    token: str | None = field(default=None, repr=False)  # a team server's API token (MEMSTONE_TOKEN)

    @classmethod
    def load(
        cls,
        *,
        url: str | None = None,
        cwd: str | os.PathLike[str] | None = None,
        scope: str | None = None,
        env: Mapping[str, str] | None = None,
    ) -> AgentSettings:
        """Resolve settings (a composition root's shorthand for ``from_config(Config.load(...))``).

        >>> AgentSettings.load(cwd="/work/main").project_scope  # doctest: +SKIP
        'memstone://orgs/local/projects/main-3f2a9c1d'
        """
        return cls.from_config(Config.load({"url": url, "scope": scope}, env=env, cwd=cwd))

    @classmethod
    def from_config(cls, config: Config) -> AgentSettings:
        """The agent settings of a resolved config. A given ``scope`` (a project or user scope) pins that tier."""
        project = config.get("project_scope")
        user = config.get("user_scope") or ANONYMOUS
        scope = config.pinned_scope()
        if scope:
            tier = parse_scope(scope).tier
            if tier == "org" and config.source("scope") == "argument":
                raise InvalidInput(f"{scope} is an org scope", hint="agents use a project scope and a user scope")
            if tier == "project":
                project = scope
            elif tier == "user":
                user = scope
        return cls(
            url=config.url,
            project_scope=canonical_scope(project) if project else None,
            user_scope=canonical_scope(user),
            author=config.get("author"),
            embedding=config.get("embedding"),
            session_budget_tokens=config.integer("hook_budget_tokens"),
            prompt_budget_tokens=config.integer("hook_prompt_tokens"),
            home=state_dir(config.url),  # the bundle's state location, computed without opening the store
            token=config.get("token"),
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


__all__ = ["DEFAULT_URL", "AgentSettings", "ScopeChoice"]
