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
from typing import Any, Self, TypeVar

from .service import MemoryService, open_service

T = TypeVar("T")


class ServiceThread:
    """A service opened on a private event-loop thread, for callers that have no event loop of their own."""

    def __init__(self, url: str | None = None, *, thread_name: str = "memstone-sync", **options: Any) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name=thread_name, daemon=True)
        self._thread.start()
        self._cm = open_service(url, **options)
        self._closed = False
        try:
            self.service: MemoryService = self.run(self._cm.__aenter__())
        except BaseException:
            self._closed = True
            self._stop()
            raise

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` on the loop thread and wait for its result."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result()

    def close(self) -> None:
        """Close the store and stop the loop thread (idempotent)."""
        if self._closed:
            return
        self._closed = True
        try:
            self.run(self._cm.__aexit__(None, None, None))
        finally:
            self._stop()

    def _stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join()
        self.loop.close()


class ServiceFacade:
    """A synchronous front owning a :class:`ServiceThread`: its ``service``, ``close()`` and ``with`` block."""

    def __init__(self, url: str | None = None, *, thread_name: str = "memstone-sync", **options: Any) -> None:
        self._runner = ServiceThread(url, thread_name=thread_name, **options)
        self.service: MemoryService = self._runner.service

    def close(self) -> None:
        """Close the store and stop the loop thread (idempotent)."""
        self._runner.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


class Memstone(ServiceFacade):
    """Every coroutine method of :class:`MemoryService`, callable without ``await``."""

    def _call(self, coro: Coroutine[Any, Any, Any]) -> Any:
        return self._runner.run(coro)

    def __getattr__(self, name: str) -> Callable[..., Any]:
        if name.startswith("_") or name == "service":
            raise AttributeError(name)
        attr = getattr(self.service, name)
        if not asyncio.iscoroutinefunction(attr):
            return attr  # type: ignore[no-any-return]

        @functools.wraps(attr)
        def call(*args: Any, **kwargs: Any) -> Any:
            return self._call(attr(*args, **kwargs))

        return call
