"""The store bundle: everything a store URL names, opened once.

``open_store(url)`` returns a :class:`StoreBundle`: the memory backend (with its maintenance records), the
principal store (access control), the capture review queue and settings, and the state location (the local folder where
per-machine files live: hook logs and hook session state). Every part except the state location is kept in the
store's own engine, so a part works on every engine that keeps the memory itself; a part an engine does not keep
is refused by name when it is asked for, not when the store opens.

>>> async with await open_store("sqlite:///m.db") as store:      # doctest: +SKIP
...     await store.principals().principals()
[]
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ..closing import AsyncClosing
from .url import StoreURL, state_dir

if TYPE_CHECKING:
    from ..auth.store import PrincipalStore
    from ..capture.store import CaptureStore
    from ..ports import MemoryBackend


class StoreBundle(AsyncClosing):
    """One open store and its parts. Closing the bundle closes the memory backend and every part with it."""

    __slots__ = ("memory", "url")

    def __init__(self, url: StoreURL, memory: MemoryBackend) -> None:
        self.url = url
        self.memory = memory

    @property
    def state(self) -> Path:
        """The local folder of per-machine files (hook logs, hook session state); never created here."""
        return state_dir(self.url)

    def principals(self, *, read_only: bool = False) -> PrincipalStore:
        """The principals, API tokens and grants kept in this store (closing it does not close the bundle).
        ``read_only`` refuses every write (a server only reads principals)."""
        from ..auth.store import principals_of

        return principals_of(self.memory, read_only=read_only)

    @property
    def capture(self) -> CaptureStore:
        """The capture review queue and the store's settings."""
        from ..capture.store import capture_store_of

        return capture_store_of(self.memory)

    async def aclose(self) -> None:
        await self.memory.aclose()


__all__ = ["StoreBundle"]
