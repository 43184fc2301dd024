"""The ``/api`` operations: thin handlers over :class:`MemoryService`, each with the access rule it applies.

Scopes are addressed by ``?scope=`` (URI or path form; default: the caller's own scope), entries by id
(``/api/memories/{entry_id}``: the server finds the entry's scope and checks it). Every listing is a page with
a hard upper bound; catalogue pages read one exact Revision, so paging is consistent while others write.
"""

from __future__ import annotations

import base64
import binascii
import json
import shutil
import tempfile
import zipfile
from collections.abc import Awaitable, Callable
from pathlib import Path

from pydantic import BaseModel
from starlette.background import BackgroundTask
from starlette.responses import FileResponse, JSONResponse, PlainTextResponse, Response

from ... import __version__
from ...domain.errors import InvalidInput, NotFound, RevisionConflictError, StaleEntryError
from ...domain.ids import EntryId
from ...domain.model import ArtifactRef, EntryInput, EntryPatch, EntryVersion, Relation, Revision
from ...domain.records import Record
from ...domain.rules import build_content, parse_revision
from ...domain.scopes import Scope
from ...service import MemoryService
from . import schemas as s
from .errors import ApiError
from .routing import Call, Operation, Param

ENTRY = Param("entry_id", "path", {"type": "string", "pattern": s.ENTRY_ID}, "An entry id (ent_…).")
VERSION = Param("version", "path", {"type": "string", "pattern": s.VERSION_REF}, "A version number or ver_ id.")
REVISION = Param("revision", "path", {"type": "string", "pattern": s.REVISION_REF}, "head or a Revision number.")
IF_MATCH = Param(
    "If-Match",
    "header",
    {"type": "string", "maxLength": 200},
    'The ETag you read (`"ver_…"`), a record revision, or `*`. Send it or the body\'s `revision`, not both '
    "(both: 422).",
    False,
)

READ_SCOPE = "read on the scope (?scope=, default your own)"
READ_ENTRY = "read on the entry's scope; an entry you cannot read is 404"
WRITE_ENTRY = "write on the entry's scope (read-only: 403; unreadable: 404)"


# ---------------------------------------------------------------------------------------------- conversions
def ok(model: type[BaseModel], data: object, *, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    """Validate against the documented schema, then send: the OpenAPI document is what the client gets."""
    return JSONResponse(model.model_validate(data).model_dump(mode="json"), status_code=status, headers=headers)


def record_out(record: Record) -> dict[str, object]:
    return {**record.to_dict(), "sources": list(record.version.content.sources)}


def revision_out(rev: Revision, scope: str | None, *, offset: int = 0, limit: int = 200) -> dict[str, object]:
    d = rev.to_dict()
    changes = rev.changes[offset : offset + limit]
    nxt = offset + limit if offset + limit < len(rev.changes) else None
    return {
        **{k: v for k, v in d.items() if k not in ("changes", "sources", "artifacts")},
        "scope": scope,
        "changes_total": len(rev.changes),
        "changes": [c.to_dict() for c in changes],
        "changes_next_offset": nxt,
        "sources": d["sources"],
        "artifacts": d["artifacts"],
    }


def etag(version: EntryVersion | Record) -> str:
    vid = version.entry_version_id
    return f'"{vid}"'


def encode_cursor(**fields: int | str) -> str:
    raw = json.dumps(fields, separators=(",", ":"), sort_keys=True).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str | None, keys: tuple[str, ...]) -> dict[str, object] | None:
    if cursor is None:
        return None
    try:
        data = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
    except (ValueError, binascii.Error) as exc:
        raise InvalidInput("invalid cursor", hint="pass next_cursor from the previous page unchanged") from exc
    if not isinstance(data, dict) or set(data) != set(keys) or not all(isinstance(data[k], (int, str)) for k in keys):
        raise InvalidInput("invalid cursor", hint="pass next_cursor from the previous page unchanged")
    return data


def cursor_int(data: dict[str, object], key: str) -> int:
    value = data[key]
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise InvalidInput("invalid cursor", hint="pass next_cursor from the previous page unchanged")
    return value


async def _records(svc: MemoryService, entry_id: str) -> Record:
    (record,) = await svc.records([entry_id])
    return record


