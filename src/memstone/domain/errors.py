"""The one error tree of memstone.

Every error carries a stable ``code`` that front ends (CLI exit codes, HTTP status, MCP messages) map from,
never from message text::

    MemstoneError                         code
    ├── NotFound                          not_found            HTTP 404, CLI exit 4
    │   └── ArtifactNotFoundError         artifact_not_found
    ├── Conflict                          conflict             HTTP 409, CLI exit 3
    │   ├── AlreadyExists                 already_exists
    │   └── RevisionConflictError         revision_conflict    (stale base Revision: re-read the head, retry)
    ├── InvalidInput (ValueError)         invalid_input        HTTP 422, CLI exit 2
    │   ├── InvalidCitationError          invalid_citation
    │   └── ProfileMismatchError          profile_mismatch
    ├── CapabilityNotSupportedError       capability_not_supported   HTTP 501, CLI exit 5
    ├── IntegrityError                    integrity            authoritative data is damaged; CLI exit 6
    └── BackendError                      backend              HTTP 500, CLI exit 1
        └── BackendUnavailable            backend_unavailable  HTTP 503
"""

from __future__ import annotations

from typing import ClassVar


class MemstoneError(Exception):
    """Root of every memstone error."""

    code: ClassVar[str] = "memstone_error"

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return self.message if self.hint is None else f"{self.message} ({self.hint})"

    def to_dict(self) -> dict[str, object]:
        """The error as a JSON-ready object: ``{"code": ..., "message": ..., "hint": ...}``."""
        out: dict[str, object] = {"code": self.code, "message": self.message}
        if self.hint:
            out["hint"] = self.hint
        return out


class NotFound(MemstoneError):
    code: ClassVar[str] = "not_found"


class ArtifactNotFoundError(NotFound):
    code: ClassVar[str] = "artifact_not_found"


class Conflict(MemstoneError):
    code: ClassVar[str] = "conflict"


class AlreadyExists(Conflict):
    code: ClassVar[str] = "already_exists"


class RevisionConflictError(Conflict):
    """The base Revision is no longer the head: another writer committed first."""

    code: ClassVar[str] = "revision_conflict"

    def __init__(self, memory_id: str, *, expected: int, actual: int | None = None) -> None:
        found = "unknown" if actual is None else str(actual)
        super().__init__(
            f"stale revision for {memory_id}: based on revision {expected}, head is {found}",
            hint="read the current head (memstone show / service.head) and retry the operation against it",
        )
        self.memory_id = memory_id
        self.expected = expected
        self.actual = actual


class InvalidInput(MemstoneError, ValueError):
    code: ClassVar[str] = "invalid_input"


class InvalidCitationError(InvalidInput):
    code: ClassVar[str] = "invalid_citation"


class ProfileMismatchError(InvalidInput):
    code: ClassVar[str] = "profile_mismatch"


class CapabilityNotSupportedError(MemstoneError):
    code: ClassVar[str] = "capability_not_supported"

    def __init__(self, capability: str, message: str | None = None, *, hint: str | None = None) -> None:
        super().__init__(message or f"capability not supported: {capability}", hint=hint)
        self.capability = capability


class IntegrityError(MemstoneError):
    """Authoritative data does not match its hashes. Never repaired silently."""

    code: ClassVar[str] = "integrity"


class BackendError(MemstoneError):
    code: ClassVar[str] = "backend"

    def __init__(self, message: str, *, orig: BaseException | None = None, hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.orig = orig


class BackendUnavailable(BackendError):
    code: ClassVar[str] = "backend_unavailable"


__all__ = [
    "AlreadyExists",
    "ArtifactNotFoundError",
    "BackendError",
    "BackendUnavailable",
    "CapabilityNotSupportedError",
    "Conflict",
    "IntegrityError",
    "InvalidCitationError",
    "InvalidInput",
    "MemstoneError",
    "NotFound",
    "ProfileMismatchError",
    "RevisionConflictError",
]
