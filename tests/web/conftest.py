"""Browser tests: headless Chromium from Debian (/usr/bin/chromium) driven by Playwright, against the app served by
uvicorn on 127.0.0.1 in a background thread (what ``memstone serve`` runs), on a real SQLite file in tmp_path.

Playwright never downloads a browser here: it launches the system Chromium by path. Without it the tests skip
locally and fail in CI (``CI=true``), where ``apt-get install -y chromium`` must have run.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from web_support import ARGS, CHROMIUM, Live, TokenLive, Watch, open_page, serve

from memstone.api.http import Settings
from memstone.api.http.app import open_principals


@pytest.fixture
def live(tmp_path: Path) -> Iterator[Live]:
    """A local-mode server, like the default ``memstone serve``."""
    yield from serve(Settings(url=f"sqlite:///{tmp_path / 'm.db'}", embedding="none", port=0))


@pytest.fixture
def live_token(tmp_path: Path) -> Iterator[TokenLive]:
    """A token-mode server on 127.0.0.1 (``memstone serve --auth token``) with alice's token (write on acme/*)."""
    url = f"sqlite:///{tmp_path / 'm.db'}"

    async def issue() -> str:
        store = await open_principals(f"sqlite:///{tmp_path / 'm.db'}")
        try:
            principal = await store.ensure_principal(user="alice", org="acme")
            await store.set_grant(principal.principal_id, "*", "write")
            return (await store.issue_token(principal.principal_id, label="browser"))[1]
        finally:
            await store.aclose()

    # Playwright's sync API keeps an event loop running in this thread: run the store's coroutine in another.
    found: list[str] = []
    worker = threading.Thread(target=lambda: found.append(asyncio.run(issue())))
    worker.start()
    worker.join()
    token = found[0]
    settings = Settings(url=url, embedding="none", port=0, auth="token")
    for live in serve(settings, {"Authorization": f"Bearer {token}"}):
        yield TokenLive(live=live, token=token)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    # Module scope, not session: Playwright's sync API keeps an event loop running in this thread while it is
    # started, and tests after this module (asyncio.run in the CLI, pytest-asyncio) need the thread back.
    if not CHROMIUM.exists():
        if os.environ.get("CI"):
            pytest.fail("Chromium is missing: CI must run `apt-get install -y chromium` (see scripts/setup)")
        pytest.skip("no /usr/bin/chromium (apt-get install -y chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS, headless=True)
        yield b
        b.close()


@pytest.fixture
def watch() -> Watch:
    return Watch()


@pytest.fixture
def page(browser: Any, watch: Watch) -> Iterator[Any]:
    p = open_page(browser, watch)
    yield p
    p.context.close()
    assert watch.errors == [], watch.errors