# ---------------------------------------------------------------------------------------------- session, scopes
async def session(call: Call) -> Response:
    a = call.gate.access
    return ok(
        s.SessionOut,
        {
            "mode": "local" if a.local else "token",
            "principal": a.principal.to_dict(),
            "grants": [g.to_dict() for g in a.grants],
            "default_scope": call.gate.default_scope(),
            "version": __version__,
        },
    )


async def scopes(call: Call) -> Response:
    gate = call.gate
    default = gate.default_scope()
    items: list[dict[str, object]] = []
    seen = set()
    for uri, memory_id in await gate.service.scopes():
        scope = gate.parse(uri)
        held = await gate.held(scope)
        if held is None:
            continue
        seen.add(scope.uri)
        items.append(
            {"scope": scope.uri, "memory_id": memory_id, "tier": scope.tier, "permission": held, "default": False}
        )
    if default not in seen:
        scope = gate.parse(default)
        held = await gate.held(scope)
        if held is not None:
            items.append({"scope": default, "memory_id": None, "tier": scope.tier, "permission": held})
    for item in items:
        item["default"] = item["scope"] == default
    items.sort(key=lambda i: (not i["default"], str(i["scope"])))
    return ok(s.ScopesOut, {"default_scope": default, "items": items[:1000]})


# ---------------------------------------------------------------------------------------------- catalogue, search
async def catalogue(call: Call) -> Response:
    q = call.q(s.CatalogueQuery)
    gate = call.gate
    scope = gate.parse(q.scope)
    await gate.require(scope, "read")
    head = await gate.head_of(scope)
    if head is None:
        return ok(
            s.CatalogueOut, {"memory_ref": None, "scope": scope.uri, "total": 0, "next_cursor": None, "items": []}
        )
    cur = decode_cursor(q.cursor, ("m", "r", "o"))
    ref, offset = head.ref, 0
    if cur is not None:
        if cur["m"] != head.memory_id:
            raise InvalidInput("this cursor belongs to another scope", hint="start again without cursor=")
        revision = cursor_int(cur, "r")
        if not 1 <= revision <= head.revision:
            raise InvalidInput("invalid cursor", hint="pass next_cursor from the previous page unchanged")
        ref, offset = ArtifactRef(memory_id=head.memory_id, revision=revision), cursor_int(cur, "o")
    records = await gate.service.list(
        memories=[ref],
        kinds=q.kind,
        tags=q.tag,
        important=q.important,
        mandatory=q.mandatory,
        include_inactive=q.state == "all",
    )
    page = records[offset : offset + q.limit]
    end = offset + len(page)
    nxt = encode_cursor(m=ref.memory_id, r=ref.revision, o=end) if end < len(records) else None
    return ok(
        s.CatalogueOut,
        {
            "memory_ref": ref.to_dict(),
            "scope": scope.uri,
            "total": len(records),
            "next_cursor": nxt,
            "items": [record_out(r) for r in page],
        },
    )


async def _read_scopes(call: Call, values: list[str]) -> list[Scope]:
    gate = call.gate
    picked = [gate.parse(v) for v in values] or [gate.parse(None)]
    for scope in picked:
        await gate.require(scope, "read")
    return picked


async def search(call: Call) -> Response:
    q = call.q(s.SearchQuery)
    picked = await _read_scopes(call, q.scope)
    result = await call.gate.service.search(
        q.q,
        scopes=[p.uri for p in picked],
        limit=q.limit,
        mode=q.mode,
        kinds=q.kind,
        tags=q.tag,
        important=q.important,
        mandatory=q.mandatory,
        exact=q.exact,
        order=q.order,
        exclude_mandatory=q.exclude_mandatory,
        include_superseded=q.include_superseded,
        precedence=q.precedence,
    )
    return ok(s.SearchOut, {**result.to_dict(), "scopes": [p.uri for p in picked]})


async def recall(call: Call) -> Response:
    q = call.q(s.RecallQuery)
    picked = await _read_scopes(call, q.scope)
    if q.budget_tokens is not None and q.budget_chars is not None:
        raise InvalidInput("give budget_tokens or budget_chars, not both")
    bundle = await call.gate.service.recall(
        q.q,
        scopes=[p.uri for p in picked],
        budget_tokens=q.budget_tokens,
        budget_chars=q.budget_chars,
        limit=q.limit,
        mode=q.mode,
    )
    d = bundle.to_dict()
    d["mandatory"] = [record_out(r) for r in bundle.mandatory]
    return ok(s.RecallOut, {**d, "scopes": [p.uri for p in picked]})


