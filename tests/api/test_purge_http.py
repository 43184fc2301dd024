"""``POST /api/memories/{entry_id}/purge``: admins only; the content leaves the store's files (issue 12)."""

from __future__ import annotations

from pathlib import Path

from api_support import Server

SCOPE = "memstone://orgs/acme/projects/web"


async def test_an_admin_purges_and_the_bytes_are_gone(remote: Server, tmp_path: Path) -> None:
    writer, _ = await remote.token("alice", "acme", {SCOPE: "write"})
    admin, _ = await remote.token("carol", "acme", {"*": "admin"})
    created = await remote.client.post(
        "/api/memories", params={"scope": SCOPE}, json={"kind": "fact", "text": "Vendor Qzxwvmu holds the keys."},
        headers=remote.as_(writer),
    )  # fmt: skip
    assert created.status_code == 201, created.text
    eid = created.json()["record"]["entry_id"]
    refused = await remote.client.post(f"/api/memories/{eid}/purge", json={"reason": "x"}, headers=remote.as_(writer))
    assert refused.status_code == 403 and refused.json()["error"]["code"] == "forbidden"
    no_reason = await remote.client.post(f"/api/memories/{eid}/purge", json={}, headers=remote.as_(admin))
    assert no_reason.status_code == 422
    done = await remote.client.post(
        f"/api/memories/{eid}/purge", json={"reason": "vendor secret"}, headers=remote.as_(admin)
    )
    assert done.status_code == 200, done.text
    body = done.json()
    assert [(p["version"], p["author"], p["reason"]) for p in body["purged"]] == [(1, "carol", "vendor secret")]
    versions = (await remote.client.get(f"/api/memories/{eid}/versions", headers=remote.as_(admin))).json()["items"]
    assert [v["text"] for v in versions] == ["[purged]"]
    assert (await remote.state.service.verify()).ok
    files = b"".join(p.read_bytes() for p in sorted(tmp_path.iterdir()) if p.name.startswith("m.db"))
    assert b"Qzxwvmu" not in files


async def test_history_shows_each_purged_version_with_its_tombstone(remote: Server) -> None:
    writer, _ = await remote.token("alice", "acme", {SCOPE: "write"})
    admin, _ = await remote.token("carol", "acme", {"*": "admin"})
    created = await remote.client.post(
        "/api/memories", params={"scope": SCOPE}, json={"kind": "fact", "text": "Vendor Qzxwvmu holds the keys."},
        headers=remote.as_(writer),
    )  # fmt: skip
    assert created.status_code == 201, created.text
    eid = created.json()["record"]["entry_id"]
    revised = await remote.client.patch(
        f"/api/memories/{eid}", json={"text": "The vendor's name was removed.", "revision": 1},
        headers=remote.as_(writer),
    )  # fmt: skip
    assert revised.status_code == 200, revised.text
    done = await remote.client.post(
        f"/api/memories/{eid}/purge", json={"reason": "vendor secret", "versions": [1]}, headers=remote.as_(admin)
    )
    assert done.status_code == 200, done.text
    tombstone = done.json()["purged"][0]

    versions = await remote.client.get(f"/api/memories/{eid}/versions", headers=remote.as_(writer))
    assert versions.status_code == 200, versions.text
    items = versions.json()["items"]
    assert [(v["version"], v["text"]) for v in items] == [(1, "[purged]"), (2, "The vendor's name was removed.")]
    purge = items[0]["purge"]
    assert (purge["author"], purge["reason"], purge["purged_at"]) == ("carol", "vendor secret", tombstone["purged_at"])
    assert purge["entry_content_hash"] == items[0]["entry_content_hash"]  # the hash the Revision committed to
    assert items[1]["purge"] is None
    one = await remote.client.get(f"/api/memories/{eid}/versions/1", headers=remote.as_(writer))
    assert one.status_code == 200 and one.json()["purge"]["purge_id"] == tombstone["purge_id"]
