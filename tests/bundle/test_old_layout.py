"""A SQLite store written before the store bundle keeps working: its old principal tables are migrated in place.

The old principal store created ``auth_*`` tables on its own connection, with a column named ``user``; migration 4
renames it (PostgreSQL reserves the word) and keeps every row, so tokens issued before still authenticate.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import apsw

from memstone import open_service
from memstone.api.http.app import open_principals
from memstone.auth.model import token_hash
from memstone.backends.sqlite import migrations

FIXTURE = Path(__file__).parent.parent / "fixtures" / "previous-release.db"
SECRET = "mst_" + "a1" * 20

# The DDL of the principal store before the bundle (auth/sqlite.py), as it created the tables.
OLD_AUTH = """
CREATE TABLE auth_principals (principal_id TEXT PRIMARY KEY, user TEXT NOT NULL UNIQUE, org TEXT NOT NULL,
    name TEXT, created_at TEXT NOT NULL) STRICT;
CREATE TABLE auth_tokens (token_id TEXT PRIMARY KEY, principal_id TEXT NOT NULL REFERENCES auth_principals
    (principal_id), token_hash TEXT NOT NULL UNIQUE, prefix TEXT NOT NULL, label TEXT, created_at TEXT NOT NULL,
    revoked_at TEXT) STRICT;
CREATE TABLE auth_grants (principal_id TEXT NOT NULL REFERENCES auth_principals (principal_id), scope TEXT NOT NULL,
    permission TEXT NOT NULL CHECK (permission IN ('read', 'write', 'admin')), created_at TEXT NOT NULL,
    PRIMARY KEY (principal_id, scope)) STRICT;
"""


def old_layout_store(tmp_path: Path) -> Path:
    """The previous release's store with the old principal tables and one principal, token and grant in them."""
    db = tmp_path / "old.db"
    shutil.copyfile(FIXTURE, db)
    conn = apsw.Connection(str(db))
    try:
        conn.execute(OLD_AUTH)
        conn.execute(
            "INSERT INTO auth_principals VALUES ('prn_01OLD', 'bob', 'acme', 'Bob', '2026-01-01T00:00:00.000Z')"
        )
        conn.execute(
            "INSERT INTO auth_tokens VALUES ('tok_01OLD', 'prn_01OLD', ?, ?, 'ci', '2026-01-01T00:00:00.000Z', NULL)",
            (token_hash(SECRET), SECRET[:10]),
        )
        conn.execute(
            "INSERT INTO auth_grants VALUES ('prn_01OLD', 'memstone://orgs/acme/*', 'write', '2026-01-01T00:00:00Z')"
        )
    finally:
        conn.close()
    return db


async def test_old_principal_tables_are_migrated_in_and_keep_working(tmp_path: Path) -> None:
    db = old_layout_store(tmp_path)
    url = f"sqlite:///{db}"
    async with open_service(url, embedding=None) as svc:
        assert 4 in svc.backend.state.applied_migrations
        assert (await svc.verify()).ok
    store = await open_principals(url)
    try:
        access = await store.authenticate(SECRET)
        assert access is not None and access.principal.user == "bob" and access.principal.name == "Bob"
        assert [(g.scope, g.permission) for g in access.grants] == [("memstone://orgs/acme/*", "write")]
        carol = await store.ensure_principal(user="carol", org="acme")  # the migrated tables take new rows
        assert [p.user for p in await store.principals()] == ["bob", "carol"]
        assert carol.principal_id.startswith("prn_")
    finally:
        await store.aclose()
    async with open_service(url, embedding=None) as again:  # opening again migrates nothing
        assert again.backend.state.applied_migrations == ()
        assert again.backend.state.schema_version == migrations.LATEST