async def lookup(call: Call) -> Response:
    q = call.q(s.LookupQuery)
    scope = call.gate.parse(q.scope)
    await call.gate.require(scope, "read")
    if await call.gate.head_of(scope) is None:
        raise NotFound(f"scope {scope.uri} has no Memory yet")
    record = await call.gate.service.lookup(scope.uri, kind=q.kind, slug=q.slug, include_inactive=True)
    return ok(s.EntryOut, {"record": record_out(record), "etag": etag(record)}, headers={"ETag": etag(record)})


# ---------------------------------------------------------------------------------------------- Revisions, changes
async def changes(call: Call) -> Response:
    q = call.q(s.ChangesQuery)
    scope = call.gate.parse(q.scope)
    await call.gate.require(scope, "read")
    head = await call.gate.head_of(scope)
    if head is None or q.since >= head.revision:
        mid = head.memory_id if head else None
        return ok(s.ChangesOut, {"scope": scope.uri, "memory_id": mid, "items": [], "next_since": None})
    last = min(head.revision, q.since + q.limit)
    deltas = await call.gate.service.changes(
        ArtifactRef(memory_id=head.memory_id, revision=last), since_revision=q.since
    )
    items = []
    for d in deltas:
        items.append(
            {
                "memory_ref": d.memory_ref.to_dict(),
                "changes": [c.to_dict() for c in d.changes[:1000]],
                "truncated": len(d.changes) > 1000,
            }
        )
    nxt = last if last < head.revision else None
    return ok(s.ChangesOut, {"scope": scope.uri, "memory_id": head.memory_id, "items": items, "next_since": nxt})


async def revision(call: Call) -> Response:
    q = call.q(s.RevisionQuery)
    scope = call.gate.parse(q.scope)
    await call.gate.require(scope, "read")
    head = await call.gate.head_of(scope)
    if head is None:
        raise NotFound(f"scope {scope.uri} has no Memory yet", hint="remember something in it first")
    ref = call.path["revision"]
    rev = head if ref == "head" else await call.gate.service.revision(head.memory_id, parse_revision(ref))
    return ok(s.RevisionOut, revision_out(rev, scope.uri, offset=q.offset, limit=q.limit))


# ---------------------------------------------------------------------------------------------- one entry
async def read_entry(call: Call) -> Response:
    q = call.q(s.EntryQuery)
    version, _ = await call.gate.entry(call.path["entry_id"], "read")
    svc = call.gate.service
    memory = None
    if q.revision is not None:
        memory = await svc.revision(version.memory_id, q.revision)
    (record,) = await svc.records([version.entry_id], memory=memory)
    return ok(s.EntryOut, {"record": record_out(record), "etag": etag(record)}, headers={"ETag": etag(record)})


async def history(call: Call) -> Response:
    q = call.q(s.PageQuery)
    version, scope = await call.gate.entry(call.path["entry_id"], "read")
    chain = await call.gate.service.history(version.entry_id)
    cur = decode_cursor(q.cursor, ("o",))
    offset = cursor_int(cur, "o") if cur is not None else 0
    page = chain[offset : offset + q.limit]
    end = offset + len(page)
    return ok(
        s.HistoryOut,
        {
            "entry_id": version.entry_id,
            "scope": scope.uri if scope else None,
            "total": len(chain),
            "next_cursor": encode_cursor(o=end) if end < len(chain) else None,
            "items": [h.to_dict() for h in page],
        },
    )


async def _version(call: Call, entry_id: EntryId, ref: str) -> EntryVersion:
    svc = call.gate.service
    v = await svc.version(f"{entry_id}@{ref}" if ref.isdigit() else ref)
    if v.entry_id != entry_id:
        raise NotFound(f"{ref} is not a version of {entry_id}")
    return v


