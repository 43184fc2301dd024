"""The Memory Explorer in headless Chromium: browse, filter, search, open, walk the revision chain, edit, flag,
relate, remove with confirmation, keyboard use, a phone-sized screen, and hostile Markdown that must stay inert."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect
from web_support import Live, TokenLive, Watch, open_page

SCOPE = "memstone://orgs/acme/projects/web"
WEB = "/memory/explorer/orgs/acme/projects/web/"

RICH = """# Deploying

We deploy with **uv** and *never* by hand; ~~pip~~ is gone. See [the guide](https://example.com/guide).

## Steps

1. Build the wheel
2. Upload it
   - to staging first
   - then production
3. Tag the release

- [x] tests pass
- [ ] changelog written

| Step | Owner | Minutes |
|:-----|:-----:|--------:|
| build | ci | 3 |
| deploy | ops | 5 |

> Deploys on Friday need a second reviewer.

```bash
uv build && uv publish
```

Inline `code`, a line\\
break, and an image: ![logo](/memory/static/icon.svg "memstone")
"""

HOSTILE = """# Hostile body

<script>window.__pwned = 1; alert("script")</script>

<img src=x onerror="window.__pwned = 2; alert('img')">

<a href="javascript:alert('raw')">raw anchor</a> and <iframe src="javascript:alert('frame')"></iframe>

[plain js](javascript:alert('link')) [upper JS](JAVASCRIPT:alert(1)) [tabbed](java\tscript:alert(1))
[data](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==) [vb](vbscript:msgbox(1))
<javascript:alert('auto')> ![img js](javascript:alert('image')) ![img data](data:image/svg+xml,<svg onload=alert(1)>)

[fine link](https://example.com/ok) and [relative](#top) and <mailto:ops@example.com>
"""


def seed(live: Live) -> dict[str, dict[str, Any]]:
    return {
        "fact": live.create(SCOPE, title="Deploy tool", text=RICH, tags=["ops", "ci"], slug="deploy-tool"),
        "lesson": live.create(SCOPE, kind="lesson", title="Flaky tests", text="Retry once, then fix.", important=True),
        "rule": live.create(
            SCOPE, kind="constraint", title="Generated files", text="Never edit site/.", mandatory=True
        ),
        "note": live.create(
            SCOPE, kind="working_note", title="Scratch", text="Deploy notes for the on-call.", tags=["ops"]
        ),
    }


def titles(page: Any) -> list[str]:
    return [t.strip() for t in page.locator("#items .item-title").all_inner_texts()]


def test_browse_filter_search_and_open(live: Live, page: Any) -> None:
    seed(live)
    page.goto(live.url + WEB)
    page.wait_for_selector("#items .item")
    assert titles(page) == ["Generated files", "Flaky tests", "Scratch", "Deploy tool"]  # mandatory, important, newest
    assert "4 memories" in page.inner_text("#summary")

    page.select_option("#f-kind", "lesson")
    expect(page.locator("#items .item")).to_have_count(1)
    assert titles(page) == ["Flaky tests"]
    page.select_option("#f-kind", "")
    page.check("#f-mandatory")
    expect(page.locator("#items .item")).to_have_count(1)
    assert titles(page) == ["Generated files"]
    page.uncheck("#f-mandatory")
    page.fill("#f-tag", "ops")
    page.press("#f-tag", "Enter")
    expect(page.locator("#items .item")).to_have_count(2)
    assert sorted(titles(page)) == ["Deploy tool", "Scratch"]
    page.fill("#f-tag", "")
    page.press("#f-tag", "Enter")

    page.fill("#q", "deploy")
    page.press("#q", "Enter")
    page.wait_for_selector("#summary:has-text('for “deploy”')")
    assert sorted(titles(page)) == ["Deploy tool", "Scratch"]
    page.click("#items a:has-text('Deploy tool')")
    page.wait_for_selector("#detail-title:has-text('Deploy tool')")
    assert "/memory/explorer/orgs/acme/projects/web/ent_" in page.url
    body = page.locator("#body")
    assert body.locator("h1").inner_text() == "Deploying"
    assert body.locator("strong").first.inner_text() == "uv"
    assert body.locator("del").inner_text() == "pip"
    assert body.locator("table th").all_inner_texts() == ["Step", "Owner", "Minutes"]
    assert body.locator("blockquote").count() == 1
    assert body.locator("pre code").inner_text() == "uv build && uv publish"
    assert body.locator("ol > li").count() == 3 and body.locator("ol ul li").count() == 2
    assert body.locator("li.task input[checked]").count() == 1
    assert body.locator("img").get_attribute("src") == "/memory/static/icon.svg"
    guide = body.locator("a:has-text('the guide')")
    assert guide.get_attribute("href") == "https://example.com/guide"
    assert "noopener" in (guide.get_attribute("rel") or "")
    meta = page.inner_text(".meta")
    for label in ("Scope", "Author", "Created", "Updated", "Content hash", SCOPE):
        assert label in meta
    assert page.inner_text("#status") == "current"


def test_an_answer_that_arrives_late_never_replaces_the_newer_search(live: Live, page: Any) -> None:
    # CI once saw the catalogue's answer for a filter change arrive after the search typed next, and overwrite it.
    seed(live)
    page.goto(live.url + WEB)
    page.wait_for_selector("#items .item")
    held: list[Any] = []

    def the_list(url: str) -> bool:  # /api/memories?…, not /api/memories/search?…
        return "/api/memories?" in url

    def hold(route: Any) -> None:
        held.append(route)

    page.route(the_list, hold)
    page.fill("#f-tag", "ops")
    page.press("#f-tag", "Enter")
    expect(page.locator("#summary")).to_have_text("Loading…")
    page.fill("#q", "deploy")
    page.press("#q", "Enter")
    page.wait_for_selector("#summary:has-text('for “deploy”')")
    assert len(held) == 1
    with page.expect_response(lambda r: the_list(r.url)):
        held[0].continue_()
    page.wait_for_timeout(300)  # let the page handle the late answer; a stale one must change nothing
    assert "for “deploy”" in page.inner_text("#summary")
    assert sorted(titles(page)) == ["Deploy tool", "Scratch"]


def test_walk_the_revision_chain_then_edit_and_see_the_new_revision(live: Live, page: Any) -> None:
    rec = live.create(SCOPE, title="Staging host", text="The staging host is alpha.")
    live.patch(rec["entry_id"], 1, text="The staging host is beta.")
    live.patch(rec["entry_id"], 2, text="The staging host is gamma.")
    page.goto(live.url + WEB + rec["entry_id"])
    page.wait_for_selector(".versions-nav .position:has-text('Revision 3 of 3')")
    assert page.locator("#chain li").count() == 3
    page.click("#nav-prev")
    page.wait_for_selector(".position:has-text('Revision 2 of 3')")
    assert page.url.endswith("?v=2")
    assert "beta" in page.inner_text("#body")
    assert page.inner_text("#status") == "superseded"
    assert "superseded by a newer one" in page.inner_text(".banner")
    page.click("#nav-prev")
    page.wait_for_selector(".position:has-text('Revision 1 of 3')")
    assert "alpha" in page.inner_text("#body")
    assert page.locator("#nav-prev").count() == 0
    page.click("#nav-next")
    page.wait_for_selector(".position:has-text('Revision 2 of 3')")
    page.go_back()
    page.wait_for_selector(".position:has-text('Revision 1 of 3')")
    page.click(".banner a")
    page.wait_for_selector(".position:has-text('Revision 3 of 3')")

    page.click("#act-edit")
    page.wait_for_selector("#editor[open]")
    assert page.input_value("#e-text") == "The staging host is gamma."
    page.fill("#e-text", "The staging host is **delta**.")
    page.fill("#e-tags", "infra, staging")
    page.click("#editor-save")
    page.wait_for_selector(".position:has-text('Revision 4 of 4')")
    assert page.locator("#body strong").inner_text() == "delta"
    assert page.locator("#chain li").count() == 4
    assert live.record(rec["entry_id"])["tags"] == ["infra", "staging"]


def test_an_edit_against_a_stale_revision_is_refused_with_a_clear_message(live: Live, page: Any) -> None:
    rec = live.create(SCOPE, title="Port", text="The port is 8000.")
    page.goto(live.url + WEB + rec["entry_id"])
    page.click("#act-edit")
    live.patch(rec["entry_id"], 1, text="The port is 9000.")  # someone else saves first
    page.fill("#e-text", "The port is 7000.")
    page.click("#editor-save")
    page.wait_for_selector("#editor-error:not([hidden])")
    assert "Someone changed this memory first" in page.inner_text("#editor-error")
    assert live.record(rec["entry_id"])["text"] == "The port is 9000."


def test_flag_then_remove_with_confirmation_then_restore(live: Live, page: Any) -> None:
    rec = live.create(SCOPE, title="Linting", text="Run ruff before pushing.")
    page.goto(live.url + WEB + rec["entry_id"])
    page.click("#act-important")
    page.wait_for_selector("#act-important[aria-pressed='true']")
    assert page.locator(".detail-head .badge.important").count() == 1
    page.click("#act-mandatory")
    page.wait_for_selector("#act-mandatory[aria-pressed='true']")
    after = live.record(rec["entry_id"])
    assert after["important"] and after["mandatory"] and after["revision"] == 3

    page.click("#act-remove")
    page.wait_for_selector("#confirm[open]")
    assert "Linting" in page.inner_text("#confirm-title")
    page.click("#confirm button[value='cancel']")
    page.wait_for_selector("#confirm:not([open])", state="hidden")
    assert live.record(rec["entry_id"])["state"] == "active"

    page.click("#act-remove")
    page.click("#confirm-ok")
    page.wait_for_selector("#status:has-text('removed')")
    assert live.record(rec["entry_id"])["state"] == "inactive"
    expect(page.locator("#items .item")).to_have_count(0)
    page.check("#f-all")
    page.wait_for_selector("#items .badge.removed")
    page.click("#act-restore")
    page.wait_for_selector("#status:has-text('current')")
    assert live.record(rec["entry_id"])["state"] == "active"


def test_create_and_relate(live: Live, page: Any) -> None:
    target = live.create(SCOPE, title="Old deploy tool", text="We deployed with pip.")
    page.goto(live.url + WEB)
    page.wait_for_selector("#items .item")
    page.click("#new")
    page.wait_for_selector("#editor[open]")
    page.fill("#e-kind", "decision")
    page.fill("#e-title", "Deploy with uv")
    page.fill("#e-text", "We switched to **uv**.")
    page.check("#e-important")
    page.click("#editor-save")
    page.wait_for_selector("#detail-title:has-text('Deploy with uv')")
    assert page.locator("#items .item").count() == 2
    page.click("#act-relate")
    page.select_option("#r-kind", "supersedes")
    page.fill("#r-target", target["entry_id"])
    page.click("#relate-form button[type='submit']")
    page.wait_for_selector(".relations li")
    assert "supersedes" in page.inner_text(".relations")
    page.click(f".relations a:has-text('{target['entry_id']}')")
    page.wait_for_selector("#detail-title:has-text('Old deploy tool')")


def test_a_hostile_body_renders_inert(live: Live, page: Any, watch: Watch) -> None:
    rec = live.create(SCOPE, title="Hostile", text=HOSTILE)
    page.goto(live.url + WEB + rec["entry_id"])
    page.wait_for_selector("#detail-title:has-text('Hostile')")
    page.wait_for_timeout(300)
    assert watch.dialogs == []
    assert page.evaluate("window.__pwned") is None
    body = page.locator("#body")
    assert body.locator("script, iframe, object, embed").count() == 0
    assert "<script>" in body.inner_text()  # raw HTML is shown as text
    bad = page.evaluate(
        """() => [...document.querySelectorAll('#body *')].flatMap(el =>
             [...el.attributes].filter(a => /^on/i.test(a.name)
               || (/^(href|src)$/i.test(a.name) && !/^(https?:|mailto:|#|\\/)/i.test(a.value)))
             .map(a => el.tagName + ' ' + a.name + '=' + a.value))"""
    )
    assert bad == []
    hrefs = body.locator("a").evaluate_all("els => els.map(e => e.getAttribute('href'))")
    assert hrefs == ["https://example.com/ok", "#top", "mailto:ops@example.com"]
    unsafe = body.locator(".md-unsafe").all_inner_texts()
    assert unsafe == ["plain js", "upper JS", "data", "vb", "javascript:alert('auto')", "[image: img js]"]
    assert not any(re.match(r"(?i)\s*(javascript|data|vbscript):", u) for u in watch.requests)
    assert page.locator("img").evaluate_all("els => els.map(e => e.getAttribute('src'))") == []


EXTERNAL = """Our logo ![logo](/memory/static/icon.svg) and a tracker ![pixel](https://tracker.example/p.png?who=me)
and a protocol-relative one ![cdn](//cdn.example/x.png).
"""


def test_external_images_are_not_fetched_until_clicked(live: Live, page: Any, watch: Watch) -> None:
    rec = live.create(SCOPE, title="Images", text=EXTERNAL)
    response = page.goto(live.url + WEB + rec["entry_id"])
    assert response is not None
    csp = response.headers["content-security-policy"]
    assert "img-src 'self';" in csp and "https:" not in csp
    page.wait_for_selector("#detail-title:has-text('Images')")
    page.wait_for_timeout(300)
    body = page.locator("#body")
    assert body.locator("img").evaluate_all("els => els.map(e => e.getAttribute('src'))") == ["/memory/static/icon.svg"]
    assert not any("tracker.example" in u or "cdn.example" in u for u in watch.requests)
    links = body.locator("a.md-external-image")
    assert links.evaluate_all("els => els.map(e => [e.getAttribute('href'), e.target, e.rel])") == [
        ["https://tracker.example/p.png?who=me", "_blank", "noopener noreferrer nofollow"],
        ["//cdn.example/x.png", "_blank", "noopener noreferrer nofollow"],
    ]
    assert "tracker.example" in links.first.inner_text()
    fetched: list[str] = []
    page.context.on("request", lambda r: fetched.append(r.url))
    page.context.route("https://tracker.example/**", lambda route: route.fulfill(status=204, body=""))
    links.first.click()
    page.wait_for_timeout(1000)
    assert "https://tracker.example/p.png?who=me" in fetched


def test_keyboard_only(live: Live, page: Any) -> None:
    seed(live)
    page.goto(live.url + WEB)
    page.wait_for_selector("#items .item")
    page.keyboard.press("/")
    assert page.evaluate("document.activeElement.id") == "q"
    page.keyboard.type("flaky")
    page.keyboard.press("Enter")
    page.wait_for_selector("#summary:has-text('for “flaky”')")
    page.focus("#items a")
    page.keyboard.press("Enter")
    page.wait_for_selector("#detail-title:has-text('Flaky tests')")
    page.focus("body")
    page.keyboard.press("e")
    page.wait_for_selector("#editor[open]")
    page.keyboard.press("Escape")
    page.wait_for_selector("#editor:not([open])", state="hidden")
    page.keyboard.press("n")
    page.wait_for_selector("#editor[open]")
    assert "New memory" in page.inner_text("#editor-title")
    page.keyboard.press("Escape")


def test_readable_on_a_phone(live: Live, browser: Any, watch: Watch) -> None:
    seed(live)
    phone = open_page(browser, watch, width=390, height=844)
    try:
        phone.goto(live.url + WEB)
        phone.wait_for_selector("#items .item")
        assert phone.is_visible("#catalogue") and not phone.is_visible("#detail")
        phone.click("#items a:has-text('Deploy tool')")
        phone.wait_for_selector("#detail-title:has-text('Deploy tool')")
        assert not phone.is_visible("#catalogue") and phone.is_visible(".back a")
        assert phone.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
        phone.click(".back a")
        phone.wait_for_selector("#catalogue", state="visible")
    finally:
        phone.context.close()
    assert watch.errors == []


def test_the_default_address_opens_the_default_scope(live: Live, page: Any) -> None:
    live.create(None, title="Anonymous note", text="Local only.")
    page.goto(live.url + "/memory/explorer/")
    page.wait_for_selector("#items .item")
    assert page.url.endswith("/memory/explorer/users/anonymous/")
    assert titles(page) == ["Anonymous note"]


def test_screenshots_of_the_main_views(live: Live, browser: Any, watch: Watch, tmp_path: Path) -> None:
    """Laptop and phone views; with MEMSTONE_SCREENSHOTS=<dir> they are kept (docs/img/explorer-*.png)."""
    out = Path(os.environ.get("MEMSTONE_SCREENSHOTS") or tmp_path)
    out.mkdir(parents=True, exist_ok=True)
    made = seed(live)
    eid = made["fact"]["entry_id"]
    live.patch(eid, 1, text=RICH.replace("**uv**", "**uv** (pinned)"), important=True)
    laptop = open_page(browser, watch, width=1366, height=900)
    try:
        laptop.goto(live.url + WEB + eid)
        laptop.wait_for_selector("#detail-title:has-text('Deploy tool')")
        laptop.screenshot(path=str(out / "explorer-detail.png"), full_page=True)
        laptop.click("#nav-prev")
        laptop.wait_for_selector(".banner")
        laptop.screenshot(path=str(out / "explorer-superseded.png"))
        laptop.click(".banner a")
        laptop.wait_for_selector(".position:has-text('Revision 2 of 2')")
        laptop.fill("#q", "deploy")
        laptop.press("#q", "Enter")
        laptop.wait_for_selector("#summary:has-text('for “deploy”')")
        laptop.screenshot(path=str(out / "explorer-search.png"))
        laptop.click("#act-edit")
        laptop.wait_for_selector("#editor[open]")
        laptop.screenshot(path=str(out / "explorer-edit.png"))
        laptop.keyboard.press("Escape")
        laptop.click("#act-remove")
        laptop.wait_for_selector("#confirm[open]")
        laptop.screenshot(path=str(out / "explorer-remove.png"))
        laptop.click("#confirm button[value='cancel']")
    finally:
        laptop.context.close()
    phone = open_page(browser, watch, width=390, height=844)
    try:
        phone.goto(live.url + WEB)
        phone.wait_for_selector("#items .item")
        phone.screenshot(path=str(out / "explorer-phone-catalogue.png"))
        phone.goto(live.url + WEB + eid)
        phone.wait_for_selector("#detail-title")
        phone.screenshot(path=str(out / "explorer-phone-detail.png"))
    finally:
        phone.context.close()
    assert watch.errors == []
    names = {p.name for p in out.glob("explorer-*.png")}
    views = ("detail", "superseded", "search", "edit", "remove", "phone-catalogue", "phone-detail")
    assert {f"explorer-{v}.png" for v in views} <= names, names


@pytest.mark.parametrize(
    ("source", "tag", "text"),
    [
        pytest.param("Setext\n======", "h1", "Setext", id="setext"),
        pytest.param("***", "hr", "", id="rule"),
        pytest.param("    indented code", "pre", "indented code", id="indented-code"),
        pytest.param("a_b_c and _em_", "em", "em", id="intraword-underscore"),
        pytest.param("<b>bold?</b>", "p", "<b>bold?</b>", id="raw-html-is-text"),
        pytest.param("www.example.com/x", "a", "www.example.com/x", id="bare-autolink"),
        pytest.param("&lt;tag&gt; &amp; &#x41;", "p", "<tag> & A", id="entities"),
    ],
)
def test_markdown_details(live: Live, page: Any, source: str, tag: str, text: str) -> None:
    page.goto(live.url + "/memory/explorer/")
    page.wait_for_load_state("networkidle")
    got = page.evaluate(
        """async ([source, tag]) => {
             const { renderMarkdown } = await import('/memory/static/markdown.js');
             const box = document.createElement('div');
             box.append(renderMarkdown(source));
             const el = box.querySelector(tag);
             return el ? el.textContent : null;
           }""",
        [source, tag],
    )
    assert got == text


def test_token_mode_asks_for_a_token_and_then_shows_your_scopes(live_token: TokenLive, page: Any) -> None:
    live = live_token.live
    live.create("memstone://orgs/acme/projects/web", title="Shared lesson", text="Review every deploy.")
    live.create(None, title="My preference", text="Tabs, not spaces.")
    page.goto(live.url + "/memory/explorer/")
    page.wait_for_selector("#login[open]")
    page.fill("#l-token", "mst_wrong")
    page.click("#login-form button[type='submit']")
    page.wait_for_selector("#login[open] #login-error:not([hidden])")
    assert "unknown or revoked" in page.inner_text("#login-error")
    page.fill("#l-token", live_token.token)
    page.click("#login-form button[type='submit']")
    page.wait_for_selector("#items .item")
    assert page.url.endswith("/memory/explorer/users/alice/")
    assert titles(page) == ["My preference"]
    assert "alice · acme" in page.inner_text("#who")
    page.select_option("#scope", "memstone://orgs/acme/projects/web")
    page.wait_for_selector("#items .item-title:has-text('Shared lesson')")
    assert page.url.endswith(WEB)
