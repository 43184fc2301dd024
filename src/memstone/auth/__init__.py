"""Access control for the servers: principals, hashed API tokens, per-scope grants (see ``auth/model.py``)."""

from ..domain.errors import AccessError, Forbidden, Unauthenticated
from .model import Access, Grant, Permission, Principal, TokenInfo, authorize, local_access, readable
from .store import PrincipalStore

__all__ = [
    "Access",
    "AccessError",
    "Forbidden",
    "Grant",
    "Permission",
    "Principal",
    "PrincipalStore",
    "TokenInfo",
    "Unauthenticated",
    "authorize",
    "local_access",
    "readable",
]
