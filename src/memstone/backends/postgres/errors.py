"""psycopg errors → memstone errors, at the engine's edge. Nothing above this module sees a psycopg exception."""

from __future__ import annotations

from contextlib import AbstractContextManager

import psycopg
import psycopg.errors

from ...domain.errors import BackendError, BackendUnavailable, IntegrityError, MemstoneError, RevisionConflictError
from ..sql.engine import StaleStart, driver_errors

# What a statement queued with ``PostgresConn.defer_one`` raises when it changed no row (a failed cast to int:
# plain SQL has no RAISE): the head moved under a compare-and-swap sent with COMMIT.
ROW_MOVED = "memstone: the row to change was moved by another writer"
# What a guard queued with ``PostgresConn.defer_guard`` raises when its condition does not hold.
STALE_START = "memstone: the start state of the write changed"


def _where(url: str) -> str:
    """The server and database of a URL, without its password."""
    try:
        info = psycopg.conninfo.conninfo_to_dict(url)
    except psycopg.ProgrammingError:
        return "the PostgreSQL server"
    host = info.get("host") or "localhost"
    return f"PostgreSQL at {host}:{info.get('port') or 5432}/{info.get('dbname') or ''}"


# The errors that leave the store usable once the cause is fixed: the kind, the message (``{where}``: the server,
# ``{exc}``: its words) and what to do. A PoolTimeout is an OperationalError.
_UNAVAILABLE: tuple[tuple[type[psycopg.Error], str, str], ...] = (
    (
        psycopg.errors.ReadOnlySqlTransaction,
        "{where} refused the write: the server or this session is read-only ({exc})",
        "reads work; connect to the primary to write",
    ),
    (
        psycopg.errors.InsufficientPrivilege,
        "{where} refused: {exc}",
        "grant memstone's role the rights on its schema (docs/engines/postgresql.md)",
    ),
    (
        psycopg.OperationalError,
        "cannot reach {where}: {exc}",
        "check the URL (postgresql://USER[:PASSWORD]@HOST[:PORT]/DATABASE) and that the server runs",
    ),
)


def translated(memory_id: str = "", *, base: int = 0, url: str = "") -> AbstractContextManager[None]:
    """Translate psycopg errors; inside a commit (``memory_id``), a unique or serialization violation means another
    writer won the race for that Memory."""
    return driver_errors(psycopg.Error, lambda exc: _translate(exc, memory_id, base, url))


def _translate(exc: psycopg.Error, memory_id: str, base: int, url: str) -> MemstoneError:
    if isinstance(exc, psycopg.errors.RaiseException):
        if "append-only" in str(exc):
            return IntegrityError(f"refused to rewrite authoritative data: {exc.diag.message_primary}")
        return BackendError(f"PostgreSQL error: {exc}", orig=exc)
    if isinstance(exc, psycopg.errors.InvalidTextRepresentation) and STALE_START in str(exc):
        return StaleStart("the write's start state changed after it was sent", orig=exc)
    moved = isinstance(exc, psycopg.errors.InvalidTextRepresentation) and ROW_MOVED in str(exc)
    if moved or isinstance(
        exc, psycopg.errors.UniqueViolation | psycopg.errors.SerializationFailure | psycopg.errors.DeadlockDetected
    ):
        if memory_id:
            return RevisionConflictError(memory_id, expected=base)
        return BackendError(f"constraint failed: {exc}", orig=exc)
    for kind, message, hint in _UNAVAILABLE:
        if isinstance(exc, kind):
            return BackendUnavailable(message.format(where=_where(url), exc=exc), orig=exc, hint=hint)
    return BackendError(f"PostgreSQL error: {exc}", orig=exc)
