"""The /api read handlers: session, scopes, catalogue, search, recall, lookup, changes, Revisions, one entry's
record, versions, source, diff and blame, and the zip export."""

from __future__ import annotations

import shutil
import tempfile
import zipfile
from pathlib import Path

from starlette.background import BackgroundTask
from starlette.responses import FileResponse, PlainTextResponse, Response

from ... import __version__
from ...domain.errors import InvalidInput, NotFound
from ...domain.ids import EntryId
from ...domain.model import ArtifactRef, EntryVersion
from ...domain.rules import parse_revision
from . import schemas as s
from .convert import cursor_int, decode_cursor, encode_cursor, etag, ok, record_out, revision_out
from .routing import Call


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
    scope = await gate.named(q.scope, "read")
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


async def _read_scopes(call: Call, values: list[str]) -> list[str]:
    """The URIs of the scopes a read names (none: the gate's default), each checked for the read permission."""
    gate = call.gate
    picked = [gate.parse(v) for v in values] or [gate.parse(None)]
    for scope in picked:
        await gate.require(scope, "read")
    return [scope.uri for scope in picked]


async def search(call: Call) -> Response:
    q = call.q(s.SearchQuery)
    scopes = await _read_scopes(call, q.scope)
    result = await call.gate.service.search(
        q.q,
        scopes=scopes,
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
        context=q.context,
    )
    return ok(s.SearchOut, {**result.to_dict(), "scopes": scopes})


async def recall(call: Call) -> Response:
    q = call.q(s.RecallQuery)
    scopes = await _read_scopes(call, q.scope)
    bundle = await call.gate.service.recall(
        q.q,
        scopes=scopes,
        budget_tokens=q.budget_tokens,
        budget_chars=q.budget_chars,
        limit=q.limit,
        mode=q.mode,
        order=q.order,
    )
    d = bundle.to_dict()
    d["mandatory"] = [record_out(r) for r in bundle.mandatory]
    return ok(s.RecallOut, {**d, "scopes": scopes})


async def lookup(call: Call) -> Response:
    q = call.q(s.LookupQuery)
    scope = await call.gate.named(q.scope, "read")
    if await call.gate.head_of(scope) is None:
        raise NotFound(f"scope {scope.uri} has no Memory yet")
    record = await call.gate.service.lookup(scope.uri, kind=q.kind, slug=q.slug, include_inactive=True)
    return ok(s.EntryOut, {"record": record_out(record), "etag": etag(record)}, headers={"ETag": etag(record)})


# ---------------------------------------------------------------------------------------------- Revisions, changes
async def changes(call: Call) -> Response:
    q = call.q(s.ChangesQuery)
    scope = await call.gate.named(q.scope, "read")
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
    scope = await call.gate.named(q.scope, "read")
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
    chain = await call.gate.service.history(version.entry_id, reasons=True)
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
    chain = await call.gate.service.history(version.entry_id, reasons=True)
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


# ---------------------------------------------------------------------------------------------- export
async def export(call: Call) -> Response:
    q = call.q(s.ExportQuery)
    scope = await call.gate.named(q.scope, "read")
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


__all__ = [
    "blame",
    "catalogue",
    "changes",
    "diff",
    "export",
    "history",
    "lookup",
    "read_entry",
    "read_version",
    "recall",
    "revision",
    "scopes",
    "search",
    "session",
    "source",
]
