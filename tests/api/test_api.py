"""/api/memories through the ASGI app: catalogue, search, reads, CAS updates, flags, relations, state, export."""

from __future__ import annotations

import io
import re
import zipfile
from typing import Any

import pytest
from api_support import Server

SCOPE = "memstone://orgs/acme/projects/web"


async def create(server: Server, scope: str | None = SCOPE, **fields: Any) -> dict[str, Any]:
    body = {"kind": "fact", "text": "We deploy with uv.", **fields}
    params = {"scope": scope} if scope else {}
    r = await server.client.post("/api/memories", params=params, json=body)
    assert r.status_code == 201, r.text
    return dict(r.json()["record"])


async def test_session_in_local_mode_needs_no_token(local: Server) -> None:
    r = await local.client.get("/api/session")
    assert r.status_code == 200
    body = r.json()
    assert body["mode"] == "local"
    assert body["default_scope"] == "memstone://users/anonymous"


async def test_create_then_read_the_record_with_its_etag(local: Server) -> None:
    rec = await create(local, title="Deploys", tags=["Ops", "ci"], important=True)
    assert rec["scope"] == SCOPE
    assert rec["tags"] == ["ci", "ops"]
    assert rec["revision"] == 1 and rec["state"] == "active" and rec["category"] == "important"
    r = await local.client.get(f"/api/memories/{rec['entry_id']}")
    assert r.status_code == 200
    assert r.headers["etag"] == f'"{rec["entry_version_id"]}"'
    assert r.json()["record"]["text"] == "We deploy with uv."


async def test_create_reports_the_location_and_a_duplicate_writes_nothing(local: Server) -> None:
    r = await local.client.post("/api/memories", params={"scope": SCOPE}, json={"kind": "fact", "text": "One."})
    assert r.status_code == 201
    assert r.headers["location"] == f"/api/memories/{r.json()['record']['entry_id']}"
    before = await local.counts()
    again = await local.client.post("/api/memories", params={"scope": SCOPE}, json={"kind": "fact", "text": "One."})
    assert again.status_code == 200
    assert again.json()["record"]["entry_id"] == r.json()["record"]["entry_id"]
    assert await local.counts() == before


async def test_path_form_scopes_mean_the_same_scope(local: Server) -> None:
    rec = await create(local, scope="orgs/acme/projects/web")
    assert rec["scope"] == SCOPE
    r = await local.client.get("/api/memories", params={"scope": "memstone://Orgs/ACME/projects/web/"})
    assert [i["entry_id"] for i in r.json()["items"]] == [rec["entry_id"]]


async def test_catalogue_filters_and_orders_category_first(local: Server) -> None:
    a = await create(local, text="Plain fact.", tags=["x"])
    b = await create(local, text="Important lesson.", kind="lesson", important=True)
    c = await create(local, text="Mandatory rule.", kind="constraint", mandatory=True, tags=["x"])
    r = await local.client.get("/api/memories", params={"scope": SCOPE})
    assert [i["entry_id"] for i in r.json()["items"]] == [c["entry_id"], b["entry_id"], a["entry_id"]]
    by_tag = await local.client.get("/api/memories", params={"scope": SCOPE, "tag": "x"})
    assert {i["entry_id"] for i in by_tag.json()["items"]} == {a["entry_id"], c["entry_id"]}
    by_kind = await local.client.get("/api/memories", params=[("scope", SCOPE), ("kind", "lesson"), ("kind", "fact")])
    assert {i["entry_id"] for i in by_kind.json()["items"]} == {a["entry_id"], b["entry_id"]}
    flagged = await local.client.get("/api/memories", params={"scope": SCOPE, "mandatory": "true"})
    assert [i["entry_id"] for i in flagged.json()["items"]] == [c["entry_id"]]
    not_important = await local.client.get("/api/memories", params={"scope": SCOPE, "important": "false"})
    assert b["entry_id"] not in {i["entry_id"] for i in not_important.json()["items"]}


async def test_catalogue_pages_read_one_revision_even_while_others_write(local: Server) -> None:
    ids = [(await create(local, text=f"Fact number {i}."))["entry_id"] for i in range(5)]
    first = (await local.client.get("/api/memories", params={"scope": SCOPE, "limit": 2})).json()
    assert first["total"] == 5 and len(first["items"]) == 2 and first["next_cursor"]
    await create(local, text="Written between two pages.")
    seen = [i["entry_id"] for i in first["items"]]
    cursor = first["next_cursor"]
    while cursor:
        page = (await local.client.get("/api/memories", params={"scope": SCOPE, "limit": 2, "cursor": cursor})).json()
        assert page["memory_ref"] == first["memory_ref"]
        seen += [i["entry_id"] for i in page["items"]]
        cursor = page["next_cursor"]
    assert sorted(seen) == sorted(ids)


