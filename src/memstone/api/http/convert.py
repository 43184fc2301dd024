"""What the /api handlers share: validated responses, the record and Revision shapes, ETags and page cursors."""

from __future__ import annotations

import base64
import binascii
import json

from pydantic import BaseModel
from starlette.responses import JSONResponse, Response

from ...domain.errors import InvalidInput
from ...domain.model import EntryVersion, Revision
from ...domain.records import Record
from ...service import MemoryService


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


async def record_of(svc: MemoryService, entry_id: str) -> Record:
    (record,) = await svc.records([entry_id])
    return record


__all__ = ["cursor_int", "decode_cursor", "encode_cursor", "etag", "ok", "record_of", "record_out", "revision_out"]
