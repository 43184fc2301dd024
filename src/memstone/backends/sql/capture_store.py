"""The capture review queue and the store's settings (capture settings among them) in every engine.

Written once against the engine parts; each engine's migrations create ``capture_queue`` and ``store_settings``.
The queue keeps each item as its JSON document (``memstone.capture.QueueItem.to_dict``) beside the columns it is
looked up by; ``seq`` keeps the order items were queued in. Adding takes the isolation contract's
``meta:capture_queue`` lock, so the "already pending or rejected" check and the insert are one step across
processes: two hooks never queue the same statement twice. This layer knows the documents' shape only as far as
those keys; :mod:`memstone.capture` owns their meaning.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import TypeVar

from ...domain.errors import InvalidInput
from .jobs import EngineJobs

T = TypeVar("T")
LOCK = "meta:capture_queue"
Record = dict[str, object]
_COLUMNS = ("item_id", "item_type", "scope", "status", "text_key", "flag_key", "created_at", "record")


def text_key(record: Mapping[str, object]) -> str | None:
    """The digest a candidate is deduplicated by: its scope and its text, case- and space-folded."""
    candidate = record.get("candidate")
    if not isinstance(candidate, Mapping) or not isinstance(candidate.get("text"), str):
        return None
    text = " ".join(str(candidate["text"]).casefold().split())
    return hashlib.sha256(f"{record.get('scope')}\0{text}".encode()).hexdigest()


def flag_key(record: Mapping[str, object]) -> str | None:
    """The digest a review flag is deduplicated by: the entry version and the commit it was raised at."""
    flag = record.get("flag")
    if not isinstance(flag, Mapping):
        return None
    return hashlib.sha256(f"{flag.get('entry_version_id')}\0{flag.get('head_commit')}".encode()).hexdigest()


class CaptureRecords(EngineJobs):
    """The review queue and settings of one store, over its engine."""

    write_locks = (LOCK,)

    # ------------------------------------------------------------------ the review queue
    def add_sync(self, records: Sequence[Mapping[str, object]], *, dedupe: bool = True) -> tuple[str, ...]:
        """Inside a write transaction: queue records (an item id already there is skipped, never replaced)."""
        added: list[str] = []
        insert = self.engine.dialect.insert_ignore("capture_queue", _COLUMNS, ("item_id",))
        for record in records:
            tkey, fkey = text_key(record), flag_key(record)
            if (
                dedupe
                and tkey is not None
                and self._q(
                    "SELECT 1 FROM capture_queue WHERE text_key = ? AND status IN ('pending', 'rejected')", (tkey,)
                )
            ):
                continue
            if (
                dedupe
                and fkey is not None
                and self._q("SELECT 1 FROM capture_queue WHERE flag_key = ? AND status = 'pending'", (fkey,))
            ):
                continue
            row = (
                str(record["item_id"]), str(record["item_type"]), _opt(record.get("scope")),
                str(record.get("status") or "pending"), tkey, fkey, str(record.get("created_at") or ""),
                json.dumps(dict(record), ensure_ascii=False, sort_keys=True),
            )  # fmt: skip
            if self.engine.conn.x(insert, row):
                added.append(row[0])
        return tuple(added)

    async def queue_add(self, records: Sequence[Mapping[str, object]]) -> tuple[str, ...]:
        """Queue records; one whose candidate text is pending or was rejected for that scope, or whose flag is
        pending, is skipped. Returns the ids actually queued."""
        return await self._write(lambda: self.add_sync(records))

    async def queue_items(self, *, status: str | None = None, scope: str | None = None) -> list[Record]:
        """Queued records, oldest first (optionally one status or one scope)."""

        def read() -> list[Record]:
            sql, args = "SELECT record FROM capture_queue WHERE 1 = 1", []
            if status is not None:
                sql += " AND status = ?"
                args.append(status)
            if scope is not None:
                sql += " AND scope = ?"
                args.append(scope)
            return [_record(r[0]) for r in self._q(sql + " ORDER BY seq", args)]

        return await self._read(read)

    async def queue_item(self, item_id: str) -> Record | None:
        def read() -> Record | None:
            rows = self._q("SELECT record FROM capture_queue WHERE item_id = ?", (item_id,))
            return _record(rows[0][0]) if rows else None

        return await self._read(read)

    async def queue_decide(self, item_id: str, record: Mapping[str, object]) -> bool:
        """Replace a *pending* item's record with its decided one; False when it is not pending (or absent)."""
        body = json.dumps(dict(record), ensure_ascii=False, sort_keys=True)

        def write() -> bool:
            changed = self.engine.conn.x(
                "UPDATE capture_queue SET status = ?, record = ? WHERE item_id = ? AND status = 'pending'",
                (str(record["status"]), body, item_id),
            )
            return changed > 0

        return await self._write(write)

    # ------------------------------------------------------------------ settings
    def put_setting_sync(self, name: str, value: Mapping[str, object], at: str) -> None:
        self.engine.conn.x(
            self.engine.dialect.upsert(
                "store_settings", ("name", "value", "updated_at"), ("name",), ("value", "updated_at")
            ),
            (name, json.dumps(dict(value), ensure_ascii=False, sort_keys=True), at),
        )

    def setting_sync(self, name: str) -> Record | None:
        rows = self._q("SELECT value FROM store_settings WHERE name = ?", (name,))
        return _record(rows[0][0]) if rows else None

    async def setting(self, name: str) -> Record | None:
        """A named setting's JSON object (``capture``: the capture settings), None when never set."""
        return await self._read(lambda: self.setting_sync(name))

    async def put_setting(self, name: str, value: Mapping[str, object], at: str) -> None:
        await self._write(lambda: self.put_setting_sync(name, value, at))


def _opt(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _record(text: object) -> Record:
    data = json.loads(str(text))
    if not isinstance(data, dict):
        raise InvalidInput("a capture record in the store is not a JSON object", hint="run memstone verify")
    return data


__all__ = ["CaptureRecords", "flag_key", "text_key"]
