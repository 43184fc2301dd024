"""Access control: every rule, refused with the right status, with nothing written.

Rules (memstone/auth/model.py): tokens are checked at every request against the store (no cache); an org's data
is invisible to other orgs; grants per scope (read < write < admin); the owner of a write comes from the URL's
scope and the principal, never the body; a user scope is its user's (or an admin on '*'); the anonymous scope
exists only in local mode; local mode answers only this machine.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import apsw
import pytest
from api_support import Server, ServerFactory

from memstone.domain.errors import InvalidInput

ACME_WEB = "memstone://orgs/acme/projects/web"
ACME = "memstone://orgs/acme"
GLOBEX = "memstone://orgs/globex/projects/app"


async def post(server: Server, token: str, where: str | None, **body: Any) -> Any:
    params = {"scope": where} if where else {}
    return await server.client.post(
        "/api/memories", params=params, json={"kind": "fact", "text": "A fact.", **body}, headers=server.as_(token)
    )


@pytest.fixture
async def world(remote: Server) -> dict[str, Any]:
    """Two orgs. acme: alice (write on web), bob (read on web), root (admin on '*'). globex: eve (write on '*')."""
    alice, alice_id = await remote.token("alice", "acme", {ACME_WEB: "write"})
    bob, _ = await remote.token("bob", "acme", {ACME_WEB: "read"})
    root, _ = await remote.token("carol", "acme", {"*": "admin"})
    eve, _ = await remote.token("eve", "globex", {"*": "write"})
    created = await post(remote, alice, ACME_WEB, text="Acme deploys with uv.")
    assert created.status_code == 201, created.text
    mine = await post(remote, alice, None, text="Alice prefers tabs.")
    assert mine.status_code == 201
    theirs = await post(remote, eve, GLOBEX, text="Globex secret plan.")
    assert theirs.status_code == 201
    return {
        "alice": alice,
        "alice_token_id": alice_id,
        "bob": bob,
        "root": root,
        "eve": eve,
        "acme_entry": created.json()["record"],
        "alice_entry": mine.json()["record"],
        "globex_entry": theirs.json()["record"],
    }


# ---------------------------------------------------------------------------------------------- authentication
@pytest.mark.parametrize(
    "headers",
    [
        pytest.param({}, id="no-token"),
        pytest.param({"Authorization": "Bearer"}, id="empty-bearer"),
        pytest.param({"Authorization": "Basic YWxpY2U6cHc="}, id="basic-auth"),
        pytest.param({"Authorization": "Bearer mst_not-a-real-token"}, id="unknown-token"),
    ],
)
async def test_requests_without_a_valid_token_are_401(
    world: dict[str, Any], remote: Server, headers: dict[str, str]
) -> None:
    before = await remote.counts()
    for method, path in (
        ("GET", "/api/session"),
        ("GET", f"/api/memories?scope={ACME_WEB}"),
        ("POST", "/api/memories"),
    ):
        r = await remote.client.request(method, path, headers=headers, json={"kind": "fact", "text": "x"})
        assert r.status_code == 401, (method, path)
        assert r.json()["error"]["code"] == "unauthenticated"
        assert r.headers["www-authenticate"].startswith("Bearer")
    assert await remote.counts() == before


async def test_a_revoked_token_is_refused_at_the_next_request(world: dict[str, Any], remote: Server) -> None:
    alice = world["alice"]
    assert (await remote.client.get("/api/session", headers=remote.as_(alice))).status_code == 200
    await remote.revoke(world["alice_token_id"])
    before = await remote.counts()
    r = await post(remote, alice, ACME_WEB, text="Written after revocation.")
    assert r.status_code == 401 and r.json()["error"]["code"] == "unauthenticated"
    read = await remote.client.get(f"/api/memories/{world['acme_entry']['entry_id']}", headers=remote.as_(alice))
    assert read.status_code == 401
    assert await remote.counts() == before


async def test_tokens_are_stored_only_as_sha256_hashes(world: dict[str, Any], tmp_path: Path) -> None:
    conn = apsw.Connection(str(tmp_path / "m.db"))
    rows = conn.execute("SELECT * FROM auth_tokens").fetchall()
    dump = repr(rows)
    for name in ("alice", "bob", "root", "eve"):
        secret = world[name]
        assert secret not in dump
        assert secret.startswith("mst_") and len(secret) >= 40
        digest = hashlib.sha256(secret.encode()).hexdigest()
        assert conn.execute("SELECT count(*) FROM auth_tokens WHERE token_hash = ?", (digest,)).fetchone() == (1,)
    conn.close()


# ---------------------------------------------------------------------------------------------- tenancy
async def test_another_orgs_scope_is_forbidden_and_nothing_is_written(world: dict[str, Any], remote: Server) -> None:
    eve = world["eve"]
    before = await remote.counts()
    for path, params in (
        ("/api/memories", {"scope": ACME_WEB}),
        ("/api/memories/search", {"q": "deploys", "scope": ACME_WEB}),
        ("/api/memories/changes", {"scope": ACME_WEB}),
        ("/api/memories/revisions/head", {"scope": ACME_WEB}),
        ("/api/memories/export", {"scope": ACME_WEB}),
        ("/api/memories/recall", {"scope": ACME_WEB}),
    ):
        r = await remote.client.get(path, params=params, headers=remote.as_(eve))
        assert r.status_code == 403, path
        assert r.json()["error"]["code"] == "forbidden"
        assert "another organization" in r.json()["error"]["message"]
    assert (await post(remote, eve, ACME_WEB)).status_code == 403
    assert (await post(remote, eve, ACME)).status_code == 403
    assert await remote.counts() == before


async def test_another_orgs_entries_are_invisible(world: dict[str, Any], remote: Server) -> None:
    eve = world["eve"]
    eid = world["acme_entry"]["entry_id"]
    before = await remote.counts()
    for method, path, body in (
        ("GET", f"/api/memories/{eid}", None),
        ("GET", f"/api/memories/{eid}/versions", None),
        ("GET", f"/api/memories/{eid}/versions/1", None),
        ("GET", f"/api/memories/{eid}/source", None),
        ("GET", f"/api/memories/{eid}/blame", None),
        ("PATCH", f"/api/memories/{eid}", {"text": "Hijacked.", "revision": 1}),
        ("POST", f"/api/memories/{eid}/flag", {"mandatory": True}),
        ("POST", f"/api/memories/{eid}/forget", {}),
        ("POST", f"/api/memories/{eid}/relations", {"target": world["globex_entry"]["entry_id"]}),
    ):
        r = await remote.client.request(method, path, json=body, headers=remote.as_(eve))
        assert r.status_code == 404, (method, path, r.text)
        assert "acme" not in r.text.lower()
    # and eve cannot point her own entry at acme's (a relation target she cannot read does not exist for her)
    mine = world["globex_entry"]["entry_id"]
    r = await remote.client.post(f"/api/memories/{mine}/relations", json={"target": eid}, headers=remote.as_(eve))
    assert r.status_code == 404
    assert await remote.counts() == before


async def test_search_and_scopes_never_show_another_org(world: dict[str, Any], remote: Server) -> None:
    eve = world["eve"]
    hits = await remote.client.get(
        "/api/memories/search", params={"q": "deploys", "scope": GLOBEX}, headers=remote.as_(eve)
    )
    assert hits.status_code == 200 and hits.json()["hits"] == []
    listed = await remote.client.get("/api/memories/scopes", headers=remote.as_(eve))
    assert {s["scope"] for s in listed.json()["items"]} == {GLOBEX, "memstone://users/eve"}
    root = await remote.client.get("/api/memories/scopes", headers=remote.as_(world["root"]))
    assert GLOBEX not in {s["scope"] for s in root.json()["items"]}


# ---------------------------------------------------------------------------------------------- grants
async def test_a_read_only_grant_reads_but_cannot_write(world: dict[str, Any], remote: Server) -> None:
    bob = world["bob"]
    eid = world["acme_entry"]["entry_id"]
    assert (
        await remote.client.get("/api/memories", params={"scope": ACME_WEB}, headers=remote.as_(bob))
    ).status_code == 200
    assert (await remote.client.get(f"/api/memories/{eid}", headers=remote.as_(bob))).status_code == 200
    before = await remote.counts()
    refused = [
        await post(remote, bob, ACME_WEB, text="Bob writes."),
        await remote.client.patch(
            f"/api/memories/{eid}", json={"text": "Bob edits.", "revision": 1}, headers=remote.as_(bob)
        ),
        await remote.client.post(f"/api/memories/{eid}/flag", json={"important": True}, headers=remote.as_(bob)),
        await remote.client.post(f"/api/memories/{eid}/forget", json={}, headers=remote.as_(bob)),
        await remote.client.post(f"/api/memories/{eid}/rename", json={"slug": "x"}, headers=remote.as_(bob)),
    ]
    for r in refused:
        assert r.status_code == 403, r.text
        assert r.json()["error"]["code"] == "forbidden"
        assert "read but not write" in r.json()["error"]["message"]
    assert await remote.counts() == before


async def test_no_grant_means_no_access_even_in_the_same_org(world: dict[str, Any], remote: Server) -> None:
    dave, _ = await remote.token("dave", "acme")
    r = await remote.client.get("/api/memories", params={"scope": ACME_WEB}, headers=remote.as_(dave))
    assert r.status_code == 403 and "no grant covers" in r.json()["error"]["message"]
    eid = world["acme_entry"]["entry_id"]
    assert (await remote.client.get(f"/api/memories/{eid}", headers=remote.as_(dave))).status_code == 404


async def test_grants_are_read_at_every_request(world: dict[str, Any], remote: Server) -> None:
    """No cached grant: adding or removing one takes effect at the very next request."""
    dave, _ = await remote.token("dave", "acme")
    async with remote.writable_principals() as store:
        principal = await store.principal(user="dave")
        assert principal is not None
        catalogue = {"scope": ACME_WEB}
        assert (await remote.client.get("/api/memories", params=catalogue, headers=remote.as_(dave))).status_code == 403
        await store.set_grant(principal.principal_id, "memstone://orgs/acme/*", "write")
        assert (await remote.client.get("/api/memories", params=catalogue, headers=remote.as_(dave))).status_code == 200
        assert (await post(remote, dave, ACME_WEB, text="Dave writes.")).status_code == 201
        await store.set_grant(principal.principal_id, "memstone://orgs/acme/*", "read")
        before = await remote.counts()
        assert (await post(remote, dave, ACME_WEB, text="Dave writes again.")).status_code == 403
        await store.set_grant(principal.principal_id, "memstone://orgs/acme/*", None)
        assert (await remote.client.get("/api/memories", params=catalogue, headers=remote.as_(dave))).status_code == 403
        assert await remote.counts() == before


async def test_grant_patterns(remote: Server) -> None:
    projects, _ = await remote.token("pat", "acme", {"memstone://orgs/acme/*": "write"})
    assert (await post(remote, projects, ACME_WEB)).status_code == 201
    assert (await post(remote, projects, "memstone://orgs/acme/projects/api")).status_code == 201
    assert (await post(remote, projects, ACME)).status_code == 403  # the prefix covers what is under it only
    every, _ = await remote.token("eva", "acme", {"*": "write"})
    assert (await post(remote, every, ACME, text="Org doctrine.")).status_code == 201
    assert (await post(remote, every, "memstone://users/pat", text="Into pat's scope.")).status_code == 403


def test_grants_outside_the_org_or_on_user_scopes_are_refused() -> None:
    from memstone.auth.model import check_grant_scope

    assert check_grant_scope("memstone://Orgs/ACME/projects/Web", org="acme") == ACME_WEB
    assert check_grant_scope("*", org="acme") == "*"
    for bad in ("memstone://orgs/globex", "memstone://users/alice", "memstone://orgs/acme/projects/*", "nonsense"):
        with pytest.raises(InvalidInput):
            check_grant_scope(bad, org="acme")


# ---------------------------------------------------------------------------------------------- owner and author
@pytest.mark.parametrize(
    "field",
    ["scope", "owner", "owner_scope", "memory_id", "org", "user", "author", "updated_by"],
)
async def test_a_client_supplied_owner_field_is_refused(world: dict[str, Any], remote: Server, field: str) -> None:
    """Refused, not ignored: a client that thinks it chose the owner must learn that it did not."""
    before = await remote.counts()
    r = await post(remote, world["alice"], ACME_WEB, **{field: "memstone://orgs/globex/projects/app"})
    assert r.status_code == 422
    assert r.json()["error"]["code"] == "invalid_input"
    assert "the server decides" in r.json()["error"]["message"]
    patch = await remote.client.patch(
        f"/api/memories/{world['acme_entry']['entry_id']}",
        json={"text": "Moved?", "revision": 1, field: GLOBEX},
        headers=remote.as_(world["alice"]),
    )
    assert patch.status_code == 422
    assert await remote.counts() == before


async def test_the_owner_comes_from_the_url_and_the_author_from_the_token(
    world: dict[str, Any], remote: Server
) -> None:
    assert world["acme_entry"]["scope"] == ACME_WEB
    assert world["acme_entry"]["updated_by"] == "alice"
    assert world["alice_entry"]["scope"] == "memstone://users/alice"  # no ?scope=: the principal's own scope
    eid = world["acme_entry"]["entry_id"]
    flagged = await remote.client.post(
        f"/api/memories/{eid}/flag", json={"important": True}, headers=remote.as_(world["root"])
    )
    assert flagged.status_code == 200
    assert flagged.json()["record"]["updated_by"] == "carol"
    assert flagged.json()["revision"]["author"] == "carol"


# ---------------------------------------------------------------------------------------------- user scopes
async def test_a_user_scope_is_readable_only_by_its_user(world: dict[str, Any], remote: Server) -> None:
    bob = world["bob"]
    alice_scope = "memstone://users/alice"
    eid = world["alice_entry"]["entry_id"]
    r = await remote.client.get("/api/memories", params={"scope": alice_scope}, headers=remote.as_(bob))
    assert r.status_code == 403 and "readable only by its user" in r.json()["error"]["message"]
    assert (await remote.client.get(f"/api/memories/{eid}", headers=remote.as_(bob))).status_code == 404
    search = await remote.client.get(
        "/api/memories/search", params={"q": "tabs", "scope": alice_scope}, headers=remote.as_(bob)
    )
    assert search.status_code == 403
    before = await remote.counts()
    assert (await post(remote, bob, alice_scope)).status_code == 403
    assert await remote.counts() == before
    own = await remote.client.get("/api/memories", params={"scope": alice_scope}, headers=remote.as_(world["alice"]))
    assert [i["entry_id"] for i in own.json()["items"]] == [eid]


async def test_an_admin_on_every_scope_reads_user_scopes_of_its_org_only(world: dict[str, Any], remote: Server) -> None:
    root = world["root"]
    r = await remote.client.get("/api/memories", params={"scope": "memstone://users/alice"}, headers=remote.as_(root))
    assert r.status_code == 200 and r.json()["total"] == 1
    other = await remote.client.get("/api/memories", params={"scope": "memstone://users/eve"}, headers=remote.as_(root))
    assert other.status_code == 403
    eve_admin, _ = await remote.token("mallory", "globex", {"*": "admin"})
    leak = await remote.client.get(f"/api/memories/{world['alice_entry']['entry_id']}", headers=remote.as_(eve_admin))
    assert leak.status_code == 404


async def test_the_anonymous_scope_does_not_exist_in_token_mode(world: dict[str, Any], remote: Server) -> None:
    before = await remote.counts()
    for token in (world["alice"], world["root"]):
        r = await remote.client.get(
            "/api/memories", params={"scope": "memstone://users/anonymous"}, headers=remote.as_(token)
        )
        assert r.status_code == 403 and "local mode" in r.json()["error"]["message"]
        assert (await post(remote, token, "memstone://users/anonymous")).status_code == 403
    assert await remote.counts() == before


async def test_the_anonymous_scope_works_in_local_mode(local: Server) -> None:
    r = await local.client.post("/api/memories", json={"kind": "fact", "text": "Local note."})
    assert r.status_code == 201 and r.json()["record"]["scope"] == "memstone://users/anonymous"


async def test_local_entries_are_invisible_to_token_mode(make_server: ServerFactory, tmp_path: Path) -> None:
    local = await make_server()
    made = await local.client.post("/api/memories", json={"kind": "fact", "text": "Anonymous note."})
    eid = made.json()["record"]["entry_id"]
    from api_support import seed_token_mode

    await seed_token_mode(tmp_path)
    remote = await make_server(auth="token", host="0.0.0.0")
    token, _ = await remote.token("alice", "acme", {"*": "admin"})
    assert (await remote.client.get(f"/api/memories/{eid}", headers=remote.as_(token))).status_code == 404


# ---------------------------------------------------------------------------------------------- local mode
async def test_local_mode_answers_only_this_machine(local: Server) -> None:
    for host in ("evil.example", "memstone.example:8765", "192.168.1.5:8765"):
        r = await local.client.get("/api/session", headers={"host": host})
        assert r.status_code == 403 and r.json()["error"]["code"] == "forbidden", host
    for host in ("127.0.0.1:8765", "localhost:8765", "[::1]:8765"):
        assert (await local.client.get("/api/session", headers={"host": host})).status_code == 200, host


async def test_cross_origin_writes_are_refused(local: Server) -> None:
    before = await local.counts()
    r = await local.client.post(
        "/api/memories", json={"kind": "fact", "text": "CSRF."}, headers={"origin": "https://evil.example"}
    )
    assert r.status_code == 403 and "cross-origin" in r.json()["error"]["message"]
    assert await local.counts() == before
    same = await local.client.post(
        "/api/memories", json={"kind": "fact", "text": "Same origin."}, headers={"origin": "http://127.0.0.1:8765"}
    )
    assert same.status_code == 201


async def test_token_mode_refuses_to_start_without_an_active_token(make_server: ServerFactory) -> None:
    with pytest.raises(InvalidInput, match="without access control"):
        await make_server(host="0.0.0.0")


async def test_local_mode_refuses_a_public_address(make_server: ServerFactory) -> None:
    with pytest.raises(InvalidInput, match=r"serves only 127\.0\.0\.1"):
        await make_server(host="0.0.0.0", auth="local")
