"""The tables of governed maintenance (issue #14) in SQLite: created by migration 3, given an engine-neutral
``seq`` key by migration 5 (``seq_statements``); used by ``backends/sql/maintenance.py``. Their columns are
written once for every engine in ``backends/sql/ddl.py``.

Migration 3's run, proposal and event tables were ordered by SQLite's ``rowid``, which no other engine has.
Migration 5 rebuilds them with ``seq INTEGER PRIMARY KEY`` filled from the old ``rowid``: every row and its order
are kept, and the same SQL orders them on every engine.
"""

from __future__ import annotations

from ..sql.ddl import MAINTENANCE_RECORDS, SQLITE, maintenance_record_columns, maintenance_state_tables

# Migration 3 made these tables without STRICT, and every store has them so; its key-only ledger has no rowid.
MAINTENANCE_TYPES = SQLITE._replace(end="", without_rowid=" WITHOUT ROWID")

# Migration 3 as it was: the lease, the ledger and the record tables ordered by ``rowid`` (migration 5 rebuilds them).
DDL = (
    maintenance_state_tables(MAINTENANCE_TYPES)
    + """CREATE TABLE IF NOT EXISTS maintenance_runs (
    run_id TEXT PRIMARY KEY,
    scope TEXT NOT NULL,
    status TEXT NOT NULL,
    record TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS maintenance_runs_scope ON maintenance_runs (scope);
CREATE TABLE IF NOT EXISTS maintenance_proposals (
    proposal_id TEXT PRIMARY KEY,
    run_id TEXT NOT NULL,
    scope TEXT NOT NULL,
    status TEXT NOT NULL,
    record TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS maintenance_proposals_run ON maintenance_proposals (run_id);
CREATE INDEX IF NOT EXISTS maintenance_proposals_scope ON maintenance_proposals (scope, status);
CREATE TABLE IF NOT EXISTS maintenance_events (
    event_id TEXT PRIMARY KEY,
    scope TEXT NOT NULL,
    record TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS maintenance_events_scope ON maintenance_events (scope);
"""
)


def seq_statements() -> str:
    """Migration 5: rebuild each record table with ``seq`` (its old ``rowid``), keeping every row and index."""
    out = []
    for table, (_, indexes) in MAINTENANCE_RECORDS.items():
        columns, names = maintenance_record_columns(MAINTENANCE_TYPES, table)
        out.append(
            f"CREATE TABLE {table}_v5 ({MAINTENANCE_TYPES.seq}, {columns});\n"
            f"INSERT INTO {table}_v5 (seq, {names}) SELECT rowid, {names} FROM {table} ORDER BY rowid;\n"
            f"DROP TABLE {table};\nALTER TABLE {table}_v5 RENAME TO {table};\n{indexes}"
        )
    return "\n".join(out)


__all__ = ["DDL", "MAINTENANCE_TYPES", "seq_statements"]