async def read_version(call: Call) -> Response:
    version, _ = await call.gate.entry(call.path["entry_id"], "read")
    wanted = await _version(call, version.entry_id, call.path["version"])
    chain = await call.gate.service.history(version.entry_id)
    item = next(h for h in chain if h.version.entry_version_id == wanted.entry_version_id)
    return ok(s.VersionOut, item.to_dict(), headers={"ETag": etag(wanted)})


async def source(call: Call) -> Response:
    q = call.q(s.SourceQuery)
    version, _ = await call.gate.entry(call.path["entry_id"], "read")
    wanted = await _version(call, version.entry_id, q.version) if q.version else version
    text = await call.gate.service.source(wanted.entry_version_id)
    return PlainTextResponse(text, media_type="text/markdown; charset=utf-8")


async def diff(call: Call) -> Response:
    q = call.q(s.DiffQuery)
    version, _ = await call.gate.entry(call.path["entry_id"], "read")
    svc = call.gate.service
    to = await _version(call, version.entry_id, q.to) if q.to else version
    if q.from_:
        result = await svc.diff(await _version(call, version.entry_id, q.from_), to)
    else:
        result = await svc.diff(to)
    return ok(s.DiffOut, result.to_dict())


async def blame(call: Call) -> Response:
    version, _ = await call.gate.entry(call.path["entry_id"], "read")
    fields = await call.gate.service.blame(version.entry_id)
    return ok(s.BlameOut, {"entry_id": version.entry_id, "fields": [f.to_dict() for f in fields]})


# ---------------------------------------------------------------------------------------------- writes
def _if_match(call: Call) -> str | None:
    header = call.request.headers.get("if-match")
    if header is None:
        return None
    first = header.split(",")[0].strip()
    if first.startswith("W/"):
        first = first[2:]
    return first.strip('"') or None


def _expected(call: Call, body_revision: int | None) -> int | str | None:
    """The CAS token the client sent: an ETag (ver_… id, or * for "whatever is current") or a record revision."""
    tag = _if_match(call)
    if tag is not None and body_revision is not None:
        raise InvalidInput("send the revision you read once: If-Match or 'revision', not both")
    if tag is not None:
        if tag == "*":
            return None
        if tag.isdigit():
            return parse_revision(tag, "If-Match")
        return tag
    return body_revision


async def _write(
    call: Call,
    expected: int | str | None,
    action: Callable[[MemoryService, Revision, EntryVersion], Awaitable[Revision]],
) -> Response:
    """Apply ``action`` to the entry's current version at its Memory's head, with per-entry CAS.

    The head CAS of the commit guards the window between the check and the write: if another writer moved the
    head, the entry is read again; if *this entry* changed, the client gets 409 with the current record.
    """
    gate = call.gate
    svc = gate.service

    async def attempt() -> Response:
        found, scope = await gate.entry(call.path["entry_id"], "write")
        head = await svc.head(found.memory_id)
        current = await svc.get(found.entry_id, memory=head)
        if expected is not None and expected not in (current.version, current.entry_version_id):
            (record,) = await svc.records([current.entry_id], memory=head)
            raise ApiError(
                409,
                RevisionConflictError.code,
                f"stale: you read {expected} of {current.entry_id}, it is now at revision {current.version}",
                hint="re-read the record ('current' holds it), apply your change again, and send its revision",
                extra={"current": s.RecordOut.model_validate(record_out(record)).model_dump(mode="json")},
                headers={"ETag": etag(record)},
            )
        rev = await action(gate.writer(), head, current)  # a lost race: the service's retry re-reads the head
        record = await _records(svc, current.entry_id)
        return ok(
            s.WriteOut,
            {"revision": revision_out(rev, scope.uri if scope else None), "record": record_out(record)},
            headers={"ETag": etag(record)},
        )

    return await svc.retrying(attempt)


def _relations(items: list[s.RelationIn]) -> list[Relation]:
    return [Relation(kind=r.kind, target=EntryId(r.target)) for r in items]


