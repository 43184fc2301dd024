"""Where capture keeps its review queue and settings: in the memory store itself, on every engine.

Every SQL engine's backend offers ``capture_store()`` (``backends/sql/capture_store.py``: the ``capture_queue``
and ``store_settings`` tables its migrations create). Capture talks to it through this port, so the queue and the
settings follow the store wherever its URL points (a SQLite file, PostgreSQL, OceanBase); nothing is read from
files beside a database any more (an old store's files are moved in when it opens, ``sqlite/side_files.py``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol, runtime_checkable

from ..domain.errors import CapabilityNotSupportedError

SETTINGS_NAME = "capture"


class CaptureStore(Protocol):
    """The review queue's records and the store's named settings (JSON objects)."""

    async def queue_add(self, records: Sequence[Mapping[str, object]]) -> tuple[str, ...]: ...

    async def queue_items(self, *, status: str | None = None, scope: str | None = None) -> list[dict[str, object]]: ...

    async def queue_item(self, item_id: str) -> dict[str, object] | None: ...

    async def queue_decide(self, item_id: str, record: Mapping[str, object]) -> bool: ...

    async def setting(self, name: str) -> dict[str, object] | None: ...

    async def put_setting(self, name: str, value: Mapping[str, object], at: str) -> None: ...


@runtime_checkable
class CaptureHost(Protocol):
    """A backend that keeps capture's queue and settings (every SQL engine's ``StoreCore``)."""

    def capture_store(self) -> CaptureStore: ...


def capture_store_of(backend: object) -> CaptureStore:
    """The capture store of an open backend; a backend without one is refused by name."""
    if not isinstance(backend, CaptureHost):
        raise CapabilityNotSupportedError(
            "capture_store",
            f"{type(backend).__name__} keeps no capture review queue or settings",
            hint="use a sqlite:, postgresql: or oceanbase: store",
        )
    return backend.capture_store()


__all__ = ["SETTINGS_NAME", "CaptureHost", "CaptureStore", "capture_store_of"]
