"""The tables of the store bundle in SQLite: principals, tokens and grants (migration 4); the capture review
queue and the store's settings (migration 6).

The principal store used to create ``auth_*`` tables itself, with a column named ``user``; migration 4 renames
it to ``user_name`` (a reserved word in PostgreSQL), so one engine-neutral store (``backends/sql/principals.py``)
reads the same columns on every engine. Rows already there are kept as they are.
"""

from __future__ import annotations

import apsw

AUTH = """
CREATE TABLE IF NOT EXISTS auth_principals (
    principal_id TEXT PRIMARY KEY,
    user_name TEXT NOT NULL UNIQUE,
    org TEXT NOT NULL,
    name TEXT,
    created_at TEXT NOT NULL
) STRICT;
CREATE TABLE IF NOT EXISTS auth_tokens (
    token_id TEXT PRIMARY KEY,
    principal_id TEXT NOT NULL REFERENCES auth_principals (principal_id),
    token_hash TEXT NOT NULL UNIQUE,
    prefix TEXT NOT NULL,
    label TEXT,
    created_at TEXT NOT NULL,
    revoked_at TEXT
) STRICT;
CREATE TABLE IF NOT EXISTS auth_grants (
    principal_id TEXT NOT NULL REFERENCES auth_principals (principal_id),
    scope TEXT NOT NULL,
    permission TEXT NOT NULL CHECK (permission IN ('read', 'write', 'admin')),
    created_at TEXT NOT NULL,
    PRIMARY KEY (principal_id, scope)
) STRICT;
"""


def create_auth(conn: apsw.Connection) -> None:
    """Create the auth tables, or bring the old principal store's tables (column ``user``) to this layout."""
    columns = {str(r[1]) for r in conn.execute("PRAGMA table_info(auth_principals)").fetchall()}
    if "user" in columns and "user_name" not in columns:
        conn.execute("ALTER TABLE auth_principals RENAME COLUMN user TO user_name")
    conn.execute(AUTH)


CAPTURE = """
CREATE TABLE IF NOT EXISTS capture_queue (
    seq INTEGER PRIMARY KEY,
    item_id TEXT NOT NULL UNIQUE,
    item_type TEXT NOT NULL,
    scope TEXT,
    status TEXT NOT NULL,
    text_key TEXT,
    flag_key TEXT,
    created_at TEXT NOT NULL,
    record TEXT NOT NULL
) STRICT;
CREATE INDEX IF NOT EXISTS capture_queue_text ON capture_queue (text_key);
CREATE INDEX IF NOT EXISTS capture_queue_flag ON capture_queue (flag_key);
CREATE INDEX IF NOT EXISTS capture_queue_status ON capture_queue (status, scope);
CREATE TABLE IF NOT EXISTS store_settings (
    name TEXT PRIMARY KEY,
    value TEXT NOT NULL,
    updated_at TEXT NOT NULL
) STRICT;
"""

__all__ = ["AUTH", "CAPTURE", "create_auth"]
