"""One table of operations drives both the Starlette routes and the OpenAPI 3.1 document, so they cannot drift.

Each :class:`Operation` names its method, path, query model, body model, responses and the access rule it
applies. :func:`endpoint` wraps a handler: authenticate (at the request, against the store), parse and
validate the query and body (unknown parameters and fields are refused by name), run, map errors by class.
"""

from __future__ import annotations

import json
import logging
import re
import types
import typing
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from pydantic import BaseModel, ValidationError
from pydantic.json_schema import models_json_schema
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ...auth.model import Access, Principal
from ...domain.errors import InvalidInput, MemstoneError, NotFound
from .access import AppState, Gate
from .errors import ApiError, error_response
from .schemas import OWNER_FIELDS, ErrorOut

M = TypeVar("M", bound=BaseModel)
Handler = Callable[["Call"], Awaitable[Response]]
log = logging.getLogger("memstone.api")
MAX_BODY = 256 * 1024
# The caller of a public route (the OpenAPI document): no organization, no grant, so no scope is ever allowed.
NOBODY = Access(principal=Principal(principal_id="prn_public", user="public", org=""))


@dataclass
class Call:
    """One request, authenticated and validated, as a handler sees it."""

    request: Request
    gate: Gate
    path: dict[str, str]
    query: BaseModel | None
    body: BaseModel | None

    def q(self, model: type[M]) -> M:
        assert isinstance(self.query, model)
        return self.query

    def b(self, model: type[M]) -> M:
        assert isinstance(self.body, model)
        return self.body


@dataclass(frozen=True)
class Param:
    """A path or header parameter (query parameters come from the query model)."""

    name: str
    where: typing.Literal["path", "header"]
    schema: Mapping[str, object]
    description: str = ""
    required: bool = True


@dataclass(frozen=True)
class Operation:
    method: str
    path: str
    operation_id: str
    summary: str
    access: str
    handler: Handler
    query: type[BaseModel] | None = None
    body: type[BaseModel] | None = None
    body_required: bool = True
    params: tuple[Param, ...] = ()
    success: int = 200
    response: type[BaseModel] | str | None = None  # a model (JSON), or a media type for other bodies
    errors: tuple[int, ...] = (401, 403, 404, 422)
    public: bool = False
    tags: tuple[str, ...] = ("memories",)
    description: str = ""
    extra_responses: Mapping[int, tuple[str, type[BaseModel] | None]] = field(default_factory=dict)


ERROR_TEXT = {
    401: "No token, or an unknown or revoked one.",
    403: "The principal's grants do not allow this on this scope.",
    404: "No such entry, version or Revision (or one you cannot read).",
    409: "Conflict: the record moved on (the body's `current` is the record as it is now), or a create names a "
    "slug another live entry of the scope holds.",
    422: "Invalid input; the message says what to change. Nothing was written.",
    428: "An update must say which revision it read (If-Match or `revision`).",
    501: "Not supported here (e.g. vector search without a complete vector projection).",
    503: "The store is busy or migrating; retry shortly.",
}


def _list_field(model: type[BaseModel], name: str) -> bool:
    annotation = model.model_fields[name].annotation
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        return any(typing.get_origin(a) is list for a in typing.get_args(annotation))
    return origin is list


def _wire_names(model: type[BaseModel]) -> dict[str, str]:
    """Query parameter name → field name."""
    return {(f.alias or name): name for name, f in model.model_fields.items()}


def _explain(exc: ValidationError, where: str) -> InvalidInput:
    parts = []
    for err in exc.errors()[:5]:
        loc = ".".join(str(x) for x in err["loc"]) or where
        msg = err["msg"]
        if err["type"] == "extra_forbidden":
            msg = "unknown field; remove it"
        elif err["type"] == "string_pattern_mismatch" and "scope" in err["loc"]:
            msg = "not a scope: use memstone://orgs/<org>[/projects/<project>], memstone://users/<user>, or a path form"
        parts.append(f"{where} {loc!r}: {msg}")
    return InvalidInput("; ".join(parts), hint="see /api/openapi.json for every parameter and field")


def parse_query(model: type[M], request: Request) -> M:
    names = _wire_names(model)
    unknown = sorted(set(request.query_params) - set(names))
    if unknown:
        raise InvalidInput(
            f"unknown query parameter(s): {', '.join(unknown)}", hint=f"this route takes: {', '.join(sorted(names))}"
        )
    values: dict[str, object] = {}
    for wire, name in names.items():
        if wire not in request.query_params:
            continue
        many = request.query_params.getlist(wire)
        if _list_field(model, name):
            values[wire] = many
        elif len(many) > 1:
            raise InvalidInput(f"query parameter {wire!r} was given {len(many)} times; give it once")
        else:
            values[wire] = many[0]
    try:
        return model.model_validate(values)
    except ValidationError as exc:
        raise _explain(exc, "query parameter") from exc


