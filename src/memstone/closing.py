"""An object that closes with ``aclose()`` is its own async context manager: ``async with obj:`` closes it."""

from __future__ import annotations

from abc import ABC, abstractmethod
from types import TracebackType
from typing import Self


class AsyncClosing(ABC):
    """``async with`` gives the object itself and awaits its :meth:`aclose` on the way out, on error too."""

    __slots__ = ()

    @abstractmethod
    async def aclose(self) -> None:
        """Release what the object holds."""

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()


__all__ = ["AsyncClosing"]
