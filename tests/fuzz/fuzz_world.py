"""The fuzz tests' world: one store per module, seeded with entries and canaries, and the hypothesis settings.

``FUZZ`` is the settings every fuzz test takes: a fast, reproducible profile for ``scripts/test``
(``FAST_EXAMPLES`` examples per test, derandomized, no example database, no deadline), or a long, random one when
``MEMSTONE_FUZZ_EXAMPLES=N`` is set (N examples per test; see docs/benchmarks.md, "Fuzzing the four front ends").
After every test the store is checked: the canaries (written in a scope the strategies never name) read back
unchanged and ``verify`` finds no damage (``memstone.testing.fuzzing``, the rule ``bench/bench_fuzz.py`` also uses).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Awaitable
from pathlib import Path
from typing import Any, TypeVar

from fuzz_strategies import SCOPES, Known
from hypothesis import HealthCheck, settings

from memstone import EntryInput, MemoryService, open_service
from memstone.domain.ids import MemoryId
from memstone.domain.model import ArtifactRef, Revision
from memstone.testing.fuzzing import damage, plant_canaries

T = TypeVar("T")
FAST_EXAMPLES = 60
LONG_EXAMPLES = int(os.environ.get("MEMSTONE_FUZZ_EXAMPLES", "0") or 0)
FUZZ = settings(
    max_examples=LONG_EXAMPLES or FAST_EXAMPLES,
    derandomize=not LONG_EXAMPLES,
    database=None,
    deadline=None,
    print_blob=True,
    # The world is one store per module on purpose (an example's writes are the next one's state); the checks
    # after each test are one per test, not per example.
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
)


class World:
    """One store, its service, and what the fuzzing wrote (entry and version ids) to draw :class:`Known` from.

    The service (and anything else held open, like the MCP client) lives in a task of one event loop that every
    example runs on, so async contexts enter and exit in the same task."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.url = f"sqlite:///{path / 'fuzz.db'}"
        self.runner = asyncio.Runner()
        self.entries: list[str] = []
        self.versions: list[str] = []
        self.memory_ids: list[str] = []
        self.kept: dict[str, tuple[str, int]] = {}
        self._stops: list[asyncio.Event] = []
        self._holders: list[asyncio.Task[None]] = []
        self.svc: MemoryService = self.hold(open_service(self.url, embedding=None, author="fuzzer"))
        self.run(self._seed())

    def run(self, call: Awaitable[T]) -> T:
        async def wrapped() -> T:
            return await call

        return self.runner.run(wrapped())

    def hold(self, context: contextlib.AbstractAsyncContextManager[T]) -> T:
        """Enter ``context`` in a task of its own that exits it at :meth:`close`; returns what it yields."""
        loop = self.runner.get_loop()
        entered: asyncio.Future[T] = loop.create_future()
        stop = asyncio.Event()

        async def holder() -> None:
            try:
                async with context as value:
                    entered.set_result(value)
                    await stop.wait()
            except BaseException as exc:
                if not entered.done():
                    entered.set_exception(exc)
                raise

        self._stops.append(stop)
        self._holders.append(loop.create_task(holder()))
        return self.run(entered)

    def close(self) -> None:
        for stop, task in zip(reversed(self._stops), reversed(self._holders), strict=True):
            stop.set()
            self.run(task)
        self.runner.close()

    async def _seed(self) -> None:
        self.kept = await plant_canaries(self.svc)
        for n, scope in enumerate(SCOPES * 2):
            item = EntryInput(kind="fact", text=f"Seed fact {n}: we deploy with uv, retry with backoff.")
            self.note(await self.svc.remember(scope=scope, entries=[item]))

    def note(self, rev: Revision | None) -> None:
        """Remember the entries, versions and Memory a successful write made, for later examples to name."""
        if rev is None:
            return
        if rev.memory_id not in self.memory_ids:
            self.memory_ids.append(rev.memory_id)
        for change in rev.changes:
            if change.op == "add":
                self.entries.append(change.entry_id)
            if change.to_entry_version_id and len(self.versions) < 2000:
                self.versions.append(change.to_entry_version_id)

    async def resolve(self, value: Any) -> Any:
        """``value`` with every :class:`Known` replaced by what it names in the store now."""
        if isinstance(value, Known):
            i = value.index
            if value.what == "entry":
                return self.entries[i % len(self.entries)]
            if value.what == "version":
                return self.versions[i % len(self.versions)]
            if value.what == "entry@":
                return f"{self.entries[i % len(self.entries)]}@{1 + i % 3}"
            memory_id = self.memory_ids[i % len(self.memory_ids)]
            if value.what == "memory":
                return memory_id
            if value.what == "stale":
                return ArtifactRef(memory_id=MemoryId(memory_id), revision=1)
            return await self.svc.head(memory_id)
        if type(value) is list:  # not a Deep one: that is hostile input, passed as it is
            return [await self.resolve(v) for v in value]
        if type(value) is tuple:
            return tuple([await self.resolve(v) for v in value])
        if type(value) is dict:
            return {k: await self.resolve(v) for k, v in value.items()}
        return value

    def damage(self) -> list[str]:
        return self.run(damage(self.svc, self.kept))
