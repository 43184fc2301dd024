"""psycopg errors → memstone errors, at the engine's edge. Nothing above this module sees a psycopg exception."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import psycopg
import psycopg.errors
import psycopg_pool

from ...domain.errors import BackendError, BackendUnavailable, IntegrityError, MemstoneError, RevisionConflictError


def _where(url: str) -> str:
    """The server and database of a URL, without its password."""
    try:
        info = psycopg.conninfo.conninfo_to_dict(url)
    except psycopg.ProgrammingError:
        return "the PostgreSQL server"
    host = info.get("host") or "localhost"
    return f"PostgreSQL at {host}:{info.get('port') or 5432}/{info.get('dbname') or ''}"


@contextmanager
def translated(memory_id: str = "", *, base: int = 0, url: str = "") -> Iterator[None]:
    """Translate psycopg errors; inside a commit (``memory_id``), a unique or serialization violation means another
    writer won the race for that Memory."""
    try:
        yield
    except MemstoneError:
        raise
    except psycopg.errors.RaiseException as exc:
        if "append-only" in str(exc):
            raise IntegrityError(f"refused to rewrite authoritative data: {exc.diag.message_primary}") from exc
        raise BackendError(f"PostgreSQL error: {exc}", orig=exc) from exc
    except (
        psycopg.errors.UniqueViolation,
        psycopg.errors.SerializationFailure,
        psycopg.errors.DeadlockDetected,
    ) as exc:
        if memory_id:
            raise RevisionConflictError(memory_id, expected=base) from exc
        raise BackendError(f"constraint failed: {exc}", orig=exc) from exc
    except psycopg.errors.ReadOnlySqlTransaction as exc:
        raise BackendUnavailable(
            f"{_where(url)} refused the write: the server or this session is read-only ({exc})",
            orig=exc,
            hint="reads work; connect to the primary to write",
        ) from exc
    except psycopg.errors.InsufficientPrivilege as exc:
        raise BackendUnavailable(
            f"{_where(url)} refused: {exc}",
            orig=exc,
            hint="grant memstone's role the rights on its schema (docs/engines/postgresql.md)",
        ) from exc
    except (psycopg.OperationalError, psycopg_pool.PoolTimeout) as exc:
        raise BackendUnavailable(
            f"cannot reach {_where(url)}: {exc}",
            orig=exc,
            hint="check the URL (postgresql://USER[:PASSWORD]@HOST[:PORT]/DATABASE) and that the server runs",
        ) from exc
    except psycopg.Error as exc:
        raise BackendError(f"PostgreSQL error: {exc}", orig=exc) from exc