async def read_body(request: Request, limit: int = MAX_BODY) -> bytes:
    """The request body, refused before it is read whole when it is over ``limit`` bytes.

    A declared Content-Length over the limit is refused without reading; a body sent without one (chunked) is
    read only up to the limit.
    """
    declared = request.headers.get("content-length")
    if declared is not None:
        if not (declared.isascii() and declared.isdigit()):
            raise InvalidInput(f"Content-Length {declared[:40]!r} is not a number of bytes")
        if len(declared) > 12 or int(declared) > limit:
            raise InvalidInput(f"the body is {declared} bytes; the limit is {limit}", hint="send a smaller body")
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise InvalidInput(f"the body is over {limit} bytes, the limit", hint="send a smaller body")
        chunks.append(chunk)
    return b"".join(chunks)


async def parse_body(model: type[M], request: Request, *, required: bool) -> M:
    raw = await read_body(request)
    if not raw.strip():
        if required:
            raise InvalidInput("this route needs a JSON body", hint="send Content-Type: application/json")
        data: object = {}
    else:
        media = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if media != "application/json":
            raise InvalidInput(
                f"the body must be JSON, not {media or 'untyped'}", hint="send Content-Type: application/json"
            )
        try:
            data = json.loads(raw)
        except (ValueError, UnicodeDecodeError) as exc:
            raise InvalidInput(f"the body is not valid JSON: {exc}") from exc
        except RecursionError:
            raise InvalidInput("the body nests too deeply", hint="send a flat JSON object") from None
    if not isinstance(data, dict):
        raise InvalidInput("the body must be a JSON object")
    owner = sorted(OWNER_FIELDS & set(data))
    if owner:
        raise InvalidInput(
            f"the body names {', '.join(repr(o) for o in owner)}, which the server decides",
            hint="the owner scope comes from the URL's ?scope= (checked against your grants) and the author "
            "from your token; remove the field",
        )
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise _explain(exc, "field") from exc


def endpoint(
    op: Operation, state_of: Callable[[Request], AppState], fixed: Mapping[str, Sequence[str]] | None = None
) -> Callable[[Request], Awaitable[Response]]:
    """The handler of one operation. ``fixed`` maps each parameter-free path to its methods: a request for one of
    those paths that only a parameterized route matched (``PATCH /api/memories/search``) is 405, not 404."""
    patterns = {p.name: re.compile(str(p.schema["pattern"])) for p in op.params if "pattern" in p.schema}
    header_limits = {
        p.name: int(str(p.schema["maxLength"])) for p in op.params if p.where == "header" and "maxLength" in p.schema
    }

    async def run(request: Request) -> Response:
        try:
            state = state_of(request)
            access = NOBODY if op.public else await state.authenticate(request.headers)
            allowed = (fixed or {}).get(request.url.path)
            if allowed is not None:
                raise ApiError(
                    405,
                    "method_not_allowed",
                    f"{request.url.path} does not take {request.method}",
                    hint=f"use {', '.join(allowed)}",
                    headers={"Allow": ", ".join(allowed)},
                )
            path = dict(request.path_params)
            for name, pattern in patterns.items():
                if not pattern.fullmatch(str(path.get(name, ""))):
                    raise NotFound(f"no such {name.replace('_', ' ')} {path.get(name)!r}")
            for name, limit in header_limits.items():
                value = request.headers.get(name)
                if value is not None and len(value) > limit:
                    raise InvalidInput(f"the {name} header is {len(value)} characters; the limit is {limit}")
            query = parse_query(op.query, request) if op.query is not None else None
            if op.query is None and request.query_params:
                raise InvalidInput(f"this route takes no query parameters, got {', '.join(request.query_params)}")
            body = await parse_body(op.body, request, required=op.body_required) if op.body is not None else None
            return await op.handler(Call(request=request, gate=Gate(state, access), path=path, query=query, body=body))
        except (MemstoneError, ApiError) as exc:
            if isinstance(exc, MemstoneError) and error_response(exc).status_code == 500:
                log.error("%s %s failed: %r", request.method, request.url.path, exc, exc_info=exc)
            return error_response(exc)

    return run


def routes(ops: Sequence[Operation], state_of: Callable[[Request], AppState]) -> list[Route]:
    """Starlette routes for the table; methods sharing a path share a route."""
    by_path: dict[str, dict[str, Operation]] = {}
    for op in ops:
        by_path.setdefault(op.path, {})[op.method] = op
    fixed = {p: sorted(m) for p, m in by_path.items() if "{" not in p}
    out = []
    for path, methods in by_path.items():
        handlers = {m: endpoint(op, state_of, fixed if "{" in path else None) for m, op in methods.items()}

        async def dispatch(
            request: Request, _h: dict[str, Callable[[Request], Awaitable[Response]]] = handlers
        ) -> Response:
            return await _h[request.method](request)

        out.append(Route(path, dispatch, methods=list(methods)))
    return out


