"""The server only reads the principal store, so it opens it read-only and creates nothing (issue 12, finding 11).

Before, every server opened the principal store read-write and created the auth tables on start: serving a
read-only backup in token mode failed, and even a local server wrote tables into the store it served.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import apsw
import pytest
from api_support import Server, ServerFactory

from memstone import EntryInput, open_service
from memstone.api.http.app import open_principals
from memstone.domain.errors import BackendUnavailable
from process_support import as_ordinary_user

SCOPE = "memstone://orgs/acme/projects/web"


def auth_rows(db: Path) -> dict[str, int]:
    conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        tables = [
            r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE name LIKE 'auth_%' AND type = 'table'")
        ]
        return {t: conn.execute(f"SELECT count(*) FROM {t}").fetchall()[0][0] for t in sorted(tables)}
    finally:
        conn.close()


async def test_a_local_server_writes_no_principal_into_the_store(make_server: ServerFactory, tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    async with open_service(f"sqlite:///{db}", embedding=None) as svc:
        await svc.remember(scope=SCOPE, entries=[EntryInput(kind="fact", text="A fact.")])
    empty = {"auth_grants": 0, "auth_principals": 0, "auth_tokens": 0}
    assert auth_rows(db) == empty  # the engine's migrations made the tables; nothing is in them
    server = await make_server()
    assert (await server.client.get("/api/session")).status_code == 200
    assert auth_rows(db) == empty


async def test_the_servers_principal_store_refuses_writes(remote: Server) -> None:
    with pytest.raises(BackendUnavailable, match="read-only"):
        await remote.state.principals.ensure_principal(user="mallory", org="acme")
    assert await remote.state.principals.principal(user="mallory") is None


async def test_a_read_only_store_reads_as_having_no_principals(tmp_path: Path) -> None:
    store = await open_principals(f"sqlite:///{tmp_path / 'absent.db'}", read_only=True)
    try:
        assert await store.has_active_tokens() is False
        assert await store.authenticate("mst_" + "x" * 40) is None
        assert await store.tokens() == []
    finally:
        await store.aclose()
    assert not (tmp_path / "absent.db").exists()


CHILD = textwrap.dedent(
    """
    import asyncio, json, sys
    import httpx2
    from memstone.api.http import Settings, create_app

    async def main(url, token):
        app = create_app(Settings(url=url, embedding="none", auth="token", host="0.0.0.0"))
        out = {}
        async with app.router.lifespan_context(app):
            transport = httpx2.ASGITransport(app=app, client=("127.0.0.1", 5000))
            async with httpx2.AsyncClient(transport=transport, base_url="http://memstone.example") as c:
                auth = {"Authorization": "Bearer " + token}
                out["session"] = (await c.get("/api/session", headers=auth)).status_code
                found = await c.get("/api/memories/search", params={"q": "deploy", "scope": sys.argv[3]}, headers=auth)
                out["search"] = [found.status_code, len(found.json().get("hits", []))]
                out["anonymous"] = (await c.get("/api/session")).status_code
        print(json.dumps(out))

    asyncio.run(main(sys.argv[1], sys.argv[2]))
    """
)


async def test_a_token_server_serves_a_read_only_backup(tmp_path: Path) -> None:
    backup = tmp_path / "backup"
    backup.mkdir()
    db = backup / "m.db"
    async with open_service(f"sqlite:///{db}", embedding=None) as svc:
        await svc.remember(scope=SCOPE, entries=[EntryInput(kind="fact", text="The backup holds the deploy notes.")])
    store = await open_principals(f"sqlite:///{db}")
    try:
        principal = await store.ensure_principal(user="bob", org="acme")
        await store.set_grant(principal.principal_id, SCOPE, "read")
        _, token = await store.issue_token(principal.principal_id)
    finally:
        await store.aclose()
    assert sorted(p.name for p in backup.iterdir()) == ["m.db"]
    before = db.read_bytes()
    db.chmod(0o444)
    backup.chmod(0o555)
    try:
        done = subprocess.run(
            [sys.executable, "-c", CHILD, f"sqlite:///{db}", token, SCOPE],
            capture_output=True, text=True, preexec_fn=as_ordinary_user, timeout=120,
        )  # fmt: skip
    finally:
        backup.chmod(0o755)
        db.chmod(0o644)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout) == {"session": 200, "search": [200, 1], "anonymous": 401}
    assert db.read_bytes() == before
