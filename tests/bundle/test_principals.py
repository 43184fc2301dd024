"""The principal store lives in the store's own engine: the same behaviour on SQLite, PostgreSQL and OceanBase.

Before, principals were a second apsw connection to a SQLite file, and ``memstone serve`` refused any other engine
("access control needs a SQLite store").
"""

from __future__ import annotations

import pytest

from memstone import EntryInput, open_service
from memstone.api.http.app import open_principals, principals_of
from memstone.domain.errors import BackendUnavailable, InvalidInput, NotFound

SCOPE = "memstone://orgs/acme/projects/web"


async def test_principals_tokens_and_grants_on_every_engine(store_url: str) -> None:
    store = await open_principals(store_url)
    try:
        alice = await store.ensure_principal(user="Alice", org="acme", name="Alice A.")
        assert (alice.user, alice.org) == ("alice", "acme")
        assert await store.ensure_principal(user="alice", org="acme") == alice
        with pytest.raises(InvalidInput, match="already belongs"):
            await store.ensure_principal(user="alice", org="other")
        assert await store.has_active_tokens() is False
        info, secret = await store.issue_token(alice.principal_id, label="laptop")
        assert secret.startswith("mst_") and info.prefix == secret[:10] and info.user == "alice"
        with pytest.raises(NotFound):
            await store.issue_token("prn_missing")
        grants = await store.set_grant(alice.principal_id, "memstone://orgs/acme/*", "read")
        grants = await store.set_grant(alice.principal_id, "memstone://orgs/acme/*", "write")  # an upsert
        assert [(g.scope, g.permission) for g in grants] == [("memstone://orgs/acme/*", "write")]
        await store.set_grant(alice.principal_id, SCOPE, "admin")
        with pytest.raises(InvalidInput):
            await store.set_grant(alice.principal_id, "memstone://orgs/other", "read")
        access = await store.authenticate(secret)
        assert access is not None and access.principal == alice and access.token_id == info.token_id
        assert sorted(g.permission for g in access.grants) == ["admin", "write"]
        assert await store.authenticate("mst_" + "x" * 40) is None
        assert [t.token_id for t in await store.tokens(user="alice")] == [info.token_id]
        assert await store.has_active_tokens() is True
        revoked = await store.revoke_token(info.token_id)
        assert revoked.revoked_at is not None
        assert await store.revoke_token(info.token_id) == revoked  # idempotent
        assert await store.authenticate(secret) is None
        assert await store.tokens() == [] and len(await store.tokens(include_revoked=True)) == 1
        await store.set_grant(alice.principal_id, SCOPE, None)
        assert [g.scope for g in await store.grants(alice.principal_id)] == ["memstone://orgs/acme/*"]
    finally:
        await store.aclose()
    # A second process (here: a second open) sees the same principals; the server's view refuses writes.
    async with open_service(store_url, embedding=None) as svc:
        await svc.remember(scope=SCOPE, entries=[EntryInput(kind="fact", text="The store still works.")])
        server_view = principals_of(svc.backend, read_only=True)
        assert await server_view.principal(user="alice") == alice
        with pytest.raises(BackendUnavailable, match="read-only"):
            await server_view.ensure_principal(user="mallory", org="acme")
        assert await server_view.principal(user="mallory") is None


async def test_a_token_server_on_every_engine(store_url: str) -> None:
    """``memstone serve --auth token`` on the store's own principals: a token reads its grant, nothing else."""
    import httpx2

    from memstone.api.http import Settings, create_app

    async with open_service(store_url, embedding=None) as svc:
        await svc.remember(scope=SCOPE, entries=[EntryInput(kind="fact", text="The deploy notes live here.")])
    store = await open_principals(store_url)
    try:
        bob = await store.ensure_principal(user="bob", org="acme")
        await store.set_grant(bob.principal_id, SCOPE, "read")
        _, token = await store.issue_token(bob.principal_id)
    finally:
        await store.aclose()
    app = create_app(Settings(url=store_url, embedding="none", auth="token", host="0.0.0.0"))
    async with app.router.lifespan_context(app):
        transport = httpx2.ASGITransport(app=app, client=("127.0.0.1", 5000))
        async with httpx2.AsyncClient(transport=transport, base_url="http://memstone.example") as client:
            auth = {"Authorization": "Bearer " + token}
            assert (await client.get("/api/session", headers=auth)).status_code == 200
            found = await client.get("/api/memories/search", params={"q": "deploy", "scope": SCOPE}, headers=auth)
            assert found.status_code == 200 and len(found.json()["hits"]) == 1
            other = "memstone://orgs/acme/projects/api"
            refused = await client.get("/api/memories/search", params={"q": "deploy", "scope": other}, headers=auth)
            assert refused.status_code == 403
            assert (await client.get("/api/session")).status_code == 401
