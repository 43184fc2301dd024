"""The /api write handlers: create, update (PATCH), flag, relate, unrelate, rename, revert, forget, reactivate.
Each applies the caller's precondition (If-Match or the body's revision) and answers with the WriteOut shape."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from starlette.responses import Response

from ...domain.entry_fields import entry_fields
from ...domain.errors import InvalidInput, RevisionConflictError, StaleEntryError
from ...domain.ids import EntryId
from ...domain.model import EntryInput, EntryPatch, EntryVersion, Relation, Revision
from ...domain.rules import parse_revision
from ...service import MemoryService
from . import schemas as s
from .convert import etag, ok, record_of, record_out, revision_out
from .errors import ApiError
from .routing import Call


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
        record = await record_of(svc, current.entry_id)
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
    scope = await gate.named(q.scope, "write")
    for r in body.relations:
        await gate.entry(r.target, "read")
    item = EntryInput(**entry_fields(body), relations=_relations(body.relations), reason=body.reason)
    done = await gate.writer().remember_outcome(None, entries=[item], scope=scope.uri, author=gate.author)
    rev = done.revision
    assert rev is not None
    status = 201
    # Trigger: the same content is already live in this scope. Why: a duplicate is a no-op (nothing written).
    # Outcome: 200 with the existing record the service named, so the client can go to it.
    named = done.added or done.existing
    if not named:
        raise AssertionError("a create either adds an entry or names the live one")
    record = await record_of(gate.service, named[0])
    if not done.added:
        status = 200
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
    record = await record_of(gate.service, found.entry_id)
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


def state_action(target: str) -> Callable[[Call], Awaitable[Response]]:
    async def handler(call: Call) -> Response:
        body = call.b(s.StateIn)

        async def action(svc: MemoryService, head: Revision, current: EntryVersion) -> Revision:
            op = svc.forget if target == "forget" else svc.reactivate
            return await op(head, entries=[current.entry_id], reason=body.reason)

        return await _write(call, _expected(call, body.revision), action)

    return handler


__all__ = ["create", "flag", "relate", "rename", "revert", "state_action", "unrelate", "update"]
