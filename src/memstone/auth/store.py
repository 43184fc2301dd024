"""The ``PrincipalStore`` port: principals, hashed API tokens and grants.

They live in the memory store itself: every engine's backend offers ``principal_store()`` (the engine-neutral
``backends/sql/principals.py`` over the engine's ``auth_*`` tables), so access control works on every engine.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from ..domain.errors import BackendUnavailable, InvalidInput
from .model import Access, Grant, Permission, Principal, PrincipalRecords, TokenInfo


class PrincipalStore(Protocol):
    """Where principals, token hashes and grants live. Every call reads the store as it is now (no cache)."""

    async def authenticate(self, token: str) -> Access | None:
        """The principal and its current grants for an active token; None for an unknown or revoked token."""
        ...

    async def principal(self, *, user: str) -> Principal | None:
        """The principal of a user id (its organization decides who may see that user's scope)."""
        ...

    async def principals(self) -> list[Principal]:
        """Every principal, oldest first."""
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

    async def records(self) -> PrincipalRecords:
        """Every principal, token (with its hash) and grant, with their ids (``memstone copy``)."""
        ...

    async def insert_records(self, records: PrincipalRecords, *, origin: str | None = None) -> int:
        """Insert rows with the ids they carry (another store's :meth:`records`); rows already here with the same
        id are kept, a revocation travels, grants take the given permission. Returns how many rows changed. A user
        here under another principal id, or a token id with another hash, is a Conflict and nothing is written.
        With ``origin`` (the source's name), a grant an earlier copy from that source wrote and the source has
        removed since is removed here too; grants made here stay."""
        ...

    async def aclose(self) -> None: ...


@runtime_checkable
class PrincipalHost(Protocol):
    """A backend that keeps principals (every SQL engine's ``StoreCore``)."""

    def principal_store(self, *, read_only: bool = False, owned: bool = False) -> PrincipalStore: ...


def principals_of(backend: object, *, read_only: bool, owned: bool = False) -> PrincipalStore:
    """The principal store kept in an open backend's own engine; a backend without one is refused by name.
    ``owned``: closing the principal store closes the backend."""
    if not isinstance(backend, PrincipalHost):
        raise InvalidInput(
            f"access control needs a store that keeps principals; {type(backend).__name__} does not",
            hint="serve a sqlite:, postgresql:, oceanbase: or lancedb: store",
        )
    return backend.principal_store(read_only=read_only, owned=owned)


class NoPrincipals:
    """The principals of a store that does not exist yet: none (a read never creates the store)."""

    async def authenticate(self, token: str) -> Access | None:
        return None

    async def principal(self, *, user: str) -> Principal | None:
        return None

    async def principals(self) -> list[Principal]:
        return []

    async def tokens(self, *, user: str | None = None, include_revoked: bool = False) -> list[TokenInfo]:
        return []

    async def grants(self, principal_id: str) -> tuple[Grant, ...]:
        return ()

    async def has_active_tokens(self) -> bool:
        return False

    def _refused(self) -> BackendUnavailable:
        return BackendUnavailable(
            "the principal store is open read-only here: the write was refused",
            hint="manage principals and tokens with `memstone token …`",
        )

    async def ensure_principal(self, *, user: str, org: str, name: str | None = None) -> Principal:
        raise self._refused()

    async def issue_token(self, principal_id: str, *, label: str | None = None) -> tuple[TokenInfo, str]:
        raise self._refused()

    async def revoke_token(self, token_id: str) -> TokenInfo:
        raise self._refused()

    async def set_grant(self, principal_id: str, scope: str, permission: Permission | None) -> tuple[Grant, ...]:
        raise self._refused()

    async def records(self) -> PrincipalRecords:
        return PrincipalRecords()

    async def insert_records(self, records: PrincipalRecords, *, origin: str | None = None) -> int:
        raise self._refused()

    async def aclose(self) -> None:
        return None


__all__ = ["NoPrincipals", "PrincipalHost", "PrincipalStore", "principals_of"]
