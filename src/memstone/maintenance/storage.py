"""The engine's own storage upkeep, as a daemon step: a backend that offers a due-time gate (``storage_due``) and
its work (``maintain_storage``), as the LanceDB engine does (docs/engines/lancedb.md, "Maintenance"), has it
run when due. Engines without one (SQLite, PostgreSQL, OceanBase) need nothing here."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol, runtime_checkable


@runtime_checkable
class StorageUpkeep(Protocol):
    async def storage_due(self) -> bool: ...

    async def maintain_storage(self) -> Mapping[str, int]: ...


def storage_upkeep(backend: object) -> StorageUpkeep | None:
    """The backend's storage upkeep, or None when its engine has none."""
    return backend if isinstance(backend, StorageUpkeep) else None


async def check_storage(upkeep: StorageUpkeep) -> str:
    """One check of the gate: run the upkeep when it is due, and say what it did."""
    if not await upkeep.storage_due():
        return "storage: nothing due"
    done = await upkeep.maintain_storage()
    return "storage: " + ", ".join(f"{k} {v}" for k, v in done.items())


__all__ = ["StorageUpkeep", "check_storage", "storage_upkeep"]