async def create(call: Call) -> Response:
    q = call.q(s.ScopeQuery)
    body = call.b(s.EntryCreate)
    gate = call.gate
    scope = gate.parse(q.scope)
    await gate.require(scope, "write")
    for r in body.relations:
        await gate.entry(r.target, "read")
    item = EntryInput(
        kind=body.kind,
        text=body.text,
        title=body.title,
        tags=body.tags,
        slug=body.slug,
        important=body.important,
        mandatory=body.mandatory,
        relations=_relations(body.relations),
        reason=body.reason,
    )
    before = await gate.head_of(scope)
    rev = await gate.writer().remember(None, entries=[item], scope=scope.uri, author=gate.author)
    assert rev is not None
    digest = build_content(item, op_sources=()).content_hash
    fresh = before is None or rev.revision > before.revision
    record: Record | None = None
    if fresh:
        for eid in [c.entry_id for c in rev.changes if c.op == "add"]:
            candidate = await _records(gate.service, eid)
            if candidate.version.entry_content_hash == digest:
                record = candidate
    status = 201
    if record is None:
        # Trigger: the same content is already live in this scope. Why: a duplicate is a no-op (nothing written).
        # Outcome: 200 with the existing record, so the client can go to it.
        existing = [r for r in await gate.service.list(memories=[rev.ref]) if r.version.entry_content_hash == digest]
        if not existing:
            raise AssertionError("a no-op create must match a live entry")
        record, status = existing[0], 200
    headers = {"ETag": etag(record), "Location": f"/api/memories/{record.entry_id}"}
    return ok(
        s.WriteOut,
        {"revision": revision_out(rev, scope.uri), "record": record_out(record)},
        status=status,
        headers=headers,
    )


async def update(call: Call) -> Response:
    body = call.b(s.EntryPatch)
    expected = _expected(call, body.revision)
    if expected is None and _if_match(call) != "*":
        raise ApiError(
            428,
            "precondition_required",
            "an update must say which revision of the record it is based on",
            hint='send If-Match: <the ETag you read> or "revision": <the record\'s revision> in the body',
        )
    if body.relations is not None:
        for r in body.relations:
            await call.gate.entry(r.target, "read")

    fields = body.model_fields_set
    patch = EntryPatch(
        kind=body.kind,
        text=body.text,
        title=(body.title or "") if "title" in fields else None,
        tags=body.tags,
        slug=(body.slug or "") if "slug" in fields else None,
        important=body.important,
        mandatory=body.mandatory,
        relations=_relations(body.relations) if body.relations is not None else None,
        reason=body.reason,
    )
    gate = call.gate
    found, scope = await gate.entry(call.path["entry_id"], "write")
    try:
        done = await gate.service.update(found.entry_id, patch, expected_version=expected)
    except StaleEntryError as exc:
        (record,) = await gate.service.records([found.entry_id])
        raise ApiError(
            409,
            exc.code,
            exc.message,
            hint="re-read the record ('current' holds it), apply your change again, and send its revision",
            extra={"current": s.RecordOut.model_validate(record_out(record)).model_dump(mode="json")},
            headers={"ETag": etag(record)},
        ) from exc
    record = await _records(gate.service, found.entry_id)
    return ok(
        s.WriteOut,
        {"revision": revision_out(done.revision, scope.uri if scope else None), "record": record_out(record)},
        headers={"ETag": etag(record)},
    )


async def flag(call: Call) -> Response:
    body = call.b(s.FlagIn)
    if body.important is None and body.mandatory is None:
        raise InvalidInput("flag needs important or mandatory (true or false)")

    async def action(svc: MemoryService, head: Revision, current: EntryVersion) -> Revision:
        return await svc.flag(head, current, important=body.important, mandatory=body.mandatory)

    return await _write(call, _expected(call, body.revision), action)


async def relate(call: Call) -> Response:
    body = call.b(s.RelateIn)
    await call.gate.entry(body.target, "read")

    async def action(svc: MemoryService, head: Revision, current: EntryVersion) -> Revision:
        return await svc.relate(head, current, body.target, body.kind, deactivate_target=body.deactivate_target)

    return await _write(call, _expected(call, body.revision), action)


async def unrelate(call: Call) -> Response:
    q = call.q(s.UnrelateQuery)

    async def action(svc: MemoryService, head: Revision, current: EntryVersion) -> Revision:
        return await svc.unrelate(head, current, q.target, q.kind)

    return await _write(call, _expected(call, None), action)


async def rename(call: Call) -> Response:
    body = call.b(s.RenameIn)

    async def action(svc: MemoryService, head: Revision, current: EntryVersion) -> Revision:
        return await svc.rename(head, current, body.slug)

    return await _write(call, _expected(call, body.revision), action)