@pytest.mark.parametrize(
    ("params", "needle"),
    [
        pytest.param({"limit": "201"}, "limit", id="limit-over-max"),
        pytest.param({"limit": "0"}, "limit", id="limit-zero"),
        pytest.param({"cursor": "garbage!"}, "cursor", id="bad-cursor"),
        pytest.param({"colour": "blue"}, "colour", id="unknown-parameter"),
        pytest.param({"scope": "https://example.com"}, "memstone://", id="bad-scope"),
        pytest.param({"state": "deleted"}, "state", id="bad-state"),
    ],
)
async def test_bad_catalogue_parameters_say_what_to_change(local: Server, params: dict[str, str], needle: str) -> None:
    await create(local)
    r = await local.client.get("/api/memories", params={"scope": SCOPE, **params})
    assert r.status_code == 422
    error = r.json()["error"]
    assert error["code"] == "invalid_input"
    assert needle in error["message"] + error.get("hint", "")


async def test_an_unbound_scope_has_an_empty_catalogue(local: Server) -> None:
    r = await local.client.get("/api/memories", params={"scope": "memstone://orgs/nobody"})
    assert r.status_code == 200
    assert r.json() == {
        "memory_ref": None,
        "scope": "memstone://orgs/nobody",
        "total": 0,
        "next_cursor": None,
        "items": [],
    }


async def test_search_reports_the_mode_and_applies_every_filter(local: Server) -> None:
    a = await create(local, text="We deploy through uv on CI.", tags=["ops"])
    await create(local, text="Deploy notes for humans.", kind="working_note")
    m = await create(local, text="Never deploy on Fridays.", kind="constraint", mandatory=True)
    r = await local.client.get("/api/memories/search", params={"q": "deploy", "scope": SCOPE, "mode": "fts"})
    assert r.status_code == 200
    body = r.json()
    assert body["mode"] == "fts" and body["scopes"] == [SCOPE]
    assert len(body["hits"]) == 3
    only_ops = await local.client.get("/api/memories/search", params={"q": "deploy", "scope": SCOPE, "tag": "ops"})
    assert [h["entry_id"] for h in only_ops.json()["hits"]] == [a["entry_id"]]
    no_mandatory = await local.client.get(
        "/api/memories/search", params={"q": "deploy", "scope": SCOPE, "exclude_mandatory": "true"}
    )
    assert m["entry_id"] not in {h["entry_id"] for h in no_mandatory.json()["hits"]}
    priority = await local.client.get(
        "/api/memories/search", params={"q": "deploy", "scope": SCOPE, "order": "priority"}
    )
    assert priority.json()["order"] == "priority"
    assert priority.json()["hits"][0]["entry_id"] == m["entry_id"]


async def test_auto_search_falls_back_to_fts_and_explicit_vector_is_501(local: Server) -> None:
    await create(local)
    auto = await local.client.get("/api/memories/search", params={"q": "deploy", "scope": SCOPE})
    assert auto.json()["mode"] == "fts" and auto.json()["fallback_reason"]
    vector = await local.client.get("/api/memories/search", params={"q": "deploy", "scope": SCOPE, "mode": "vector"})
    assert vector.status_code == 501
    assert vector.json()["error"]["code"] == "capability_not_supported"


async def test_search_finds_superseded_versions_only_when_asked(local: Server) -> None:
    rec = await create(local, text="The staging host is alpha.")
    await local.client.patch(
        f"/api/memories/{rec['entry_id']}", json={"text": "The staging host is beta.", "revision": 1}
    )
    plain = await local.client.get("/api/memories/search", params={"q": "alpha", "scope": SCOPE, "mode": "fts"})
    assert plain.json()["hits"] == []
    archived = await local.client.get(
        "/api/memories/search", params={"q": "alpha", "scope": SCOPE, "mode": "fts", "include_superseded": "true"}
    )
    (hit,) = archived.json()["hits"]
    assert hit["superseded"] is True and hit["entry_id"] == rec["entry_id"]


