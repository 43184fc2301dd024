"""Reads the CLI needs against a team server that the first /api table had no operation for (issue 13).

``GET /api/records`` is ``memstone list`` (several scopes at once, with precedence across them, as the service
lists them); ``GET /api/memories/{entry_id}/tombstones`` is ``memstone purge --list``. Each answers with the
shape the local command prints (``Record.to_dict()``, ``Tombstone.to_dict()``), so a remote command prints what a
local one does.
"""

from __future__ import annotations

from pydantic import Field
from starlette.responses import JSONResponse, Response

from . import schemas as s
from .reads import _read_scopes
from .routing import Call, Operation, Param

ENTRY = Param("entry_id", "path", {"type": "string", "pattern": s.ENTRY_ID}, "An entry id (ent_…).")


class RecordsQuery(s.Strict):
    scope: list[s.ScopeItem] = Field(default_factory=list, max_length=10, description="Default: yours.")
    kind: list[str] = Field(default_factory=list, max_length=20, description="Only these kinds (repeatable).")
    tag: list[s.Tag] = Field(default_factory=list, max_length=20, description="Only records with every tag given.")
    important: bool | None = None
    mandatory: bool | None = None
    limit: int = Field(default=1000, ge=1, le=10_000, description="At most this many records.")
    inactive: bool = Field(default=False, description="Include forgotten entries too.")
    precedence: bool = Field(default=True, description="Mark records shadowed by a more specific scope.")


class RecordsOut(s.Open):
    records: list[dict[str, object]]


class TombstonesOut(s.Open):
    entry_id: str
    tombstones: list[dict[str, object]]


async def list_records(call: Call) -> Response:
    q = call.q(RecordsQuery)
    scopes = await _read_scopes(call, q.scope)
    records = await call.gate.service.list(
        scopes=scopes, kinds=q.kind, tags=q.tag, important=q.important, mandatory=q.mandatory,
        limit=q.limit, include_inactive=q.inactive, precedence=q.precedence,
    )  # fmt: skip
    return JSONResponse(RecordsOut.model_validate({"records": [r.to_dict() for r in records]}).model_dump(mode="json"))


async def list_tombstones(call: Call) -> Response:
    found, _ = await call.gate.entry(call.path["entry_id"], "read")
    tombs = await call.gate.service.tombstones(found.entry_id)
    data = {"entry_id": found.entry_id, "tombstones": [t.to_dict() for t in tombs]}
    return JSONResponse(TombstonesOut.model_validate(data).model_dump(mode="json"))


def cli_read_operations() -> list[Operation]:
    """The operations above (appended to the /api table)."""
    return [
        Operation("GET", "/api/records", "listRecords", "Live records of several scopes, with precedence",
                  "read on every scope listed", list_records, query=RecordsQuery, response=RecordsOut,
                  errors=(401, 403, 422)),
        Operation("GET", "/api/memories/{entry_id}/tombstones", "listTombstones", "What was purged of an entry",
                  "read on the entry's scope; an entry you cannot read is 404", list_tombstones, params=(ENTRY,),
                  response=TombstonesOut),
    ]  # fmt: skip


__all__ = ["cli_read_operations"]