async def revert(call: Call) -> Response:
    body = call.b(s.RevertIn)

    async def action(svc: MemoryService, head: Revision, current: EntryVersion) -> Revision:
        to: str | int = parse_revision(body.to, "version") if body.to.isdigit() else body.to
        return await svc.revert(head, current, to, reason=body.reason or "revert")

    return await _write(call, _expected(call, body.revision), action)


def _state_action(target: str) -> Callable[[Call], Awaitable[Response]]:
    async def handler(call: Call) -> Response:
        body = call.b(s.StateIn)

        async def action(svc: MemoryService, head: Revision, current: EntryVersion) -> Revision:
            op = svc.forget if target == "forget" else svc.reactivate
            return await op(head, entries=[current.entry_id], reason=body.reason)

        return await _write(call, _expected(call, body.revision), action)

    return handler


# ---------------------------------------------------------------------------------------------- export
async def export(call: Call) -> Response:
    q = call.q(s.ExportQuery)
    scope = call.gate.parse(q.scope)
    await call.gate.require(scope, "read")
    if await call.gate.head_of(scope) is None:
        raise NotFound(f"scope {scope.uri} has no Memory yet")
    work = Path(tempfile.mkdtemp(prefix="memstone-export-"))
    try:
        tree = work / "export"
        await call.gate.service.export_markdown(tree, scopes=[scope.uri])
        archive = work / "export.zip"
        with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as z:
            for path in sorted(tree.rglob("*")):
                if path.is_file():
                    z.write(path, path.relative_to(tree).as_posix())
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    name = "memstone-" + "-".join(scope.path[1:]) + ".zip"
    return FileResponse(
        archive,
        media_type="application/zip",
        filename=name,
        background=BackgroundTask(shutil.rmtree, work, ignore_errors=True),
    )


# ---------------------------------------------------------------------------------------------- the table
ENTRY_ERRORS = (401, 403, 404, 422)
WRITE_ERRORS = (401, 403, 404, 409, 422)


