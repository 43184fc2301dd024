"""The tables of governed maintenance (issue #14), created by migration 3; used by ``maintenance.py``."""

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

__all__ = ["DDL"]
