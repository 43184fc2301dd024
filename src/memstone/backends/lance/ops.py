"""A transaction's row changes as the log stores them: the store core's own statements, replayed in order.

Every write the store core makes goes through the engine's ``Conn`` (``backends/sql/engine.py``) as a statement
with its arguments; the few engine-level steps that bypass it (the full-text rebuild's ``clear``) are recorded as
named calls. Replaying a transaction's ops on a replica that stands at the transaction's parent produces the same
rows, because:

- every value the core writes is an argument (ids, hashes and times are computed above the engine);
- generated keys are not left to chance: an ``insert_id`` records the key it got and the replay inserts it
  explicitly, so a rowid another statement names (a vector row) is the same on every replica;
- the log is a chain (``log.py``): a transaction is applied only on its own parent, so every replica applies the
  same transactions in the same order to the same initial (empty, freshly migrated) schema.

The payload is JSON (bytes as ``{"b": base64}``), zlib-compressed; it carries the replica schema version it was
recorded on, and a replica of another schema version refuses it.
"""

from __future__ import annotations

import base64
import json
import re
import zlib
from collections.abc import Callable, Sequence
from typing import Any

from ...domain.errors import BackendUnavailable, IntegrityError
from ..sql.engine import Conn

Op = list[Any]  # ["x", sql, args] | ["many", sql, rows] | ["id", sql, args, column, id] | ["call", name]

_WRITE = re.compile(r"^\s*(INSERT|UPDATE|DELETE|REPLACE|CREATE|DROP|ALTER)\b", re.IGNORECASE)
_INSERT = re.compile(r"^\s*INSERT INTO (\w+) \(([^)]*)\) VALUES \(([^)]*)\)\s*$", re.IGNORECASE | re.DOTALL)


def _enc(value: object) -> object:
    if isinstance(value, bytes | bytearray | memoryview):
        return {"b": base64.b64encode(bytes(value)).decode("ascii")}
    if value is None or isinstance(value, bool | int | float | str):
        return value
    raise IntegrityError(f"a statement argument of type {type(value).__name__} cannot be logged")


def _dec(value: object) -> object:
    if isinstance(value, dict):
        return base64.b64decode(value["b"])
    return value


def _with_values(ops: Sequence[Op], convert: Callable[[object], object]) -> list[Op]:
    """The ops with every statement argument passed through ``convert`` (``_enc`` to log them, ``_dec`` back)."""
    out: list[Op] = []
    for op in ops:
        if op[0] == "x":
            out.append(["x", op[1], [convert(a) for a in op[2]]])
        elif op[0] == "many":
            out.append(["many", op[1], [[convert(a) for a in row] for row in op[2]]])
        elif op[0] == "id":
            out.append(["id", op[1], [convert(a) for a in op[2]], op[3], op[4]])
        else:
            out.append(list(op))
    return out


def encode(ops: Sequence[Op], schema_version: int) -> bytes:
    out = _with_values(ops, _enc)
    text = json.dumps({"schema": schema_version, "ops": out}, separators=(",", ":"), ensure_ascii=False)
    return zlib.compress(text.encode("utf-8"), 6)


def decode(payload: bytes, schema_version: int) -> list[Op]:
    try:
        data = json.loads(zlib.decompress(payload).decode("utf-8"))
    except (zlib.error, ValueError) as exc:
        raise IntegrityError(f"a logged transaction is unreadable: {exc}") from exc
    if data.get("schema") != schema_version:
        raise BackendUnavailable(
            f"the store's log was written with replica schema {data.get('schema')}, this memstone has {schema_version}",
            hint="open the store with the memstone version that wrote it",
        )
    return _with_values(data["ops"], _dec)


def with_key(sql: str, column: str) -> str:
    """``INSERT INTO t (a, b) VALUES (?, ?)`` with the generated key ``column`` made explicit (first)."""
    m = _INSERT.match(sql)
    if m is None:
        raise IntegrityError(f"cannot log a generated key of this statement: {sql[:80]}")
    table, columns, marks = m.groups()
    return f"INSERT INTO {table} ({column}, {columns}) VALUES (?, {marks})"


class RecordingConn:
    """The replica's ``Conn``: runs every statement, and records the writes of the open write transaction."""

    def __init__(self, inner: Conn) -> None:
        self.inner = inner
        self.ops: list[Op] | None = None  # None: nothing is recorded (reads, replay)

    def q(self, sql: str, args: Sequence[object] = ()) -> list[Any]:
        rows = self.inner.q(sql, args)
        if self.ops is not None and _WRITE.match(sql):
            self.ops.append(["x", sql, list(args)])  # a write sent as a query (RETURNING) is logged all the same
        return rows

    def x(self, sql: str, args: Sequence[object] = ()) -> int:
        n = self.inner.x(sql, args)
        if self.ops is not None:
            self.ops.append(["x", sql, list(args)])
        return n

    def many(self, sql: str, rows: Sequence[Sequence[object]]) -> None:
        self.inner.many(sql, rows)
        if self.ops is not None and rows:
            self.ops.append(["many", sql, [list(r) for r in rows]])

    def insert_id(self, sql: str, args: Sequence[object], id_column: str) -> int:
        key = self.inner.insert_id(sql, args, id_column)
        if self.ops is not None:
            with_key(sql, id_column)  # refuse now, not at replay, a statement whose key cannot be logged
            self.ops.append(["id", sql, list(args), id_column, key])
        return key


_REPLAYABLE = re.compile(r"^\s*(INSERT|UPDATE|DELETE|CREATE|DROP)\b", re.IGNORECASE)


def replay(conn: Conn, ops: Sequence[Op], calls: dict[str, Any]) -> None:
    """Apply one logged transaction's ops on ``conn`` (inside the replica's write transaction).

    The log is shared storage: a statement from it is data, not code to trust. Only row and schema statements of
    the replica are replayed (``refuse_outside_the_replica`` guards the rest while this runs).
    """
    for op in ops:
        kind = op[0]
        if kind in ("x", "many", "id") and not (isinstance(op[1], str) and _REPLAYABLE.match(op[1])):
            raise IntegrityError(f"a logged transaction has a statement that is not a row change: {str(op[1])[:60]}")
        if kind == "x":
            conn.x(op[1], op[2])
        elif kind == "many":
            conn.many(op[1], op[2])
        elif kind == "id":
            conn.x(with_key(op[1], op[3]), [op[4], *op[2]])
        elif kind == "call" and op[1] in calls:
            calls[op[1]](conn)
        else:
            raise IntegrityError(f"a logged transaction has an unknown step {kind!r}")


_DENIED_FUNCTIONS = frozenset({"load_extension", "readfile", "writefile", "edit", "fts3_tokenizer"})


def refuse_outside_the_replica(action: int, arg1: str | None, arg2: str | None, db: str | None, _: str | None) -> int:
    """An apsw authorizer for replay: no ATTACH/DETACH, no function that reaches outside the database.

    (A top-level PRAGMA never gets this far: ``replay`` takes row and schema statements only. PRAGMAs that FTS5
    issues internally must stay allowed.)
    """
    import apsw

    if action in (apsw.SQLITE_ATTACH, apsw.SQLITE_DETACH):
        return int(apsw.SQLITE_DENY)
    if action == apsw.SQLITE_FUNCTION and (arg2 or "").lower() in _DENIED_FUNCTIONS:
        return int(apsw.SQLITE_DENY)
    return int(apsw.SQLITE_OK)


__all__ = ["Op", "RecordingConn", "decode", "encode", "refuse_outside_the_replica", "replay", "with_key"]