def operations() -> list[Operation]:
    """Every /api operation, in routing order (fixed paths before /api/memories/{entry_id})."""
    return [
        Operation("GET", "/api/session", "getSession", "Who you are, the mode and your default scope",
                  "any authenticated caller", session, response=s.SessionOut, errors=(401,), tags=("session",)),
        Operation("GET", "/api/memories/scopes", "listScopes", "The scopes you can read",
                  "lists only scopes you hold a permission on", scopes, response=s.ScopesOut, errors=(401,)),
        Operation("GET", "/api/memories", "listMemories", "The catalogue of a scope (filtered, paged)",
                  READ_SCOPE, catalogue, query=s.CatalogueQuery, response=s.CatalogueOut, errors=(401, 403, 422)),
        Operation("POST", "/api/memories", "createMemory", "Remember a new entry in a scope",
                  "write on the scope; the owner is the URL's scope, the author your principal (owner fields in the "
                  "body are refused)", create, query=s.ScopeQuery, body=s.EntryCreate, success=201,
                  response=s.WriteOut, errors=(401, 403, 404, 409, 422, 501),
                  extra_responses={200: ("Already live: nothing was written; the existing record.", s.WriteOut)}),
        Operation("GET", "/api/memories/search", "searchMemories", "Search scopes (fts, vector, hybrid or auto)",
                  "read on every scope searched", search, query=s.SearchQuery, response=s.SearchOut,
                  errors=(401, 403, 422, 501)),
        Operation("GET", "/api/memories/recall", "recallMemories", "Session start: mandatory entries + context",
                  "read on every scope", recall, query=s.RecallQuery, response=s.RecallOut,
                  errors=(401, 403, 422, 501)),
        Operation("GET", "/api/memories/lookup", "lookupMemory", "The entry a (scope, kind, slug) names",
                  READ_SCOPE, lookup, query=s.LookupQuery, response=s.EntryOut),
        Operation("GET", "/api/memories/changes", "listChanges", "What each Revision changed (paged)",
                  READ_SCOPE, changes, query=s.ChangesQuery, response=s.ChangesOut, errors=(401, 403, 404, 422)),
        Operation("GET", "/api/memories/revisions/{revision}", "getRevision", "One exact Revision of a scope",
                  READ_SCOPE, revision, query=s.RevisionQuery, params=(REVISION,), response=s.RevisionOut),
        Operation("GET", "/api/memories/export", "exportMemories", "The scope in the Xema layout, as a zip",
                  READ_SCOPE, export, query=s.ExportQuery, response="application/zip"),
        Operation("GET", "/api/memories/{entry_id}", "getMemory", "An entry's current record (or at a Revision)",
                  READ_ENTRY, read_entry, query=s.EntryQuery, params=(ENTRY,), response=s.EntryOut),
        Operation("PATCH", "/api/memories/{entry_id}", "updateMemory", "Revise an entry (CAS on its revision)",
                  WRITE_ENTRY, update, body=s.EntryPatch, params=(ENTRY, IF_MATCH), response=s.WriteOut,
                  errors=(*WRITE_ERRORS, 428)),
        Operation("GET", "/api/memories/{entry_id}/versions", "listVersions", "The entry's revision chain (paged)",
                  READ_ENTRY, history, query=s.PageQuery, params=(ENTRY,), response=s.HistoryOut),
        Operation("GET", "/api/memories/{entry_id}/versions/{version}", "getVersion", "One exact version",
                  READ_ENTRY, read_version, params=(ENTRY, VERSION), response=s.VersionOut),
        Operation("GET", "/api/memories/{entry_id}/source", "getSource", "Markdown with YAML frontmatter",
                  READ_ENTRY, source, query=s.SourceQuery, params=(ENTRY,), response="text/markdown"),
        Operation("GET", "/api/memories/{entry_id}/diff", "diffVersions", "Field-level diff of two versions",
                  READ_ENTRY, diff, query=s.DiffQuery, params=(ENTRY,), response=s.DiffOut),
        Operation("GET", "/api/memories/{entry_id}/blame", "blameMemory", "Who last changed each field",
                  READ_ENTRY, blame, params=(ENTRY,), response=s.BlameOut),
        Operation("POST", "/api/memories/{entry_id}/flag", "flagMemory", "Set or clear important / mandatory",
                  WRITE_ENTRY, flag, body=s.FlagIn, params=(ENTRY, IF_MATCH), response=s.WriteOut,
                  errors=WRITE_ERRORS),
        Operation("POST", "/api/memories/{entry_id}/relations", "relateMemory", "Link the entry to another",
                  WRITE_ENTRY + "; read on the target", relate, body=s.RelateIn, params=(ENTRY, IF_MATCH),
                  response=s.WriteOut, errors=WRITE_ERRORS),
        Operation("DELETE", "/api/memories/{entry_id}/relations", "unrelateMemory", "Remove a link",
                  WRITE_ENTRY, unrelate, query=s.UnrelateQuery, params=(ENTRY, IF_MATCH), response=s.WriteOut,
                  errors=WRITE_ERRORS),
        Operation("POST", "/api/memories/{entry_id}/rename", "renameMemory", "Change the slug (old one redirects)",
                  WRITE_ENTRY, rename, body=s.RenameIn, params=(ENTRY, IF_MATCH), response=s.WriteOut,
                  errors=WRITE_ERRORS),
        Operation("POST", "/api/memories/{entry_id}/revert", "revertMemory", "Restore an old version as a new one",
                  WRITE_ENTRY, revert, body=s.RevertIn, params=(ENTRY, IF_MATCH), response=s.WriteOut,
                  errors=WRITE_ERRORS),
        Operation("POST", "/api/memories/{entry_id}/forget", "forgetMemory", "Remove: mark inactive (history kept)",
                  WRITE_ENTRY, _state_action("forget"), body=s.StateIn, body_required=False,
                  params=(ENTRY, IF_MATCH), response=s.WriteOut, errors=WRITE_ERRORS),
        Operation("POST", "/api/memories/{entry_id}/reactivate", "reactivateMemory", "Make it active again",
                  WRITE_ENTRY, _state_action("reactivate"), body=s.StateIn, body_required=False,
                  params=(ENTRY, IF_MATCH), response=s.WriteOut, errors=WRITE_ERRORS),
    ]  # fmt: skip


__all__ = ["operations"]
