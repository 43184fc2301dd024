"""apsw errors → memstone errors, at the backend edge. Nothing above this module sees an apsw exception."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import apsw

from ...domain.errors import BackendError, BackendUnavailable, IntegrityError, MemstoneError, RevisionConflictError


@contextmanager
def translated(memory_id: str = "", *, base: int = 0, path: str = "") -> Iterator[None]:
    """Translate apsw errors; ``path`` (the store file, given when opening) is named in file errors."""
    try:
        yield
    except MemstoneError:
        raise
    except apsw.BusyError as exc:
        raise BackendUnavailable(
            "the database stayed locked by another process past the busy timeout",
            orig=exc,
            hint="retry; raise MEMSTONE_BUSY_TIMEOUT_MS if many writers share the file",
        ) from exc
    except apsw.ConstraintError as exc:
        if "append-only" in str(exc):
            raise IntegrityError(f"refused to rewrite authoritative data: {exc}") from exc
        if memory_id:
            raise RevisionConflictError(memory_id, expected=base) from exc
        raise BackendError(f"constraint failed: {exc}", orig=exc) from exc
    except apsw.ReadOnlyError as exc:
        raise BackendUnavailable(
            f"the database file {path} is read-only: {exc}" if path else f"the database file is read-only: {exc}",
            orig=exc,
            hint="reads work; to write, make the file and its directory writable",
        ) from exc
    except apsw.NotADBError as exc:
        raise BackendUnavailable(
            f"not a database: {path or 'the store file'}",
            orig=exc,
            hint="check --url (or MEMSTONE_URL): that file is not a memstone store; nothing was changed",
        ) from exc
    except (apsw.CantOpenError, apsw.CorruptError) as exc:
        if path:
            raise BackendUnavailable(f"cannot use the database file {path}: {exc}", orig=exc) from exc
        raise BackendUnavailable(f"cannot use the database file: {exc}", orig=exc) from exc
    except apsw.Error as exc:
        raise BackendError(f"SQLite error: {exc}", orig=exc) from exc
