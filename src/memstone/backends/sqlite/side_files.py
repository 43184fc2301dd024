"""An old SQLite store's capture files, moved into the store when it opens (idempotent, nothing lost).

Before the store bundle, capture kept ``<db>.capture.json`` (its settings) and ``<db>.capture-queue.json`` (the
review queue) beside the database file. Opening such a store read-write copies both into the tables of migration 6
in one transaction (queue items by id, skipping ids already there; the settings only when the store has none
yet), then renames each file to ``….imported``, so it is not read again and a person can still look at it. An
interrupted import is finished by the next open; a file that is not valid JSON is left where it is, untouched.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
from pathlib import Path

from ..sql.capture_store import CaptureRecords
from .engine import SQLiteEngine

SETTINGS_NAME = "capture"  # memstone.capture.store.SETTINGS_NAME


def side_files(db: str) -> tuple[Path, Path]:
    """The settings and queue files an old store kept beside ``db``."""
    path = Path(db)
    return path.with_name(path.name + ".capture.json"), path.with_name(path.name + ".capture-queue.json")


def _json_object(path: Path) -> dict[str, object] | None:
    try:
        data = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


async def import_side_files(engine: SQLiteEngine) -> tuple[Path, ...]:
    """Move an old store's capture files in; returns the files imported (and renamed)."""
    if engine.path == ":memory:" or engine.read_only:
        return ()
    settings_file, queue_file = side_files(engine.path)
    settings = _json_object(settings_file) if settings_file.exists() else None
    queue = _json_object(queue_file) if queue_file.exists() else None
    items = queue.get("items") if queue is not None else None
    if settings is None and not isinstance(items, list):
        return ()
    records = CaptureRecords(engine)
    at = _dt.datetime.now(_dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")

    def move_in() -> None:
        with engine.write_txn():
            if isinstance(items, list):
                records.add_sync([i for i in items if isinstance(i, dict) and "item_id" in i], dedupe=False)
            if settings is not None and records.setting_sync(SETTINGS_NAME) is None:
                records.put_setting_sync(SETTINGS_NAME, settings, at)

    await engine.run(move_in)
    moved = []
    for file, data in ((settings_file, settings), (queue_file, items)):
        if data is None:
            continue
        try:
            os.replace(file, file.with_name(file.name + ".imported"))
        except OSError:
            continue  # another process moved it first, or the folder is read-only: the next open retries
        moved.append(file)
    return tuple(moved)


__all__ = ["import_side_files", "side_files"]
