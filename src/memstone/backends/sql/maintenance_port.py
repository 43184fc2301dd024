"""How :class:`~memstone.backends.sql.core.StoreCore` answers ``ports.MaintenanceStore`` and ``DaemonHealthStore``:
each method forwards to the store's :class:`~memstone.backends.sql.maintenance.MaintenanceRecords` (built on first
use, so a hook never loads the maintenance types) with the signature that class gives it. The port and
MaintenanceRecords spell each signature; nothing spells it a third time."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, Protocol, TypeVar

if TYPE_CHECKING:
    from .maintenance import MaintenanceRecords

P = ParamSpec("P")
T = TypeVar("T")


class RecordsOwner(Protocol):
    """A store that builds its MaintenanceRecords on first use."""

    @property
    def _maintenance_records(self) -> MaintenanceRecords: ...


def maintenance_method(
    pick: Callable[[MaintenanceRecords], Callable[P, Coroutine[Any, Any, T]]],
) -> Callable[Concatenate[RecordsOwner, P], Coroutine[Any, Any, T]]:
    """A port method that calls the MaintenanceRecords method ``pick`` names (``lambda m: m.save``)."""

    async def call(self: RecordsOwner, /, *args: P.args, **kwargs: P.kwargs) -> T:
        return await pick(self._maintenance_records)(*args, **kwargs)

    return call


__all__ = ["RecordsOwner", "maintenance_method"]
