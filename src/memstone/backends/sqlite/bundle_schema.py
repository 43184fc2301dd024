"""The tables of the store bundle in SQLite: principals, tokens and grants (migration 4); the capture review
queue and the store's settings (migration 6).

The principal store used to create ``auth_*`` tables itself, with a column named ``user``; migration 4 renames
it to ``user_name`` (a reserved word in PostgreSQL), so one engine-neutral store (``backends/sql/principals.py``)
reads the same columns on every engine. Rows already there are kept as they are.
"""

from __future__ import annotations

import apsw

from ..sql.ddl import SQLITE, auth_tables, capture_tables

AUTH = auth_tables(SQLITE)


def create_auth(conn: apsw.Connection) -> None:
    """Create the auth tables, or bring the old principal store's tables (column ``user``) to this layout."""
    columns = {str(r[1]) for r in conn.execute("PRAGMA table_info(auth_principals)").fetchall()}
    if "user" in columns and "user_name" not in columns:
        conn.execute("ALTER TABLE auth_principals RENAME COLUMN user TO user_name")
    conn.execute(AUTH)


CAPTURE = capture_tables(SQLITE)

__all__ = ["AUTH", "CAPTURE", "create_auth"]
