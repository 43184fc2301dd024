"""/api/openapi.json matches the real routes, and a property-based run of it (schemathesis) finds no server error.

The schemathesis run is bounded (examples per operation, no deadline per example) and drives the live ASGI app in
token mode with an admin token, on a store seeded with real entries, checking: no 5xx, only documented status
codes and content types, and every response body valid against its documented schema.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode
from schemathesis.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)
from starlette.routing import Route

from memstone.api.http import Settings, create_app
from memstone.api.http.app import open_principals
from memstone.api.http.routes import operations
from memstone.api.http.routing import openapi
from memstone.domain.rules import MAX_REVISION
from memstone.domain.search import searchable

EXAMPLES = 25
SCOPE = "memstone://orgs/acme"


def test_the_document_lists_exactly_the_api_routes() -> None:
    app = create_app(Settings(url="sqlite:///:memory:", embedding="none"))
    served: set[tuple[str, str]] = set()
    for route in app.routes:
        if isinstance(route, Route) and route.path.startswith("/api/"):
            served |= {(route.path, m) for m in (route.methods or ()) if m != "HEAD"}
    doc = openapi(app.state.operations, version="test", local=True)
    paths: dict[str, dict[str, Any]] = doc["paths"]  # type: ignore[assignment]
    documented = {(p, m.upper()) for p, item in paths.items() for m in item}
    assert documented == served
    assert doc["openapi"] == "3.1.0"
    assert len({op["operationId"] for item in paths.values() for op in item.values()}) == len(documented)


def test_every_component_is_valid_json_schema_2020_12() -> None:
    doc = openapi([*operations()], version="test", local=False)
    components: dict[str, Any] = doc["components"]  # type: ignore[assignment]
    for name, schema in components["schemas"].items():
        jsonschema.Draft202012Validator.check_schema(schema), name
    for item in doc["paths"].values():  # type: ignore[union-attr]
        for op in item.values():
            assert op["x-memstone-access"], op["operationId"]
            for param in op.get("parameters", []):
                jsonschema.Draft202012Validator.check_schema(param["schema"])


def test_every_operation_documents_its_access_rule_and_errors() -> None:
    doc = openapi(operations(), version="test", local=False)
    for path, item in doc["paths"].items():  # type: ignore[union-attr]
        for method, op in item.items():
            assert "Access:" in op["description"], (method, path)
            assert "401" in op["responses"] and "503" in op["responses"], (method, path)


# ---------------------------------------------------------------------------------------------- schemathesis
# schemathesis' own pytest integration (``from_fixture``) reads a private pytest attribute that pytest 9 removed,
# so each operation runs its strategy under a plain ``@given``, which is the documented non-plugin way.
OPERATIONS = [pytest.param(op.method, op.path, id=f"{op.method} {op.path}") for op in operations()]


@dataclass
class Fuzz:
    schema: Any
    token: str
    entry_id: str


def _seed(path: Path) -> str:
    async def main() -> str:
        store = await open_principals(f"sqlite:///{path}")
        try:
            principal = await store.ensure_principal(user="fuzz", org="acme")
            await store.set_grant(principal.principal_id, "*", "admin")
            _, secret = await store.issue_token(principal.principal_id, label="schemathesis")
            return secret
        finally:
            await store.aclose()

    result: list[str] = []
    thread = threading.Thread(target=lambda: result.append(asyncio.run(main())))
    thread.start()
    thread.join()
    return result[0]


@pytest.fixture(scope="module")
def fuzz(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fuzz]:
    db = tmp_path_factory.mktemp("fuzz") / "m.db"
    token = _seed(db)
    app = create_app(Settings(url=f"sqlite:///{db}", embedding="none", auth="token", host="0.0.0.0"))
    client = schemathesis.python.asgi.get_client(app)
    headers = {"Authorization": f"Bearer {token}"}
    with client:
        schema = schemathesis.openapi.from_asgi("/api/openapi.json", app)
        ids = []
        for i, scope in enumerate(
            ("memstone://users/fuzz", "memstone://orgs/acme", "memstone://orgs/acme/projects/web")
        ):
            r = client.post(
                "/api/memories",
                params={"scope": scope},
                json={"kind": "fact", "text": f"Seed {i}: deploy with **uv**.", "tags": ["seed"], "slug": f"seed-{i}"},
                headers=headers,
            )
            assert r.status_code == 201, r.text
            ids.append(r.json()["record"]["entry_id"])
        patched = client.patch(
            f"/api/memories/{ids[0]}", json={"text": "Seed 0, revised.", "revision": 1}, headers=headers
        )
        assert patched.status_code == 200, patched.text
        yield Fuzz(schema=schema, token=token, entry_id=ids[0])
    schemathesis.python.asgi.shutdown_lifespans()


@schemathesis.check
def no_server_error(ctx: Any, response: Any, case: Any) -> None:
    """Like not_a_server_error, except the documented 501 (vector search on a store with no model)."""
    if response.status_code == 501 and response.json()["error"]["code"] == "capability_not_supported":
        return
    if response.status_code >= 500:
        raise AssertionError(f"server error {response.status_code}: {response.text[:1000]}")


CHECKS = [no_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]


@pytest.mark.parametrize(("method", "path"), OPERATIONS)
def test_no_server_error_and_every_response_matches_the_document(fuzz: Fuzz, method: str, path: str) -> None:
    operation = fuzz.schema[path][method]
    strategies = [operation.as_strategy(), operation.as_strategy(GenerationMode.NEGATIVE)]
    if "{entry_id}" in path:
        strategies.append(operation.as_strategy(path_parameters={"entry_id": fuzz.entry_id}))
    query = next(op.query for op in operations() if (op.method, op.path) == (method, path))
    if query is not None and "scope" in query.model_fields:
        many = "list" in str(query.model_fields["scope"].annotation)
        strategies.append(operation.as_strategy(query={"scope": [SCOPE] if many else SCOPE}))
    headers = {"Authorization": f"Bearer {fuzz.token}"}

    @given(case=st.one_of(*strategies))
    @settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    def run(case: Any) -> None:
        case.call_and_validate(headers=headers, checks=CHECKS)

    run()


# Rules the document states in prose that a JSON Schema cannot express: exclusive parameters, and the opaque
# cursor (only a next_cursor the server issued is valid).
def _exclusive_combination(case: Any) -> bool:
    query = case.query or {}
    body = case.body if isinstance(case.body, dict) else {}
    headers = {k.lower() for k in (case.headers or {})}
    return bool(
        (str(query.get("mandatory")).lower() == "true" and str(query.get("exclude_mandatory")).lower() == "true")
        or ("budget_tokens" in query and "budget_chars" in query)
        or ("if-match" in headers and body.get("revision") is not None)
        or "cursor" in query
        or ("q" in query and not searchable(str(query["q"])))  # "at least one word that is not a stopword"
        or _out_of_range_revision(case)  # "a record revision": 1 to 2**63 - 1
    )


def _out_of_range_revision(case: Any) -> bool:
    tag = next((str(v) for k, v in (case.headers or {}).items() if k.lower() == "if-match"), "")
    first = tag.split(",")[0].strip().removeprefix("W/").strip('"')
    return first.isdigit() and not (first.isascii() and 1 <= int(first) <= MAX_REVISION)


# Refusals that depend on the entry's state, not on the request: an earlier case of the same run may have forgotten
# the seeded entry, and a forgotten entry must be reactivated before it is revised (documented as entry_inactive).
STATE_REFUSALS = {"entry_inactive"}


def _error_code(response: Any) -> str | None:
    try:
        return str(response.json()["error"]["code"])
    except (ValueError, KeyError, TypeError):
        return None


@schemathesis.check
def valid_input_is_not_refused(ctx: Any, response: Any, case: Any) -> None:
    """A request valid by the document is never refused as invalid input (422), except the stated exclusions."""
    if response.status_code != 422 or _exclusive_combination(case) or _error_code(response) in STATE_REFUSALS:
        return
    raise AssertionError(f"valid by the document but refused: {response.text[:500]}")


POSITIVE_EXAMPLES = 15


@pytest.mark.parametrize(("method", "path"), OPERATIONS)
def test_requests_valid_by_the_document_are_accepted(fuzz: Fuzz, method: str, path: str) -> None:
    operation = fuzz.schema[path][method]
    strategies = [operation.as_strategy()]
    if "{entry_id}" in path:
        strategies.append(operation.as_strategy(path_parameters={"entry_id": fuzz.entry_id}))
    headers = {"Authorization": f"Bearer {fuzz.token}"}

    @given(case=st.one_of(*strategies))
    @settings(max_examples=POSITIVE_EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    def run(case: Any) -> None:
        case.call_and_validate(headers=headers, checks=[no_server_error, valid_input_is_not_refused])

    run()


def test_the_embedding_runs_are_documented_with_their_answers() -> None:
    app = create_app(Settings(url="sqlite:///:memory:", embedding="none"))
    doc = openapi(app.state.operations, version="test", local=False)
    paths: dict[str, Any] = doc["paths"]  # type: ignore[assignment]
    start, show = paths["/api/embedding/runs"]["post"], paths["/api/embedding/runs/{run_id}"]["get"]
    assert (start["operationId"], show["operationId"]) == ("startEmbeddingRun", "getEmbeddingRun")
    assert {"202", "403", "409", "422", "501"} <= set(start["responses"]) and "404" in show["responses"]
    assert "admin" in start["x-memstone-access"] and [p["name"] for p in start["parameters"]] == ["org"]
    run = doc["components"]["schemas"]["EmbeddingRunOut"]  # type: ignore[index]
    assert {"run_id", "state", "done", "total", "error"} <= set(run["properties"])


# ECMA-262's \s, the white space a client reading the document's patterns uses (schemathesis among them).
_ECMA_SPACE = "[\t\n\v\f\r \xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]"


def test_a_tag_valid_by_the_document_is_a_tag_the_service_keeps() -> None:
    """Found by the schemathesis run: the tag "\\x1c" matched the documented ``\\S`` but the service strips it."""
    import re

    from pydantic import TypeAdapter, ValidationError

    from memstone.api.http.schemas import Tag
    from memstone.domain.errors import InvalidInput
    from memstone.domain.rules import normalize_tags

    doc = openapi([*operations()], version="test", local=False)
    params = doc["paths"]["/api/memories"]["get"]["parameters"]  # type: ignore[index]
    pattern = next(p["schema"]["items"]["pattern"] for p in params if p["name"] == "tag")
    ecma = re.compile(pattern.replace(r"\S", "[^" + _ECMA_SPACE[1:]).replace(r"\s", _ECMA_SPACE[1:-1]))
    edge = TypeAdapter(Tag)
    spaces = [chr(c) for c in range(0x3001) if chr(c).isspace()] + ["\ufeff", "\u200b", "\u180e", "a", "é"]
    for c in spaces:
        try:
            edge.validate_python(c)
            normalize_tags([c])
            accepted = True
        except (ValidationError, InvalidInput):
            accepted = False
        assert bool(ecma.search(c)) == accepted, repr(c)
