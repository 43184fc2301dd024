"""apsw errors → memstone errors, at the backend edge. Nothing above this module sees an apsw exception."""

from __future__ import annotations

from contextlib import AbstractContextManager

import apsw

from ...domain.errors import BackendError, BackendUnavailable, IntegrityError, MemstoneError, RevisionConflictError
from ..sql.engine import driver_errors

# The errors that name a cause to fix: the kind, the message (``{file}``: the database file, with its path when
# known; ``{exc}``: apsw's words) and what to do.
_UNAVAILABLE: tuple[tuple[type[apsw.Error] | tuple[type[apsw.Error], ...], str, str | None], ...] = (
    (
        apsw.BusyError,
        "the database stayed locked by another process past the busy timeout",
        "retry; raise MEMSTONE_BUSY_TIMEOUT_MS if many writers share the file",
    ),
    (
        apsw.ReadOnlyError,
        "{file} is read-only: {exc}",
        "reads work; to write, make the file and its directory writable",
    ),
    (
        apsw.NotADBError,
        "not a database: {store}",
        "check --url (or MEMSTONE_URL): that file is not a memstone store; nothing was changed",
    ),
    ((apsw.CantOpenError, apsw.CorruptError), "cannot use {file}: {exc}", None),
)


def translated(memory_id: str = "", *, base: int = 0, path: str = "") -> AbstractContextManager[None]:
    """Translate apsw errors; ``path`` (the store file, given when opening) is named in file errors."""
    return driver_errors(apsw.Error, lambda exc: _translate(exc, memory_id, base, path))


def _translate(exc: apsw.Error, memory_id: str, base: int, path: str) -> MemstoneError:
    if isinstance(exc, apsw.ConstraintError):
        if "append-only" in str(exc):
            return IntegrityError(f"refused to rewrite authoritative data: {exc}")
        if memory_id:
            return RevisionConflictError(memory_id, expected=base)
        return BackendError(f"constraint failed: {exc}", orig=exc)
    file = f"the database file {path}" if path else "the database file"
    for kind, message, hint in _UNAVAILABLE:
        if isinstance(exc, kind):
            return BackendUnavailable(
                message.format(file=file, store=path or "the store file", exc=exc), orig=exc, hint=hint
            )
    return BackendError(f"SQLite error: {exc}", orig=exc)
