"""Server settings: read once in a composition root (``memstone serve``, tests) and injected into ``create_app``."""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ...config import Config
from ...domain.scopes import ANONYMOUS, canonical_scope

AuthMode = Literal["local", "token"]
LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1", "[::1]"})


def is_loopback(host: str) -> bool:
    """Whether ``host`` is this machine only (127.0.0.0/8, ::1, localhost)."""
    name = host.strip().lower()
    if name in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(name.strip("[]")).is_loopback
    except ValueError:
        return False


class Settings(BaseModel):
    """What the HTTP server needs. Precedence (memstone.config): argument > environment > file > default.

    ``default_scope`` (unset: anonymous) is, from a config, the project of the working directory (else the user
    scope), the same scope the CLI, the MCP server and the hooks address.

    ``auth`` is ``local`` (no token; only on a loopback address) or ``token`` (every request carries an API
    token). Unset, it is ``local`` on a loopback address and ``token`` anywhere else.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    url: str | None = Field(default=None, description="Store URL (default MEMSTONE_URL or ~/.memstone/memstone.db).")
    host: str = "127.0.0.1"
    port: int = Field(default=8765, ge=0, le=65535)
    auth: AuthMode | None = None
    default_scope: str = ANONYMOUS
    embedding: str | None = Field(default=None, description="Embedding profile; 'none' = FTS only; None = store's.")
    author: str | None = Field(default=None, description="Author recorded on writes in local mode.")
    page_limit: int = Field(default=200, ge=1, le=1000, description="The largest page any listing returns.")

    @property
    def auth_mode(self) -> AuthMode:
        if self.auth is not None:
            return self.auth
        return "local" if is_loopback(self.host) else "token"

    @property
    def local(self) -> bool:
        """Local mode: loopback bind, single user, no token, the anonymous scope available."""
        return self.auth_mode == "local"

    @property
    def base_url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host and not self.host.startswith("[") else self.host
        return f"http://{host}:{self.port}"

    def scope(self) -> str:
        return canonical_scope(self.default_scope)

    @classmethod
    def from_config(cls, config: Config, **overrides: object) -> Settings:
        """Settings from a resolved :class:`memstone.config.Config`, then ``overrides`` (None values are ignored)."""
        values: dict[str, object] = {
            "url": config.url,
            "host": config.get("host"),
            "port": config.get("port"),
            "auth": config.get("auth"),
            "default_scope": config.default_scope,
            "embedding": config.get("embedding"),
            "author": config.get("author"),
        }
        values.update(overrides)
        return cls.model_validate({k: v for k, v in values.items() if v is not None})

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides: object) -> Settings:
        """Settings from ``MEMSTONE_*`` variables (through memstone.config), then ``overrides``."""
        return cls.from_config(Config.load(env=env), **overrides)


__all__ = ["AuthMode", "Settings", "is_loopback"]
