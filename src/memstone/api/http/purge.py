"""``POST /api/memories/{entry_id}/purge``: real erasure of an entry's content, for admins of its scope (issue 12).

The service decides (admin on the entry's scope; an entry the caller cannot read is 404, one it can read but not
administer is 403) and leaves a tombstone per purged version; see :mod:`memstone.service.purge`.
"""

from __future__ import annotations

from starlette.responses import JSONResponse, Response

from ...domain.ids import check_id
from . import schemas as s
from .routing import Call, Operation, Param

ENTRY = Param("entry_id", "path", {"type": "string", "pattern": s.ENTRY_ID}, "An entry id (ent_…).")


async def purge_entry(call: Call) -> Response:
    body = call.b(s.PurgeIn)
    entry_id = check_id(call.path["entry_id"], what="entry", prefix="ent_")
    report = await call.gate.service.purge(entry_id, reason=body.reason, versions=body.versions)
    return JSONResponse(s.PurgeOut.model_validate(report.to_dict()).model_dump(mode="json"))


def purge_operations() -> list[Operation]:
    """The purge operation (appended to the /api table)."""
    return [
        Operation("POST", "/api/memories/{entry_id}/purge", "purgeMemory",
                  "Erase the entry's content (all versions, or the chosen ones); tombstones are kept",
                  "admin on the entry's scope (read-only or write: 403; unreadable: 404)", purge_entry,
                  body=s.PurgeIn, params=(ENTRY,), response=s.PurgeOut, errors=(401, 403, 404, 422)),
    ]  # fmt: skip


__all__ = ["purge_operations"]
