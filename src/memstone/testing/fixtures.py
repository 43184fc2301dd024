"""The fixtures every conformance class shares: a backend factory and the services opened through it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import pytest

from ..backends import open_store
from ..ports import MemoryBackend
from ..service import MemoryService, open_service

BackendFactory = Callable[[str], Awaitable[MemoryBackend]]
"""Opens the backend of a store URL (the memory part of ``open_store``'s bundle by default)."""


async def open_memory(url: str) -> MemoryBackend:
    """The memory backend of the store bundle ``open_store(url)`` opens."""
    return (await open_store(url)).memory


class StoreFixtures:
    """Every in-process open in the suite goes through ``backend_factory`` (subprocess writers use the URL)."""

    _backend_factory: BackendFactory

    @pytest.fixture
    def backend_factory(self) -> BackendFactory:
        """Opens the backend of a store URL (default ``open_store``).

        Override it to run the suite on an engine that ``open_store`` does not build: an out-of-tree engine
        before its entry point is installed, or a variant of an engine under test.
        """
        return open_memory

    @pytest.fixture(autouse=True)
    def _use_backend_factory(self, backend_factory: BackendFactory) -> None:
        self._backend_factory = backend_factory

    @asynccontextmanager
    async def service(self, url: str, **kw: Any) -> AsyncIterator[MemoryService]:
        """A service over the backend the factory opens for ``url``."""
        async with open_service(backend=await self._backend_factory(url), **kw) as svc:
            yield svc
