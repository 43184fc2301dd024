"""Helpers for the API tests: a started app with its client, and token helpers (imported by conftest and tests)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx2
from starlette.applications import Starlette

from memstone.api.http.access import AppState
from memstone.auth.model import Permission
from memstone.auth.store import PrincipalStore

LOCAL = "http://127.0.0.1:8765"


@dataclass
class Server:
    app: Starlette
    client: httpx2.AsyncClient
    url: str

    @property
    def state(self) -> AppState:
        state = self.app.state.memstone
        assert isinstance(state, AppState)
        return state

    @asynccontextmanager
    async def writable_principals(self) -> AsyncIterator[PrincipalStore]:
        """The principal store opened for writing, as `memstone token …` opens it (the server only reads it)."""
        from memstone.api.http.app import open_principals

        store = await open_principals(self.state.settings.url)
        try:
            yield store
        finally:
            await store.aclose()

    async def token(
        self, user: str, org: str, grants: dict[str, Permission] | None = None, *, label: str | None = None
    ) -> tuple[str, str]:
        """A principal (created if new) with these grants, and a fresh token: (secret, token id)."""
        async with self.writable_principals() as store:
            principal = await store.ensure_principal(user=user, org=org)
            for scope, permission in (grants or {}).items():
                await store.set_grant(principal.principal_id, scope, permission)
            info, secret = await store.issue_token(principal.principal_id, label=label)
        return secret, info.token_id

    async def revoke(self, token_id: str) -> None:
        async with self.writable_principals() as store:
            await store.revoke_token(token_id)

    def as_(self, token: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {token}"}

    async def counts(self) -> tuple[int, int]:
        """(Memories, entry versions) in the store: what 'nothing was written' is checked against."""
        heads = await self.state.service.memories()
        versions = 0
        for h in heads:
            for e in await self.state.service.entries(h, include_inactive=True):
                versions += e.version
        return len(heads), versions


ServerFactory = Callable[..., Awaitable[Server]]


async def seed_token_mode(tmp_path: Path) -> None:
    """Token mode refuses to start without an active token: create one in the file first."""
    from memstone.api.http.app import open_principals

    store = await open_principals(f"sqlite:///{tmp_path / 'm.db'}")
    try:
        principal = await store.ensure_principal(user="root", org="ops")
        await store.issue_token(principal.principal_id, label="bootstrap")
    finally:
        await store.aclose()


@asynccontextmanager
async def started(app: Starlette) -> AsyncIterator[Server]:
    """The app with its lifespan run in a task of its own, and a client on it.

    A mount's task group (the MCP session manager's) must be left by the task that entered it, and a pytest
    fixture's setup and teardown may run in different tasks.
    """
    ready, stop = asyncio.Event(), asyncio.Event()

    async def run() -> None:
        async with app.router.lifespan_context(app):
            ready.set()
            await stop.wait()

    task = asyncio.create_task(run())
    waiting = asyncio.create_task(ready.wait())
    await asyncio.wait({task, waiting}, return_when=asyncio.FIRST_COMPLETED)
    if task.done():
        waiting.cancel()
        task.result()
    try:
        transport = httpx2.ASGITransport(app=app, client=("127.0.0.1", 50000))
        async with httpx2.AsyncClient(transport=transport, base_url=LOCAL) as client:
            yield Server(app=app, client=client, url=LOCAL)
    finally:
        stop.set()
        await task
