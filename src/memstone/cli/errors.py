"""Error → exit code, the CLI's one mapping (by error class, never by message text)."""

from __future__ import annotations

from ..auth.errors import AccessError
from ..domain.errors import (
    BackendError,
    CapabilityNotSupportedError,
    Conflict,
    IntegrityError,
    InvalidInput,
    MemstoneError,
    NotFound,
)

EXIT_CODES: tuple[tuple[type[MemstoneError], int], ...] = (
    (InvalidInput, 2),
    (Conflict, 3),
    (NotFound, 4),
    (CapabilityNotSupportedError, 5),
    (IntegrityError, 6),
    (BackendError, 1),
    (AccessError, 7),
)


def exit_code(exc: MemstoneError) -> int:
    for cls, code in EXIT_CODES:
        if isinstance(exc, cls):
            return code
    return 1
