"""Where an engine runs the core's synchronous jobs: worker threads off the event loop.

SQLite and OceanBase serve one connection from one thread (``serial``: a job holds the lock while it runs, so a
job run on the caller's thread and the worker's never overlap); PostgreSQL runs a pool of threads, one pooled
connection each.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import TypeVar

T = TypeVar("T")


class Workers:
    """``size`` worker threads named ``name``; with ``serial``, each job holds :attr:`lock` while it runs."""

    def __init__(self, name: str, *, size: int = 1, serial: bool = True) -> None:
        self.executor = ThreadPoolExecutor(max_workers=size, thread_name_prefix=name)
        self.lock = threading.Lock()
        self.serial = serial

    async def run(self, fn: Callable[..., T], *args: object) -> T:
        job = partial(self._locked, fn, *args) if self.serial else partial(fn, *args)
        return await asyncio.get_running_loop().run_in_executor(self.executor, job)

    def _locked(self, fn: Callable[..., T], *args: object) -> T:
        with self.lock:
            return fn(*args)

    def shutdown(self) -> None:
        """Stop the threads after the last job."""
        self.executor.shutdown(wait=True)


__all__ = ["Workers"]