async def test_update_with_the_revision_read_creates_a_new_version(local: Server) -> None:
    rec = await create(local, title="T", tags=["keep"], relations=[])
    r = await local.client.patch(
        f"/api/memories/{rec['entry_id']}",
        json={"text": "We deploy with uv and ruff."},
        headers={"If-Match": f'"{rec["entry_version_id"]}"'},
    )
    assert r.status_code == 200, r.text
    new = r.json()["record"]
    assert new["revision"] == 2 and new["text"] == "We deploy with uv and ruff."
    assert new["title"] == "T" and new["tags"] == ["keep"]  # fields not sent keep their values
    assert r.headers["etag"] == f'"{new["entry_version_id"]}"'
    assert r.json()["revision"]["changes"][0]["op"] == "revise"


async def test_a_stale_update_is_409_with_the_current_record_and_writes_nothing(local: Server) -> None:
    rec = await create(local)
    ok = await local.client.patch(f"/api/memories/{rec['entry_id']}", json={"text": "Second.", "revision": 1})
    assert ok.status_code == 200
    before = await local.counts()
    stale = await local.client.patch(f"/api/memories/{rec['entry_id']}", json={"text": "Third.", "revision": 1})
    assert stale.status_code == 409
    body = stale.json()
    assert body["error"]["code"] == "revision_conflict"
    assert body["current"]["revision"] == 2 and body["current"]["text"] == "Second."
    assert stale.headers["etag"] == f'"{body["current"]["entry_version_id"]}"'
    stale_etag = await local.client.patch(
        f"/api/memories/{rec['entry_id']}",
        json={"text": "Third."},
        headers={"If-Match": f'"{rec["entry_version_id"]}"'},
    )
    assert stale_etag.status_code == 409
    assert await local.counts() == before


async def test_an_update_must_say_what_it_read(local: Server) -> None:
    rec = await create(local)
    r = await local.client.patch(f"/api/memories/{rec['entry_id']}", json={"text": "Blind write."})
    assert r.status_code == 428
    assert r.json()["error"]["code"] == "precondition_required"
    both = await local.client.patch(
        f"/api/memories/{rec['entry_id']}", json={"text": "x", "revision": 1}, headers={"If-Match": "1"}
    )
    assert both.status_code == 422


async def test_updates_that_change_nothing_write_nothing(local: Server) -> None:
    rec = await create(local)
    before = await local.counts()
    r = await local.client.patch(f"/api/memories/{rec['entry_id']}", json={"text": rec["text"], "revision": 1})
    assert r.status_code == 200 and r.json()["record"]["revision"] == 1
    assert await local.counts() == before


async def test_flag_is_a_new_version_with_reason_flag(local: Server) -> None:
    rec = await create(local)
    r = await local.client.post(f"/api/memories/{rec['entry_id']}/flag", json={"mandatory": True, "revision": 1})
    assert r.status_code == 200
    assert r.json()["record"]["mandatory"] is True and r.json()["record"]["revision"] == 2
    assert r.json()["revision"]["changes"][0]["reason"] == "flag"
    empty = await local.client.post(f"/api/memories/{rec['entry_id']}/flag", json={})
    assert empty.status_code == 422
    stale = await local.client.post(f"/api/memories/{rec['entry_id']}/flag", json={"important": True, "revision": 1})
    assert stale.status_code == 409


async def test_history_versions_source_diff_and_blame(local: Server) -> None:
    rec = await create(local, text="First text.")
    eid = rec["entry_id"]
    await local.client.patch(f"/api/memories/{eid}", json={"text": "Second text.", "revision": 1, "reason": "typo"})
    await local.client.post(f"/api/memories/{eid}/flag", json={"important": True})
    chain = (await local.client.get(f"/api/memories/{eid}/versions")).json()
    assert [v["version"] for v in chain["items"]] == [1, 2, 3]
    assert [v["reason"] for v in chain["items"]] == [None, "typo", "flag"]  # each version says why it was written
    assert [v["status"] for v in chain["items"]] == ["superseded", "superseded", "current"]
    assert chain["items"][0]["next_version_id"] == chain["items"][1]["entry_version_id"]
    page = (await local.client.get(f"/api/memories/{eid}/versions", params={"limit": 2})).json()
    assert len(page["items"]) == 2 and page["next_cursor"]
    v1 = (await local.client.get(f"/api/memories/{eid}/versions/1")).json()
    assert v1["text"] == "First text." and v1["status"] == "superseded"
    by_id = await local.client.get(f"/api/memories/{eid}/versions/{v1['entry_version_id']}")
    assert by_id.json()["version"] == 1
    src = await local.client.get(f"/api/memories/{eid}/source", params={"version": "1"})
    assert src.headers["content-type"].startswith("text/markdown")
    assert "First text." in src.text and "current: false" in src.text
    d = (await local.client.get(f"/api/memories/{eid}/diff", params={"from": "1", "to": "2"})).json()
    assert [c["field"] for c in d["changes"]] == ["text"]
    blame = (await local.client.get(f"/api/memories/{eid}/blame")).json()
    assert {f["field"]: f["version"] for f in blame["fields"]}["important"] == 3
    missing = await local.client.get(f"/api/memories/{eid}/versions/9")
    assert missing.status_code == 404


