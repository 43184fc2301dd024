"""Whole-transaction jobs on an engine, for the stores that keep their tables beside a store's Memories.

The capture queue, the maintenance records and the principal store each run a job as one read transaction or one
write transaction (taking the isolation contract's locks first) on the engine's executor.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from .engine import Engine, Row

T = TypeVar("T")


class EngineJobs:
    """Jobs over one engine; every write takes ``write_locks`` (and the keys it names) before it runs."""

    write_locks: tuple[str, ...] = ()

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    async def _read(self, fn: Callable[[], T]) -> T:
        def job() -> T:
            with self.engine.read_txn():
                return fn()

        return await self.engine.run(job)

    async def _write(self, fn: Callable[[], T], *locks: str) -> T:
        def job() -> T:
            with self.engine.write_txn():
                for key in (*self.write_locks, *locks):
                    self.engine.lock(key)
                return fn()

        return await self.engine.run(job)

    def _q(self, sql: str, args: Sequence[object] = ()) -> list[Row]:
        rows: list[Row] = self.engine.conn.q(sql, args)
        return rows


__all__ = ["EngineJobs"]
