"""The capture review queue in the Explorer (headless Chromium): open it, accept one item, reject another."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from playwright.sync_api import expect
from web_support import Live, Watch

from memstone import open_service
from memstone.capture import CaptureSettings, QueueItem, ReviewQueue, UserPrompt, capture

SCOPE = "memstone://orgs/acme/projects/web"
WEB = "/memory/explorer/orgs/acme/projects/web/"


def queue_texts(url: str, *texts: str) -> None:
    async def run() -> None:
        settings = CaptureSettings().with_mode(SCOPE, "review")
        async with open_service(url, embedding=None) as svc:
            queue = ReviewQueue.of(svc)  # the queue kept in the store
            for text in texts:
                result = await capture(svc, UserPrompt(text=text), scope=SCOPE, settings=settings, queue=queue)
                assert result.status == "queued"

    # Playwright's sync API runs an event loop in this thread: capture in a thread of its own.
    with ThreadPoolExecutor(max_workers=1) as pool:
        pool.submit(asyncio.run, run()).result()


def queue_items(url: str) -> tuple[QueueItem, ...]:
    async def run() -> tuple[QueueItem, ...]:
        async with open_service(url, embedding=None) as svc:
            return await ReviewQueue.of(svc).items()

    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, run()).result()


def test_accept_and_reject_from_the_explorer(live: Live, page: Any, tmp_path: Path) -> None:
    live.create(SCOPE, kind="fact", text="The web app deploys with uv.")
    url = f"sqlite:///{tmp_path / 'm.db'}"
    queue_texts(url, "Never log card numbers.", "Prefer table-driven tests.")
    page.goto(live.url + WEB)
    page.wait_for_selector("#items .item")
    page.click("#review")
    items = page.locator("#review-items .review-item")
    expect(items).to_have_count(2)
    expect(items.nth(0)).to_contain_text("Never log card numbers.")
    items.nth(0).get_by_role("button", name="Accept").click()
    expect(page.locator("#toast")).to_contain_text("Accepted: ent_")
    expect(items).to_have_count(1)
    expect(page.locator("#items .item")).to_have_count(2)  # the accepted memory is in the catalogue
    items.nth(0).get_by_role("button", name="Reject").click()
    expect(page.locator("#toast")).to_contain_text("Rejected")
    expect(page.locator("#review-items .review-empty")).to_have_text("Nothing waits for review.")
    assert [i.status for i in queue_items(url)] == ["accepted", "rejected"]


def test_queued_text_is_shown_as_text(live: Live, page: Any, tmp_path: Path, watch: Watch) -> None:
    live.create(SCOPE, kind="fact", text="Seed.")
    hostile = 'Never <img src=x onerror="window.__pwned=1;alert(1)"> log <script>window.__pwned=2</script> cards.'
    queue_texts(f"sqlite:///{tmp_path / 'm.db'}", hostile)
    page.goto(live.url + WEB)
    page.wait_for_selector("#items .item")
    page.click("#review")
    item = page.locator("#review-items .review-item")
    expect(item).to_have_count(1)
    expect(item.locator(".review-text")).to_have_text(hostile)
    page.wait_for_timeout(300)
    assert page.locator("#review-items img, #review-items script").count() == 0
    assert page.evaluate("window.__pwned") is None and watch.dialogs == []
