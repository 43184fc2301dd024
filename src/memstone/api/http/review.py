"""The capture review queue over HTTP: list, accept and reject, through memstone.capture's public API.

A caller sees only the items of scopes it may read, and decides only those it may write (the service's policy,
as on every route); in local mode that is every item.
"""

from __future__ import annotations

from starlette.responses import JSONResponse, Response

from ...capture import ReviewQueue, accept, reject, visible_items
from ...domain.scopes import canonical_scope
from . import schemas as s
from .routing import Call, Operation, Param

ITEM = Param("item_id", "path", {"type": "string", "pattern": s.REVIEW_ITEM_ID}, "A queued item id (cap_…).")


def _ok(model: type[s.Open], data: object) -> Response:
    return JSONResponse(model.model_validate(data).model_dump(mode="json"))


def _queue(call: Call) -> ReviewQueue:
    return ReviewQueue.of(call.gate.service)  # kept in the served store, on any engine


async def review_list(call: Call) -> Response:
    q = call.q(s.ReviewQuery)
    found = await visible_items(
        call.gate.service,
        _queue(call),
        status=None if q.status == "all" else q.status,
        scope=canonical_scope(q.scope) if q.scope else None,
    )
    items = [i.to_dict() for i in found]
    return _ok(s.ReviewListOut, {"items": items})


async def review_accept(call: Call) -> Response:
    queue, item_id = _queue(call), call.path["item_id"]
    done = await accept(call.gate.service, queue, item_id, decided_by=call.gate.author, surface="api")
    item_out = (await queue.get(item_id)).to_dict()
    return _ok(s.ReviewDecisionOut, {"item": item_out, "result": done.to_dict(), "entries": list(done.entries())})


async def review_reject(call: Call) -> Response:
    note = call.b(s.ReviewRejectIn).note
    done = await reject(call.gate.service, _queue(call), call.path["item_id"], decided_by=call.gate.author, note=note)
    return _ok(s.ReviewDecisionOut, {"item": done.to_dict(), "entries": []})


def review_operations() -> list[Operation]:
    """The review queue's operations (appended to the /api table)."""
    tags = ("capture",)
    return [
        Operation("GET", "/api/capture/queue", "listReviewQueue", "The capture review queue (default: pending)",
                  "lists only items of scopes you can read", review_list, query=s.ReviewQuery,
                  response=s.ReviewListOut, errors=(401, 422), tags=tags),
        Operation("POST", "/api/capture/queue/{item_id}/accept", "acceptReviewItem",
                  "Accept a queued candidate: write it now (re-planned against the head)",
                  "write on the item's scope", review_accept, params=(ITEM,), response=s.ReviewDecisionOut,
                  errors=(401, 403, 404, 422), tags=tags),
        Operation("POST", "/api/capture/queue/{item_id}/reject", "rejectReviewItem",
                  "Reject a queued candidate: nothing is written", "write on the item's scope", review_reject,
                  body=s.ReviewRejectIn, body_required=False, params=(ITEM,), response=s.ReviewDecisionOut,
                  errors=(401, 403, 404, 422), tags=tags),
    ]  # fmt: skip


__all__ = ["review_operations"]