async def test_read_an_entry_as_of_an_older_revision(local: Server) -> None:
    rec = await create(local, text="Old text.")
    await local.client.patch(f"/api/memories/{rec['entry_id']}", json={"text": "New text.", "revision": 1})
    old = await local.client.get(f"/api/memories/{rec['entry_id']}", params={"revision": 1})
    assert old.json()["record"]["text"] == "Old text."


async def test_relate_and_unrelate(local: Server) -> None:
    a = await create(local, text="Use uv.")
    b = await create(local, text="Use pip.")
    r = await local.client.post(
        f"/api/memories/{a['entry_id']}/relations", json={"target": b["entry_id"], "kind": "supersedes"}
    )
    assert r.status_code == 200
    assert r.json()["record"]["relations"] == [{"kind": "supersedes", "target": b["entry_id"]}]
    gone = await local.client.request(
        "DELETE", f"/api/memories/{a['entry_id']}/relations", params={"kind": "supersedes", "target": b["entry_id"]}
    )
    assert gone.json()["record"]["relations"] == []
    missing = await local.client.post(
        f"/api/memories/{a['entry_id']}/relations", json={"target": "ent_00000000000000000000000000"}
    )
    assert missing.status_code == 404


async def test_forget_and_reactivate_keep_history(local: Server) -> None:
    rec = await create(local)
    eid = rec["entry_id"]
    gone = await local.client.post(f"/api/memories/{eid}/forget", json={"reason": "obsolete"})
    assert gone.status_code == 200 and gone.json()["record"]["state"] == "inactive"
    assert (await local.client.get("/api/memories", params={"scope": SCOPE})).json()["total"] == 0
    everything = await local.client.get("/api/memories", params={"scope": SCOPE, "state": "all"})
    assert everything.json()["items"][0]["state"] == "inactive"
    back = await local.client.post(f"/api/memories/{eid}/reactivate")
    assert back.json()["record"]["state"] == "active"
    assert back.json()["record"]["entry_version_id"] == rec["entry_version_id"]


async def test_rename_revert_and_lookup_by_slug(local: Server) -> None:
    rec = await create(local, slug="deploy-tool", text="Deploy with uv.")
    eid = rec["entry_id"]
    await local.client.patch(f"/api/memories/{eid}", json={"text": "Deploy with pip.", "revision": 1})
    reverted = await local.client.post(f"/api/memories/{eid}/revert", json={"to": "1"})
    assert reverted.json()["record"]["text"] == "Deploy with uv." and reverted.json()["record"]["revision"] == 3
    renamed = await local.client.post(f"/api/memories/{eid}/rename", json={"slug": "deploy-tooling"})
    assert renamed.json()["record"]["slug"] == "deploy-tooling"
    for slug in ("deploy-tooling", "deploy-tool"):
        found = await local.client.get("/api/memories/lookup", params={"scope": SCOPE, "kind": "fact", "slug": slug})
        assert found.json()["record"]["entry_id"] == eid


async def test_changes_and_revisions_are_paged(local: Server) -> None:
    for i in range(3):
        await create(local, text=f"Fact {i}.")
    r = (await local.client.get("/api/memories/changes", params={"scope": SCOPE, "limit": 2})).json()
    assert [d["memory_ref"]["revision"] for d in r["items"]] == [1, 2] and r["next_since"] == 2
    rest = (await local.client.get("/api/memories/changes", params={"scope": SCOPE, "since": 2})).json()
    assert [d["memory_ref"]["revision"] for d in rest["items"]] == [3] and rest["next_since"] is None
    head = (await local.client.get("/api/memories/revisions/head", params={"scope": SCOPE})).json()
    assert head["revision"] == 3 and head["changes_total"] == 1
    two = await local.client.get("/api/memories/revisions/2", params={"scope": SCOPE})
    assert two.json()["revision"] == 2
    assert (await local.client.get("/api/memories/revisions/9", params={"scope": SCOPE})).status_code == 404


