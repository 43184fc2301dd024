"""Helpers for the API tests: a started app with its client, and token helpers (imported by conftest and tests)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

import httpx2
from starlette.applications import Starlette

from memstone.api.http.access import AppState
from memstone.auth.model import Permission

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

    async def token(
        self, user: str, org: str, grants: dict[str, Permission] | None = None, *, label: str | None = None
    ) -> tuple[str, str]:
        """A principal (created if new) with these grants, and a fresh token: (secret, token id)."""
        store = self.state.principals
        principal = await store.ensure_principal(user=user, org=org)
        for scope, permission in (grants or {}).items():
            await store.set_grant(principal.principal_id, scope, permission)
        info, secret = await store.issue_token(principal.principal_id, label=label)
        return secret, info.token_id

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
    from memstone.auth.sqlite import open_principal_store

    store = await open_principal_store(str(tmp_path / "m.db"))
    try:
        principal = await store.ensure_principal(user="root", org="ops")
        await store.issue_token(principal.principal_id, label="bootstrap")
    finally:
        await store.aclose()
