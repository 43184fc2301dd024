"""memstone: durable, versioned, searchable memory for AI agents, on one SQLite file.

The public names are imported on first use (PEP 562), so ``import memstone`` — and every ``memstone`` command,
``memstone hook`` above all — pays only for the modules it touches.
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # not typing's: every hook's own process imports this package, and typing costs it ~20 ms

if TYPE_CHECKING:
    from .domain.errors import (
        AccessError,
        AlreadyExists,
        ArtifactNotFoundError,
        BackendError,
        BackendUnavailable,
        CapabilityNotSupportedError,
        Conflict,
        EntryInactiveError,
        Forbidden,
        IntegrityError,
        InvalidCitationError,
        InvalidInput,
        MaintenanceBusyError,
        MemstoneError,
        NotFound,
        ProfileMismatchError,
        RevisionConflictError,
        SecretRefusedError,
        StaleEntryError,
        StoreMigratingError,
        Unauthenticated,
    )
    from .domain.history import BlameField, EntryDiff, FieldChange
    from .domain.model import (
        ArtifactRef,
        Change,
        Citation,
        EntryContent,
        EntryInput,
        EntryVersion,
        ManifestEntry,
        MemoryHit,
        Relation,
        Revision,
        RevisionChanges,
        SearchResult,
        Shadowed,
        Source,
        VerifyReport,
    )
    from .domain.records import CrossLink, Omission, RecallBundle, Record
    from .domain.scopes import Scope, parse_scope
    from .service import HistoryItem, MemoryService, open_service
    from .service.exchange import ExportReport, ImportReport

__version__ = "0.1.0"

# Public name -> the module that defines it (relative to this package). Keep in step with the imports above.
_LAZY: dict[str, str] = {
    **dict.fromkeys(
        (
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
        ),
        ".domain.errors",
    ),
    **dict.fromkeys(("BlameField", "EntryDiff", "FieldChange"), ".domain.history"),
    **dict.fromkeys(
        (
            "ArtifactRef",
            "Change",
            "Citation",
            "EntryContent",
            "EntryInput",
            "EntryVersion",
            "ManifestEntry",
            "MemoryHit",
            "Relation",
            "Revision",
            "RevisionChanges",
            "SearchResult",
            "Shadowed",
            "Source",
            "VerifyReport",
        ),
        ".domain.model",
    ),
    **dict.fromkeys(("CrossLink", "Omission", "RecallBundle", "Record"), ".domain.records"),
    **dict.fromkeys(("Scope", "parse_scope"), ".domain.scopes"),
    **dict.fromkeys(("ExportReport", "ImportReport"), ".service.exchange"),
    **dict.fromkeys(("HistoryItem", "MemoryService", "open_service"), ".service"),
}


def __getattr__(name: str) -> object:
    """Import a public name's module the first time the name is used, then keep the value here."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


__all__ = [
    "AccessError",
    "AlreadyExists",
    "ArtifactNotFoundError",
    "ArtifactRef",
    "BackendError",
    "BackendUnavailable",
    "BlameField",
    "CapabilityNotSupportedError",
    "Change",
    "Citation",
    "Conflict",
    "CrossLink",
    "EntryContent",
    "EntryDiff",
    "EntryInactiveError",
    "EntryInput",
    "EntryVersion",
    "ExportReport",
    "FieldChange",
    "Forbidden",
    "HistoryItem",
    "ImportReport",
    "IntegrityError",
    "InvalidCitationError",
    "InvalidInput",
    "MaintenanceBusyError",
    "ManifestEntry",
    "MemoryHit",
    "MemoryService",
    "MemstoneError",
    "NotFound",
    "Omission",
    "ProfileMismatchError",
    "RecallBundle",
    "Record",
    "Relation",
    "Revision",
    "RevisionChanges",
    "RevisionConflictError",
    "Scope",
    "SearchResult",
    "SecretRefusedError",
    "Shadowed",
    "Source",
    "StaleEntryError",
    "StoreMigratingError",
    "Unauthenticated",
    "VerifyReport",
    "__version__",
    "open_service",
    "parse_scope",
]
