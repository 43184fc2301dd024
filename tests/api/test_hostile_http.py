"""Hostile requests get clear 4xx answers, never a 500, and write nothing (issue 12, findings 7, 8, 9 and 13)."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from typing import Any

from api_support import Server

from memstone.api.http.routing import MAX_BODY

SCOPE = "memstone://orgs/acme/projects/web"


async def create(server: Server) -> dict[str, Any]:
    r = await server.client.post("/api/memories", params={"scope": SCOPE}, json={"kind": "fact", "text": "One."})
    assert r.status_code == 201, r.text
    return dict(r.json()["record"])


def error(r: Any, status: int = 422) -> str:
    assert r.status_code == status, r.text
    return str(r.json()["error"]["code"])


async def test_a_declared_oversize_body_is_refused_before_it_is_read(local: Server) -> None:
    before = await local.counts()
    body = b'{"kind": "fact", "text": "small"}'
    r = await local.client.post(
        "/api/memories",
        params={"scope": SCOPE},
        content=body,
        headers={"content-type": "application/json", "content-length": str(400 * 1024 * 1024)},
    )
    assert error(r) == "invalid_input" and "limit" in r.json()["error"]["message"]
    assert await local.counts() == before


async def test_a_chunked_body_is_read_only_up_to_the_limit(local: Server) -> None:
    chunk = b" " * 65536
    sent = 0

    async def endless() -> AsyncIterator[bytes]:
        nonlocal sent
        for _ in range(256):  # 16 MiB if read whole
            sent += len(chunk)
            yield chunk

    r = await local.client.post(
        "/api/memories", params={"scope": SCOPE}, content=endless(), headers={"content-type": "application/json"}
    )
    assert error(r) == "invalid_input"
    assert sent <= MAX_BODY + 2 * len(chunk)


async def test_a_write_with_origin_null_is_refused(local: Server) -> None:
    before = await local.counts()
    r = await local.client.post(
        "/api/memories", params={"scope": SCOPE}, json={"kind": "fact", "text": "CSRF."}, headers={"origin": "null"}
    )
    assert error(r, 403) == "forbidden"
    assert await local.counts() == before
    assert (await local.client.get("/api/session", headers={"origin": "null"})).status_code == 200


async def test_deeply_nested_json_is_invalid_input(local: Server) -> None:
    deep = '{"kind": "fact", "text": "x", "tags": ' + "[" * 2000 + "]" * 2000 + "}"
    r = await local.client.post(
        "/api/memories", params={"scope": SCOPE}, content=deep, headers={"content-type": "application/json"}
    )
    assert error(r) == "invalid_input"


async def test_huge_or_odd_revision_numbers_are_invalid_input(local: Server) -> None:
    rec = await create(local)
    path = f"/api/memories/{rec['entry_id']}"
    before = await local.counts()
    for tag in ("9" * 4300, '"' + "1" * 199 + '"', "9223372036854775808"):
        r = await local.client.patch(path, json={"text": "Changed."}, headers={"if-match": tag})
        assert error(r) == "invalid_input", tag[:20]
    for body in ({"text": "Changed.", "revision": True}, {"text": "Changed.", "revision": 2**63}):
        assert error(await local.client.patch(path, json=body)) == "invalid_input", body
    assert await local.counts() == before


async def test_a_wrong_method_on_a_fixed_path_is_405(local: Server) -> None:
    from memstone.api.http.routes import operations

    served: dict[str, set[str]] = {}
    for op in operations():
        served.setdefault(op.path, set()).add(op.method)
    fixed = [p for p in served if "{" not in p]
    assert "/api/memories/search" in fixed
    for path in fixed:
        for method in ("GET", "POST", "PATCH", "PUT", "DELETE"):
            if method in served[path]:
                continue
            r = await local.client.request(method, path)
            assert r.status_code == 405, (method, path, r.status_code, r.text)
            assert set(r.headers["allow"].replace(" ", "").split(",")) >= served[path], (method, path)


async def test_the_document_states_the_rules_the_server_enforces(local: Server) -> None:
    doc = (await local.client.get("/api/openapi.json")).json()
    create = doc["paths"]["/api/memories"]["post"]
    assert "409" in create["responses"]
    scope = next(p for p in create["parameters"] if p["name"] == "scope")
    assert "pattern" in scope["schema"]
    patch = doc["paths"]["/api/memories/{entry_id}"]["patch"]
    if_match = next(p for p in patch["parameters"] if p["name"] == "If-Match")
    assert if_match["schema"]["maxLength"] == 200 and "not both" in if_match["description"]
    assert str(MAX_BODY) in patch["requestBody"]["description"]
    bad_scope = await local.client.post("/api/memories", params={"scope": "memstone://planets/mars"}, json={})
    assert bad_scope.status_code == 422


async def test_an_unrouted_api_request_gets_the_json_error_body(local: Server) -> None:
    """Found by bench/bench_fuzz.py: Starlette's own 404/405 under /api were plain text, without a code."""
    for method, path, status, code in (
        ("GET", "/api/memories//versions/1", 404, "not_found"),
        ("POST", "/api/nothing-here", 404, "not_found"),
        ("OPTIONS", "/api/memories/ent_01J00000000000000000000000/forget", 405, "method_not_allowed"),
        ("DELETE", "/api/memories/revisions/3", 405, "method_not_allowed"),
    ):
        r = await local.client.request(method, path)
        assert error(r, status) == code, (method, path)
    assert (await local.client.get("/no-such-page")).status_code == 404


async def test_the_document_refuses_a_blank_text_as_the_server_does(local: Server) -> None:
    """Found by the OpenAPI property test: a whitespace-only text was valid by the document, refused by the server."""
    doc = (await local.client.get("/api/openapi.json")).json()
    pattern = re.compile(doc["components"]["schemas"]["EntryCreate"]["properties"]["text"]["pattern"])
    assert pattern.search("We deploy with uv.") and not pattern.search(" \t\n ")
    r = await local.client.post("/api/memories", params={"scope": SCOPE}, json={"kind": "fact", "text": " \t\n "})
    assert r.status_code == 422
