"""The one error tree of memstone.

Every error carries a stable ``code`` that front ends (CLI exit codes, HTTP status, MCP messages) map from,
never from message text::

    MemstoneError                         code
    ├── NotFound                          not_found            HTTP 404, CLI exit 4
    │   └── ArtifactNotFoundError         artifact_not_found
    ├── Conflict                          conflict             HTTP 409, CLI exit 3
    │   ├── AlreadyExists                 already_exists
    │   └── RevisionConflictError         revision_conflict    (stale base Revision: re-read the head, retry)
    │       └── StaleEntryError           revision_conflict    (an update's expected version is not current)
    │   └── MaintenanceBusyError          maintenance_busy     (another maintenance run holds the scope's lease)
    ├── InvalidInput (ValueError)         invalid_input        HTTP 422, CLI exit 2
    │   ├── EntryInactiveError            entry_inactive       (forgotten: reactivate it before revising it)
    │   ├── InvalidCitationError          invalid_citation
    │   ├── ProfileMismatchError          profile_mismatch
    │   └── SecretRefusedError            secret_refused       (a write held a secret; nothing was stored)
    ├── CapabilityNotSupportedError       capability_not_supported   HTTP 501, CLI exit 5
    ├── IntegrityError                    integrity            authoritative data is damaged; CLI exit 6
    ├── AccessError                       access               (never raised itself) CLI exit 7
    │   ├── Unauthenticated               unauthenticated      HTTP 401: no token, or an unknown or revoked one
    │   └── Forbidden                     forbidden            HTTP 403: the principal's grants do not allow it
    └── BackendError                      backend              HTTP 500, CLI exit 1
        └── BackendUnavailable            backend_unavailable  HTTP 503
            └── StoreMigratingError       store_migrating      (writes pause during `memstone reembed`)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar, TypeVar

T = TypeVar("T")


def shown(value: object, limit: int = 200) -> str:
    """A caller's value as an error message shows it: its ``repr``, cut to ``limit`` characters. An integer past
    64 bits is shown by its size and a value whose ``repr`` fails (nested past the recursion limit, or holding an
    integer past ``str()``'s 4300 digits) by its type, so that refusing bad input never fails itself."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 64:
        return f"a {value.bit_length()}-bit integer"
    try:
        text = repr(value)
    except (RecursionError, ValueError):
        return f"a {type(value).__name__} too deep or too large to show"
    return text if len(text) <= limit else text[: limit - 1] + "…"


def by_class(exc: BaseException, table: Sequence[tuple[type[BaseException], T]], default: T) -> T:
    """What a front end's ``table`` (error class, value; most specific class first) gives ``exc``: the value of
    the first row whose class ``exc`` is an instance of, else ``default``. Every front end maps errors this way."""
    return next((value for cls, value in table if isinstance(exc, cls)), default)


class MemstoneError(Exception):
    """Root of every memstone error."""

    code: ClassVar[str] = "memstone_error"

    def __init_subclass__(cls, *, code: str | None = None, **kwargs: object) -> None:
        """``class NotFound(MemstoneError, code="not_found")``: a subclass names its code in its header, as the
        tree above does; without one it keeps its parent's (``StaleEntryError`` is a ``revision_conflict``)."""
        super().__init_subclass__(**kwargs)
        if code is not None:
            cls.code = code

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


class NotFound(MemstoneError, code="not_found"):
    """The named memory, entry, version or Revision does not exist."""


class ArtifactNotFoundError(NotFound, code="artifact_not_found"):
    """No such Memory, or no such Revision of it."""


class Conflict(MemstoneError, code="conflict"):
    """The write conflicts with the current state of the store."""


class AlreadyExists(Conflict, code="already_exists"):
    """Something that must be unique (a scope binding, a live slug) is already taken."""


class RevisionConflictError(Conflict, code="revision_conflict"):
    """The base Revision is no longer the head: another writer committed first."""

    def __init__(self, memory_id: str, *, expected: int, actual: int | None = None) -> None:
        found = "unknown" if actual is None else str(actual)
        super().__init__(
            f"stale revision for {memory_id}: based on revision {expected}, head is {found}",
            hint="read the current head (memstone show / service.head) and retry the operation against it",
        )
        self.memory_id = memory_id
        self.expected = expected
        self.actual = actual


class StaleEntryError(RevisionConflictError):
    """An update named the version it read, and the entry has changed since (optimistic concurrency)."""

    def __init__(self, entry_id: str, *, memory_id: str, expected: int | str, actual: int) -> None:
        MemstoneError.__init__(
            self,
            f"stale: you read {expected} of {entry_id}, it is now at version {actual}",
            hint="re-read the entry, apply your change again, and send the version you read",
        )
        self.memory_id = memory_id
        self.entry_id = entry_id
        self.expected = expected if isinstance(expected, int) else 0
        self.expected_ref = expected
        self.actual = actual


class LiveDuplicateError(Conflict):
    """A write plan's new entry (``WritePlan.unless_live``) is live and active at its base: the commit wrote
    nothing. The service plans the write again without that entry (``Writes.remember_outcome``); no caller sees it."""

    def __init__(self) -> None:
        super().__init__("a new entry of this write is already live at its base; nothing was written")


class MaintenanceBusyError(Conflict, code="maintenance_busy"):
    """Another maintenance run holds the scope's lease, and the caller asked not to wait for it."""


class InvalidInput(MemstoneError, ValueError, code="invalid_input"):
    """The request is malformed or breaks a rule; the message says what to change. Nothing was written."""


class EntryInactiveError(InvalidInput, code="entry_inactive"):
    """The entry was forgotten: reactivate it before revising it."""


class InvalidCitationError(InvalidInput, code="invalid_citation"):
    """A citation (memory ref + entry + version + hash) does not match what its Revision committed to."""


class SecretRefusedError(InvalidInput, code="secret_refused"):
    """A write carried something that looks like a secret (key, token, password); nothing was stored.

    The message names the kind of secret and the field, never the value.
    """


class ProfileMismatchError(InvalidInput, code="profile_mismatch"):
    """An embedding model or vector does not match the store's fixed embedding profile."""


class CapabilityNotSupportedError(MemstoneError, code="capability_not_supported"):
    """The backend or configuration cannot do this (e.g. vector search without a complete projection)."""

    def __init__(self, capability: str, message: str | None = None, *, hint: str | None = None) -> None:
        super().__init__(message or f"capability not supported: {capability}", hint=hint)
        self.capability = capability


class IntegrityError(MemstoneError, code="integrity"):
    """Authoritative data does not match its hashes. Never repaired silently."""


class AccessError(MemstoneError, code="access"):
    """The request was refused by access control (``memstone.auth``). Nothing was read or written."""


class Unauthenticated(AccessError, code="unauthenticated"):
    """The request carries no token, or one that is unknown or revoked."""


class Forbidden(AccessError, code="forbidden"):
    """The principal is known, but no grant allows this operation on this scope."""


class BackendError(MemstoneError, code="backend"):
    """The storage engine failed."""

    def __init__(self, message: str, *, orig: BaseException | None = None, hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.orig = orig


class BackendUnavailable(BackendError, code="backend_unavailable"):
    """The engine cannot serve the request now (locked past the timeout, unreachable, unusable file)."""


class StoreMigratingError(BackendUnavailable, code="store_migrating"):
    """Writes are paused while the store migrates to another embedding profile; retry shortly."""


__all__ = [
    "AccessError",
    "AlreadyExists",
    "ArtifactNotFoundError",
    "BackendError",
    "BackendUnavailable",
    "CapabilityNotSupportedError",
    "Conflict",
    "EntryInactiveError",
    "Forbidden",
    "IntegrityError",
    "InvalidCitationError",
    "InvalidInput",
    "MaintenanceBusyError",
    "MemstoneError",
    "NotFound",
    "ProfileMismatchError",
    "RevisionConflictError",
    "SecretRefusedError",
    "StaleEntryError",
    "StoreMigratingError",
    "Unauthenticated",
]
