"""The HTTP API through its ASGI app (httpx2's ASGITransport), on a real SQLite file in tmp_path."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from api_support import LOCAL, Server, ServerFactory, seed_token_mode

from memstone.api.http import Settings, create_app


@pytest.fixture
async def make_server(tmp_path: Path) -> AsyncIterator[ServerFactory]:
    """Start an app (lifespan included) on ``tmp_path/m.db``; every server started is stopped at the end."""
    stack: list[Any] = []

    async def start(**settings: Any) -> Server:
        options: dict[str, Any] = {"url": f"sqlite:///{tmp_path / 'm.db'}", "embedding": "none", **settings}
        app = create_app(Settings(**options))
        lifespan = app.router.lifespan_context(app)
        await lifespan.__aenter__()
        stack.append(lifespan)
        base = LOCAL if Settings(**options).local else "http://memstone.example"
        client = httpx2.AsyncClient(transport=httpx2.ASGITransport(app=app, client=("127.0.0.1", 50000)), base_url=base)
        stack.append(client)
        return Server(app=app, client=client, url=base)

    yield start
    for item in reversed(stack):
        if isinstance(item, httpx2.AsyncClient):
            await item.aclose()
        else:
            await item.__aexit__(None, None, None)


@pytest.fixture
async def local(make_server: ServerFactory) -> Server:
    """A local-mode server (no token), like the default ``memstone serve``."""
    return await make_server()


@pytest.fixture
async def remote(make_server: ServerFactory, tmp_path: Path) -> Server:
    """A token-mode server, as on a non-loopback address."""
    await seed_token_mode(tmp_path)
    return await make_server(auth="token", host="0.0.0.0")
