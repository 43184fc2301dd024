"""Helpers for the browser tests: a live server (uvicorn on 127.0.0.1 in a thread), pages that record what they did."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2
import uvicorn

from memstone.api.http import Settings, create_app

CHROMIUM = Path("/usr/bin/chromium")
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@dataclass
class Live:
    url: str
    api: httpx2.Client

    def create(self, scope: str | None = None, **fields: Any) -> dict[str, Any]:
        params = {"scope": scope} if scope else {}
        r = self.api.post("/api/memories", params=params, json={"kind": "fact", **fields})
        assert r.status_code == 201, r.text
        return dict(r.json()["record"])

    def patch(self, entry_id: str, revision: int, **fields: Any) -> dict[str, Any]:
        r = self.api.patch(f"/api/memories/{entry_id}", json={"revision": revision, **fields})
        assert r.status_code == 200, r.text
        return dict(r.json()["record"])

    def record(self, entry_id: str) -> dict[str, Any]:
        return dict(self.api.get(f"/api/memories/{entry_id}").json()["record"])


def serve(settings: Settings, headers: dict[str, str] | None = None) -> Iterator[Live]:
    app = create_app(settings)
    config = uvicorn.Config(app, host="127.0.0.1", port=0, lifespan="on", log_level="warning", ws="none")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name="uvicorn", daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the server did not start")
        time.sleep(0.02)
    port = server.servers[0].sockets[0].getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    try:
        with httpx2.Client(base_url=url, timeout=10, headers=headers or {}) as api:
            yield Live(url=url, api=api)
    finally:
        server.should_exit = True
        thread.join(timeout=20)


@dataclass
class TokenLive:
    live: Live
    token: str


@dataclass
class Watch:
    """What a page did that it must not: script errors, dialogs it opened by itself, console errors."""

    errors: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)
    console: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)


def open_page(browser: Any, watch: Watch, *, width: int = 1280, height: int = 860, **context_options: Any) -> Any:
    """A page in a new context (``locale=``, ``timezone_id=`` … go to Playwright's ``new_context``)."""
    context = browser.new_context(viewport={"width": width, "height": height}, device_scale_factor=1, **context_options)
    page = context.new_page()
    page.set_default_timeout(10_000)
    page.on("pageerror", lambda e: watch.errors.append(str(e)))
    page.on("console", lambda m: watch.console.append(f"{m.type}: {m.text}"))
    page.on("request", lambda r: watch.requests.append(r.url))

    def on_dialog(d: Any) -> None:
        watch.dialogs.append(f"{d.type}: {d.message}")
        d.dismiss()

    page.on("dialog", on_dialog)
    return page
