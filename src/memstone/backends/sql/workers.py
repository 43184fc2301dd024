"""Where an engine runs the core's synchronous jobs: worker threads off the event loop.

SQLite and OceanBase serve one connection from one thread (``serial``: a job holds the lock while it runs, so a
job run on the caller's thread and the worker's never overlap); PostgreSQL runs a pool of threads, one pooled
connection each.

The hand-off is the least a job needs: the event loop puts the job and an asyncio future on a queue, a worker
runs it and sets the future through ``call_soon_threadsafe``. ``loop.run_in_executor`` on a ThreadPoolExecutor
did the same through a concurrent future (a condition and its lock) wrapped in an asyncio one, with callbacks on
both: ~3.7 % of a PostgreSQL write's client instructions (issue 13). Its rules are kept: threads start as jobs
wait for one, up to ``size``; a job whose caller was cancelled before it started does not run; a job runs to its
end once started; ``shutdown`` lets the queued jobs finish and joins the threads.
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")
_Job = tuple[Callable[..., Any], tuple[object, ...], "asyncio.Future[Any]", asyncio.AbstractEventLoop]


def _settle(future: asyncio.Future[Any], result: object, error: BaseException | None) -> None:
    """On the event loop: the job's outcome, unless its caller stopped waiting."""
    if future.cancelled():
        return
    if error is None:
        future.set_result(result)
    else:
        future.set_exception(error)


class Workers:
    """``size`` worker threads named ``name``; with ``serial``, each job holds :attr:`lock` while it runs."""

    def __init__(self, name: str, *, size: int = 1, serial: bool = True) -> None:
        self.name = name
        self.size = size
        self.lock = threading.Lock()
        self.serial = serial
        self._jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._idle = threading.Semaphore(0)  # a release per worker waiting for a job
        self._threads: list[threading.Thread] = []
        self._starting = threading.Lock()
        self._closed = False

    async def run(self, fn: Callable[..., T], *args: object) -> T:
        if self._closed:
            raise RuntimeError(f"{self.name}: cannot run a job after shutdown")
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        if not self._idle.acquire(blocking=False):
            self._grow()
        self._jobs.put((fn, args, future, loop))
        return await future

    def _grow(self) -> None:
        """One more thread, unless there are ``size`` (a job waits for no idle one)."""
        with self._starting:  # event loops of several threads may share the engine
            if len(self._threads) < self.size:
                name = f"{self.name}_{len(self._threads)}"
                # daemon: a store left open does not keep the interpreter from exiting (``shutdown`` joins them)
                thread = threading.Thread(target=self._work, name=name, daemon=True)
                thread.start()
                self._threads.append(thread)

    def _work(self) -> None:
        while (job := self._jobs.get()) is not None:
            fn, args, future, loop = job
            del job
            if not future.cancelled():  # its caller stopped waiting before it started: it does not run
                result: object = None
                error: BaseException | None = None
                try:
                    if self.serial:
                        with self.lock:
                            result = fn(*args)
                    else:
                        result = fn(*args)
                except BaseException as exc:  # the caller's await raises it, as run_in_executor's did
                    error = exc
                with contextlib.suppress(RuntimeError):  # the event loop is closed: nobody waits for it
                    loop.call_soon_threadsafe(_settle, future, result, error)
                del result, error
            del fn, args, future, loop
            self._idle.release()

    def shutdown(self) -> None:
        """Stop the threads after the last job."""
        self._closed = True
        for _ in self._threads:
            self._jobs.put(None)
        for thread in self._threads:
            if thread is not threading.current_thread():
                thread.join()
        self._threads.clear()


__all__ = ["Workers"]
