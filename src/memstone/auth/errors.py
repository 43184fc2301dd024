"""Access-control errors. They join the one error tree under :class:`memstone.MemstoneError`::

    MemstoneError
    └── AccessError                 access          (never raised itself)
        ├── Unauthenticated         unauthenticated HTTP 401, CLI exit 7: no token, or an unknown or revoked one
        └── Forbidden               forbidden       HTTP 403, CLI exit 7: the principal's grants do not allow it

Front ends map them by class, like every other error (``api/http/errors.py``, ``cli/errors.py``).
"""

from __future__ import annotations

from typing import ClassVar

from ..domain.errors import MemstoneError


class AccessError(MemstoneError):
    """The request was refused by access control. Nothing was read or written."""

    code: ClassVar[str] = "access"


class Unauthenticated(AccessError):
    """The request carries no token, or one that is unknown or revoked."""

    code: ClassVar[str] = "unauthenticated"


class Forbidden(AccessError):
    """The principal is known, but no grant allows this operation on this scope."""

    code: ClassVar[str] = "forbidden"


__all__ = ["AccessError", "Forbidden", "Unauthenticated"]
