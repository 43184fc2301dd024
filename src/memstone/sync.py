"""A small synchronous facade for scripts: the same service, driven from a private event-loop thread.

>>> from memstone.sync import Memstone          # doctest: +SKIP
>>> with Memstone("sqlite:///memories.db") as m:
...     rev = m.remember(None, entries=[EntryInput(kind="fact", text="We deploy with uv.")])
...     hits = m.search("deploy", memories=[rev])
"""

from __future__ import annotations

import asyncio
import functools
import threading
from collections.abc import Callable, Coroutine
from types import TracebackType
from typing import Any

from .service import MemoryService, open_service


class Memstone:
    """Every coroutine method of :class:`MemoryService`, callable without ``await``."""

    def __init__(self, url: str | None = None, **options: Any) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="memstone-sync", daemon=True)
        self._thread.start()
        self._cm = open_service(url, **options)
        self.service: MemoryService = self._call(self._cm.__aenter__())
        self._closed = False

    def _call(self, coro: Coroutine[Any, Any, Any]) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result()

    def __getattr__(self, name: str) -> Callable[..., Any]:
        attr = getattr(self.service, name)
        if not asyncio.iscoroutinefunction(attr):
            return attr  # type: ignore[no-any-return]

        @functools.wraps(attr)
        def call(*args: Any, **kwargs: Any) -> Any:
            return self._call(attr(*args, **kwargs))

        return call

    def close(self) -> None:
        """Close the store and stop the loop thread (idempotent)."""
        if self._closed:
            return
        self._closed = True
        try:
            self._call(self._cm.__aexit__(None, None, None))
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join()
            self._loop.close()

    def __enter__(self) -> Memstone:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
