"""The ``PrincipalStore`` port: principals, hashed API tokens and grants. One adapter today: ``auth/sqlite.py``."""

from __future__ import annotations

from typing import Protocol

from .model import Access, Grant, Permission, Principal, TokenInfo


class PrincipalStore(Protocol):
    """Where principals, token hashes and grants live. Every call reads the store as it is now (no cache)."""

    async def authenticate(self, token: str) -> Access | None:
        """The principal and its current grants for an active token; None for an unknown or revoked token."""
        ...

    async def principal(self, *, user: str) -> Principal | None:
        """The principal of a user id (its organization decides who may see that user's scope)."""
        ...

    async def ensure_principal(self, *, user: str, org: str, name: str | None = None) -> Principal:
        """The principal of ``user``, created in ``org`` if new; a user of another org is refused."""
        ...

    async def issue_token(self, principal_id: str, *, label: str | None = None) -> tuple[TokenInfo, str]:
        """A new token for a principal: its metadata and the secret, which is returned here only."""
        ...

    async def tokens(self, *, user: str | None = None, include_revoked: bool = False) -> list[TokenInfo]:
        """Token metadata, oldest first (never a secret)."""
        ...

    async def revoke_token(self, token_id: str) -> TokenInfo:
        """Revoke a token (idempotent); from the next request on it authenticates nothing."""
        ...

    async def set_grant(self, principal_id: str, scope: str, permission: Permission | None) -> tuple[Grant, ...]:
        """Set (or, with ``permission=None``, remove) a principal's grant on a scope; returns its grants."""
        ...

    async def grants(self, principal_id: str) -> tuple[Grant, ...]:
        """A principal's grants, sorted."""
        ...

    async def has_active_tokens(self) -> bool:
        """Whether any principal can authenticate at all (a server off 127.0.0.1 refuses to start without)."""
        ...

    async def aclose(self) -> None: ...


__all__ = ["PrincipalStore"]