async def test_recall_loads_mandatory_entries_first(local: Server) -> None:
    m = await create(local, text="Never edit site/.", kind="constraint", mandatory=True)
    await create(local, text="Docs live in docs/.")
    r = (await local.client.get("/api/memories/recall", params={"scope": SCOPE, "q": "docs"})).json()
    assert [x["entry_id"] for x in r["mandatory"]] == [m["entry_id"]]
    assert m["entry_id"] not in {h["entry_id"] for h in r["contextual"]}


async def test_export_is_a_zip_of_the_xema_layout(local: Server) -> None:
    await create(local, slug="deploy", text="Deploy with uv.")
    r = await local.client.get("/api/memories/export", params={"scope": SCOPE})
    assert r.status_code == 200 and r.headers["content-type"] == "application/zip"
    names = zipfile.ZipFile(io.BytesIO(r.content)).namelist()
    assert any(n.endswith(".md") for n in names)
    empty = await local.client.get("/api/memories/export", params={"scope": "memstone://orgs/nobody"})
    assert empty.status_code == 404


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        pytest.param({"kind": "fact"}, "text", id="missing-text"),
        pytest.param({"kind": "fact", "text": "   "}, "empty", id="blank-text"),
        pytest.param({"kind": "not a kind!", "text": "x"}, "kind", id="bad-kind"),
        pytest.param({"kind": "fact", "text": "x", "colour": "red"}, "unknown field", id="unknown-field"),
        pytest.param({"kind": "fact", "text": "x", "slug": "Not Kebab"}, "slug", id="bad-slug"),
        pytest.param({"kind": "fact", "text": "é" * 5000}, "8192", id="too-long"),
    ],
)
async def test_bad_bodies_are_422_and_write_nothing(local: Server, body: dict[str, Any], needle: str) -> None:
    r = await local.client.post("/api/memories", params={"scope": SCOPE}, json=body)
    assert r.status_code == 422, r.text
    assert needle in r.json()["error"]["message"]
    assert await local.counts() == (0, 0)


async def test_a_body_must_be_a_json_object(local: Server) -> None:
    text = await local.client.post("/api/memories", content=b"kind=fact", headers={"content-type": "text/plain"})
    assert text.status_code == 422 and "JSON" in text.json()["error"]["message"]
    array = await local.client.post("/api/memories", json=[1, 2])
    assert array.status_code == 422
    broken = await local.client.post("/api/memories", content=b"{", headers={"content-type": "application/json"})
    assert broken.status_code == 422


async def test_unknown_and_malformed_ids_are_404(local: Server) -> None:
    for path in (
        "/api/memories/ent_00000000000000000000000000",
        "/api/memories/not-an-id",
        "/api/memories/ent_x/blame",
    ):
        r = await local.client.get(path)
        assert r.status_code == 404, path
        assert r.json()["error"]["code"] in ("not_found", "artifact_not_found")


async def test_security_headers_on_api_and_explorer(local: Server) -> None:
    api = await local.client.get("/api/session")
    assert api.headers["x-content-type-options"] == "nosniff"
    assert api.headers["cache-control"] == "no-store"
    page = await local.client.get("/memory/explorer/")
    assert page.status_code == 200 and "text/html" in page.headers["content-type"]
    csp = page.headers["content-security-policy"]
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp and "default-src 'none'" in csp
    assert (await local.client.get("/memory/explorer/orgs/acme/ent_01ABC")).status_code == 200
    js = await local.client.get("/memory/static/explorer.js")
    assert js.status_code == 200 and "javascript" in js.headers["content-type"]
    sinks = re.compile(r"\.(innerHTML|outerHTML)\s*=|insertAdjacentHTML|document\.write|\beval\(|new Function")
    for asset in ("explorer.js", "markdown.js"):
        assert not sinks.search((await local.client.get(f"/memory/static/{asset}")).text), asset
    home = await local.client.get("/")
    assert home.status_code == 307 and home.headers["location"] == "/memory/explorer/"


async def test_the_explorer_loads_nothing_from_outside(local: Server) -> None:
    page = (await local.client.get("/memory/explorer/")).text
    assert "http://" not in page and "https://" not in page
    for asset in ("explorer.js", "markdown.js", "explorer.css"):
        body = (await local.client.get(f"/memory/static/{asset}")).text
        assert "import " not in body or "./markdown.js" in body
        assert "cdn" not in body.lower()