# ---------------------------------------------------------------------------------------------- OpenAPI 3.1
def _strip_null(schema: dict[str, object]) -> dict[str, object]:
    """A query parameter is absent or a value: ``anyOf [X, null]`` → ``X`` (keeping the description)."""
    any_of = schema.get("anyOf")
    if isinstance(any_of, list):
        rest = [s for s in any_of if s != {"type": "null"}]
        if len(rest) == 1 and isinstance(rest[0], dict):
            out = {k: v for k, v in schema.items() if k != "anyOf"}
            out.update(rest[0])
            if out.get("default", 0) is None:
                out.pop("default")
            return out
    return schema


def _query_params(model: type[BaseModel]) -> list[dict[str, object]]:
    schema = model.model_json_schema()
    props = typing.cast(dict[str, dict[str, object]], schema.get("properties", {}))
    required = set(typing.cast(list[str], schema.get("required", [])))
    out = []
    for wire, prop in props.items():
        p = _strip_null(dict(prop))
        p.pop("title", None)
        description = str(p.pop("description", ""))
        param: dict[str, object] = {"name": wire, "in": "query", "required": wire in required, "schema": p}
        if description:
            param["description"] = description
        if p.get("type") == "array":
            param["style"] = "form"
            param["explode"] = True
        out.append(param)
    return out


def openapi(ops: Sequence[Operation], *, version: str, local: bool) -> dict[str, object]:
    """The OpenAPI 3.1 document of exactly these operations."""
    models: set[type[BaseModel]] = {ErrorOut}
    for op in ops:
        if op.body is not None:
            models.add(op.body)
        if isinstance(op.response, type):
            models.add(op.response)
        for _, model in op.extra_responses.values():
            if model is not None:
                models.add(model)
    ordered = sorted(models, key=lambda m: m.__name__)
    _, defs = models_json_schema([(m, "validation") for m in ordered], ref_template="#/components/schemas/{model}")
    components = typing.cast(dict[str, object], defs.get("$defs", {}))
    paths: dict[str, dict[str, object]] = {}
    for op in ops:
        responses: dict[str, object] = {}
        if isinstance(op.response, type):
            content: dict[str, object] = {
                "application/json": {"schema": {"$ref": f"#/components/schemas/{op.response.__name__}"}}
            }
            responses[str(op.success)] = {"description": op.summary, "content": content}
        elif isinstance(op.response, str):
            responses[str(op.success)] = {
                "description": op.summary,
                "content": {op.response: {"schema": {"type": "string"}}},
            }
        else:
            responses[str(op.success)] = {"description": op.summary}
        for status, (text, model) in op.extra_responses.items():
            entry: dict[str, object] = {"description": text}
            if model is not None:
                entry["content"] = {"application/json": {"schema": {"$ref": f"#/components/schemas/{model.__name__}"}}}
            responses[str(status)] = entry
        codes = set(op.errors) | {503}
        if op.public:
            codes -= {401, 403}
        for status in sorted(codes):
            responses.setdefault(
                str(status),
                {
                    "description": ERROR_TEXT.get(status, "Error."),
                    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorOut"}}},
                },
            )
        parameters: list[dict[str, object]] = []
        for p in op.params:
            param: dict[str, object] = {"name": p.name, "in": p.where, "required": p.required, "schema": dict(p.schema)}
            if p.description:
                param["description"] = p.description
            parameters.append(param)
        if op.query is not None:
            parameters.extend(_query_params(op.query))
        item: dict[str, object] = {
            "operationId": op.operation_id,
            "summary": op.summary,
            "description": (op.description + "\n\n" if op.description else "") + f"Access: {op.access}",
            "tags": list(op.tags),
            "x-memstone-access": op.access,
            "responses": responses,
        }
        if parameters:
            item["parameters"] = parameters
        if op.body is not None:
            item["requestBody"] = {
                "description": f"A JSON object of at most {MAX_BODY} bytes; a larger one is refused (422) unread.",
                "required": op.body_required,
                "content": {"application/json": {"schema": {"$ref": f"#/components/schemas/{op.body.__name__}"}}},
            }
        if op.public:
            item["security"] = []
        paths.setdefault(op.path, {})[op.method.lower()] = item
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "memstone",
            "version": version,
            "description": "Durable, versioned, searchable memory for AI agents. "
            + (
                "This server runs in local mode: no token is needed."
                if local
                else "Every request needs `Authorization: Bearer <token>` (`memstone token create`)."
            ),
        },
        "servers": [{"url": "/"}],
        "paths": paths,
        "components": {
            "schemas": components,
            "securitySchemes": {
                "bearerAuth": {"type": "http", "scheme": "bearer", "description": "memstone API token"}
            },
        },
        "security": [] if local else [{"bearerAuth": []}],
    }


__all__ = ["Call", "Operation", "Param", "endpoint", "openapi", "parse_body", "parse_query", "routes"]
