"""Versioned schema migrations of the SQLite engine, run on open and by ``memstone migrate``.

``store_meta.schema_version`` names the last migration applied. Each step runs in one write transaction with
the version bump, so a store is always at exactly one version; opening a store that is already current takes
no write lock. A store newer than this code is refused (upgrade memstone), never downgraded.

1. Authority, head projection, immutability triggers and the meta table (every store of the first release).
2. The record surface formally versioned: the archive projection and the slug indexes, created and filled from
   authority where a store lacks them (this used to be an ad-hoc check on every open).
3. Governed maintenance (issue #14): the scope lease, the digest ledger, run, proposal and event records
   (``backends/sqlite/maintenance_schema.py``, used by ``maintenance.py``). New tables only; nothing existing changes.
4. The store bundle's principals: the ``auth_*`` tables (``bundle_schema.py``) that the principal store used to
   create beside the core on its own connection, now the engine's; an old store's rows are kept, its column
   ``user`` renamed ``user_name``.
5. Maintenance records keyed by ``seq`` instead of SQLite's ``rowid`` (tables rebuilt, rows and order kept), so
   one engine-neutral implementation (``backends/sql/maintenance.py``) serves every engine.
6. The capture review queue and the store's settings (``bundle_schema.CAPTURE``), which used to be JSON files
   beside the database; ``sqlite/side_files.py`` moves an old store's files in when it opens.
7. Purge tombstones (issue 12): ``memory_purges`` in every store (a store that purged before has it already), so
   a copy or an import can write a purged version's tombstone with its Revision.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Protocol

import apsw

from ...domain.errors import BackendUnavailable
from ..sql.engine import Migrator
from . import bundle_schema, file, maintenance_schema, purge, schema


class SQLiteFile(file.SQLiteFile, Protocol):
    """What a migration step uses of the SQLite engine (``engine.SQLiteEngine``; a Protocol, no cycle)."""

    def write_txn(self) -> AbstractContextManager[None]: ...


@dataclass(frozen=True, slots=True)
class Migration:
    version: int
    summary: str
    apply: Callable[[apsw.Connection, Migrator], None]


def _base(conn: apsw.Connection, core: Migrator) -> None:
    conn.execute(schema.AUTHORITY)
    conn.execute(schema.immutability_triggers())
    conn.execute(schema.PROJECTIONS)
    conn.execute("INSERT OR IGNORE INTO store_meta (key, value) VALUES ('analyzer', 'v1')")


def _records_missing(conn: apsw.Connection) -> bool:
    """Whether the record-surface tables and indexes are missing (a store made by an older memstone)."""
    names = schema.RECORDS_OBJECTS
    rows: list[Any] = conn.execute(
        f"SELECT count(*) FROM sqlite_master WHERE name IN ({','.join('?' * len(names))})", names
    ).fetchall()
    return bool(rows[0][0] != len(names))


def _records(conn: apsw.Connection, core: Migrator) -> None:
    if _records_missing(conn):
        conn.execute(schema.RECORDS)
        core.rebuild_archive()


def _maintenance(conn: apsw.Connection, core: Migrator) -> None:
    conn.execute(maintenance_schema.DDL)


def _principals(conn: apsw.Connection, core: Migrator) -> None:
    bundle_schema.create_auth(conn)


def _maintenance_seq(conn: apsw.Connection, core: Migrator) -> None:
    conn.execute(maintenance_schema.seq_statements())


def _capture(conn: apsw.Connection, core: Migrator) -> None:
    conn.execute(bundle_schema.CAPTURE)


def _tombstones(conn: apsw.Connection, core: Migrator) -> None:
    conn.execute(purge.TOMBSTONES)


MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "authority, head projection, immutability triggers", _base),
    Migration(2, "record surface: archive projection and slug indexes", _records),
    Migration(3, "maintenance: scope lease, digest ledger, runs, proposals and events", _maintenance),
    Migration(4, "principals: the auth tables in the engine (old layout renamed in place)", _principals),
    Migration(5, "maintenance records ordered by seq, not rowid (tables rebuilt, rows kept)", _maintenance_seq),
    Migration(6, "capture: the review queue and the store's settings", _capture),
    Migration(7, "purge tombstones", _tombstones),
)
LATEST = MIGRATIONS[-1].version


def stored_version(conn: apsw.Connection) -> int:
    """The schema version recorded in a store (0 for a new, empty database)."""
    tables: list[Any] = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'store_meta'"
    ).fetchall()
    if not tables:
        return 0
    row: list[Any] = conn.execute("SELECT value FROM store_meta WHERE key = 'schema_version'").fetchall()
    return int(row[0][0]) if row else 0


def migrate(backend: SQLiteFile, core: Migrator) -> tuple[int, ...]:
    """Apply every pending migration, each in its own write transaction; returns the versions applied."""
    conn = backend.raw
    current = stored_version(conn)
    if current > LATEST:
        raise BackendUnavailable(
            f"{backend.path} has schema version {current}, newer than this memstone ({LATEST})", hint="upgrade memstone"
        )
    applied: list[int] = []
    for step in MIGRATIONS:
        if step.version <= current:
            continue
        with backend.write_txn():
            if stored_version(conn) >= step.version:  # another process migrated it while we waited for the lock
                continue
            step.apply(conn, core)
            conn.execute(
                "INSERT INTO store_meta (key, value) VALUES ('schema_version', ?) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (str(step.version),),
            )
        applied.append(step.version)
    return tuple(applied)
