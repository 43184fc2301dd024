"""The tables of governed maintenance (issue #14) in SQLite: created by migration 3, given an engine-neutral
``seq`` key by migration 5 (``SEQ``); used by ``backends/sql/maintenance.py``.

Migration 3's run, proposal and event tables were ordered by SQLite's ``rowid``, which no other engine has.
Migration 5 rebuilds them with ``seq INTEGER PRIMARY KEY`` filled from the old ``rowid``: every row and its order
are kept, and the same SQL orders them on every engine.
"""

from __future__ import annotations

DDL = """
CREATE TABLE IF NOT EXISTS maintenance_lease (
    scope TEXT PRIMARY KEY,
    run_id TEXT NOT NULL,
    holder TEXT NOT NULL,
    expires_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS maintenance_ledger (
    scope TEXT NOT NULL,
    entry_id TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    PRIMARY KEY (scope, entry_id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS maintenance_runs (
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

_SEQ_TABLES = {
    "maintenance_runs": (
        "run_id TEXT NOT NULL UNIQUE, scope TEXT NOT NULL, status TEXT NOT NULL, record TEXT NOT NULL",
        "run_id, scope, status, record",
        "CREATE INDEX IF NOT EXISTS maintenance_runs_scope ON maintenance_runs (scope);",
    ),
    "maintenance_proposals": (
        "proposal_id TEXT NOT NULL UNIQUE, run_id TEXT NOT NULL, scope TEXT NOT NULL, status TEXT NOT NULL, "
        "record TEXT NOT NULL",
        "proposal_id, run_id, scope, status, record",
        "CREATE INDEX IF NOT EXISTS maintenance_proposals_run ON maintenance_proposals (run_id);\n"
        "CREATE INDEX IF NOT EXISTS maintenance_proposals_scope ON maintenance_proposals (scope, status);",
    ),
    "maintenance_events": (
        "event_id TEXT NOT NULL UNIQUE, scope TEXT NOT NULL, record TEXT NOT NULL",
        "event_id, scope, record",
        "CREATE INDEX IF NOT EXISTS maintenance_events_scope ON maintenance_events (scope);",
    ),
}


def seq_statements() -> str:
    """Migration 5: rebuild each record table with ``seq`` (its old ``rowid``), keeping every row and index."""
    out = []
    for table, (columns, names, indexes) in _SEQ_TABLES.items():
        out.append(
            f"CREATE TABLE {table}_v5 (seq INTEGER PRIMARY KEY, {columns});\n"
            f"INSERT INTO {table}_v5 (seq, {names}) SELECT rowid, {names} FROM {table} ORDER BY rowid;\n"
            f"DROP TABLE {table};\nALTER TABLE {table}_v5 RENAME TO {table};\n{indexes}"
        )
    return "\n".join(out)


__all__ = ["DDL", "seq_statements"]
