"""The Explorer's history views in headless Chromium: the reason and author of every version, a diff between any
two versions, dates in the reader's locale, whole titles, meaningful scores, and a token prompt with no error
before a token was typed. Every string from a memory or a user is rendered as text."""

from __future__ import annotations

import datetime as dt
import os
import re
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from playwright.sync_api import expect
from web_support import Live, TokenLive, Watch, open_page

SCOPE = "memstone://orgs/acme/projects/web"
WEB = "/memory/explorer/orgs/acme/projects/web/"


def history(live: Live, entry_id: str) -> list[dict[str, Any]]:
    r = live.api.get(f"/api/memories/{entry_id}/versions")
    assert r.status_code == 200, r.text
    return list(r.json()["items"])


def flag(live: Live, entry_id: str, **flags: bool) -> None:
    r = live.api.post(f"/api/memories/{entry_id}/flag", json=flags)
    assert r.status_code == 200, r.text


def four_versions(live: Live) -> str:
    """v1 created; v2 a text edit with a reason; v3 a flag; v4 a tag added (the default reason)."""
    rec = live.create(SCOPE, title="Staging (eu-west)", text="Deploy with uv.\nStaging is alpha.", tags=["ops"])
    eid = rec["entry_id"]
    live.patch(eid, 1, text="Deploy with uv.\nStaging is beta.", reason="the host moved")
    flag(live, eid, important=True)
    live.patch(eid, 3, tags=["ops", "ci"])
    return str(eid)


def test_the_chain_shows_each_versions_reason_and_author(live: Live, page: Any) -> None:
    eid = four_versions(live)
    chain = history(live, eid)
    page.goto(live.url + WEB + eid)
    rows = page.locator("#chain li")
    expect(rows).to_have_count(4)
    assert rows.locator(".reason").all_inner_texts() == ["first version", "the host moved", "flag", "update"]
    authors = rows.locator(".author").all_inner_texts()
    assert authors == [v["author"] or "no author" for v in chain]
    assert rows.locator(".surface").all_inner_texts() == [f" via {v['surface']}" for v in chain]
    assert page.inner_text(".meta dt:has-text('Reason') + dd") == "update"
    page.click("#chain li[data-version='2'] a >> nth=0")
    page.wait_for_selector(".position:has-text('Revision 2 of 4')")
    assert page.inner_text(".meta dt:has-text('Reason') + dd") == "the host moved"


def test_compare_any_two_versions(live: Live, page: Any) -> None:
    eid = four_versions(live)
    page.goto(live.url + WEB + eid)
    page.wait_for_selector(".position:has-text('Revision 4 of 4')")
    page.click("#nav-diff")  # what the current version changed
    page.wait_for_selector("#compare h2:has-text('Changes from v3 to v4')")
    assert page.url.endswith(f"{eid}?from=3&to=4")
    fields = page.locator("#compare-fields tbody tr")
    assert fields.evaluate_all("rows => rows.map(r => r.dataset.field)") == ["tags"]
    assert page.locator("#compare-fields td.new ins").all_inner_texts() == ["ci"]
    assert page.locator("#text-diff").count() == 0  # the body did not change
    assert "update" in page.inner_text("#compare-to") and "flag" in page.inner_text("#compare-from")

    page.select_option("#cmp-from", "1")
    page.select_option("#cmp-to", "4")
    page.click("#cmp-go")
    page.wait_for_selector("#compare h2:has-text('Changes from v1 to v4')")
    assert page.url.endswith(f"{eid}?from=1&to=4")
    assert fields.evaluate_all("rows => rows.map(r => r.dataset.field)") == ["tags", "important"]
    important = page.locator("#compare-fields tr[data-field='important'] td").all_inner_texts()
    assert important == ["no", "yes"]
    assert page.locator("#text-diff del.line").all_inner_texts() == ["-Staging is alpha."]
    assert page.locator("#text-diff ins.line").all_inner_texts() == ["+Staging is beta."]
    assert page.locator("#text-diff .line.same").all_inner_texts() == [" Deploy with uv."]
    assert "first version" in page.inner_text("#compare-from")

    page.select_option("#cmp-from", "4")  # backwards works too
    page.select_option("#cmp-to", "2")
    page.click("#cmp-go")
    page.wait_for_selector("#compare h2:has-text('Changes from v4 to v2')")
    assert page.locator("#compare-fields td.old del").all_inner_texts() == ["ci"]
    page.select_option("#cmp-from", "2")
    page.click("#cmp-go")
    page.wait_for_selector("#compare-identical")
    page.go_back()
    page.wait_for_selector("#compare h2:has-text('Changes from v4 to v2')")
    page.click("#compare-close")
    page.wait_for_selector(".position:has-text('Revision 4 of 4')")
    page.click("#chain li[data-version='2'] .diff-link")
    page.wait_for_selector("#compare h2:has-text('Changes from v1 to v2')")
    page.focus("body")
    page.keyboard.press("Escape")


def test_a_comparison_with_a_version_that_does_not_exist_says_so(live: Live, page: Any) -> None:
    eid = four_versions(live)
    page.goto(live.url + WEB + eid + "?from=9&to=1")
    expect(page.locator("#detail h1")).to_have_text("Not found")
    expect(page.locator("#detail")).to_contain_text(f"entry {eid} has no version 9")
    page.click("#detail a:has-text('Back to the catalogue')")
    page.wait_for_selector("#detail .empty")


def test_the_d_key_opens_the_changes_of_the_version_shown(live: Live, page: Any) -> None:
    eid = four_versions(live)
    page.goto(live.url + WEB + eid + "?v=2")
    page.wait_for_selector(".position:has-text('Revision 2 of 4')")
    page.focus("body")
    page.keyboard.press("d")
    page.wait_for_selector("#compare h2:has-text('Changes from v1 to v2')")


def test_a_comparison_fits_a_phone(live: Live, browser: Any, watch: Watch) -> None:
    rec = live.create(SCOPE, title="Wide", text="short", tags=["ops"])
    wide = "a-very-long-unbroken-token-" * 12
    live.patch(rec["entry_id"], 1, text=f"short\n{wide}", tags=["ops", "x" * 60], reason=wide)
    phone = open_page(browser, watch, width=390, height=844)
    try:
        phone.goto(live.url + WEB + rec["entry_id"] + "?from=1&to=2")
        phone.wait_for_selector("#compare #text-diff")
        assert phone.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
        assert phone.evaluate("document.querySelector('#compare').scrollWidth <= window.innerWidth")
    finally:
        phone.context.close()
    assert watch.errors == []


def test_an_edit_in_the_explorer_records_its_reason(live: Live, page: Any) -> None:
    rec = live.create(SCOPE, title="Port", text="The port is 8000.")
    page.goto(live.url + WEB + rec["entry_id"])
    page.click("#act-edit")
    page.fill("#e-text", "The port is 9000.")
    page.fill("#e-reason", "the proxy took 8000")
    page.click("#editor-save")
    page.wait_for_selector(".position:has-text('Revision 2 of 2')")
    assert [v["reason"] for v in history(live, rec["entry_id"])] == [None, "the proxy took 8000"]
    assert page.locator("#chain li .reason").last.inner_text() == "the proxy took 8000"
    page.click("#act-edit")
    assert page.input_value("#e-reason") == ""  # a reason belongs to one edit
    page.keyboard.press("Escape")


def utc(iso: str) -> dt.datetime:
    return dt.datetime.fromisoformat(iso.replace("Z", "+00:00"))


def test_dates_are_in_the_readers_locale_and_time_zone(live: Live, browser: Any, watch: Watch) -> None:
    rec = live.create(SCOPE, title="Dates", text="When was this written?")
    at = utc(rec["created_at"])
    berlin = at.astimezone(ZoneInfo("Europe/Berlin"))
    new_york = at.astimezone(ZoneInfo("America/New_York"))
    hour = new_york.hour % 12 or 12
    expected = {
        ("de-DE", "Europe/Berlin"): f"{berlin:%d.%m.%Y}, {berlin:%H:%M}",
        ("en-US", "America/New_York"): f"{new_york:%b} {new_york.day}, {new_york.year}, {hour}:{new_york:%M} "
        f"{'AM' if new_york.hour < 12 else 'PM'}",
    }
    for (locale, zone), want in expected.items():
        page = open_page(browser, watch, locale=locale, timezone_id=zone)
        try:
            page.goto(live.url + WEB + rec["entry_id"])
            created = page.locator(".meta dt:has-text('Created') + dd time")
            shown = re.sub(r"\s", " ", created.inner_text())  # ICU puts a narrow no-break space before PM
            assert shown == want, (locale, shown)
            assert created.get_attribute("datetime") == rec["created_at"]
            assert re.sub(r"\s", " ", page.locator("#chain time").first.inner_text()) == want
        finally:
            page.context.close()
    assert watch.errors == []


def test_titles_keep_their_parentheses_and_are_never_cut(live: Live, page: Any) -> None:
    long_line = "Keep the deploy notes (all of them) " + "and every word after them " * 8 + "to the end."
    live.create(
        SCOPE, text="## Deploy (staging) with `uv` and [the guide](https://example.com/g) — **snake_case_name**"
    )
    live.create(SCOPE, text=long_line + "\n\nMore text.")
    live.create(SCOPE, title="Retry (once), then fix [flaky] tests", text="Body.")
    page.goto(live.url + WEB)
    page.wait_for_selector("#items .item")
    got = sorted(t.strip() for t in page.locator("#items .item-title").all_inner_texts())
    assert got == sorted(
        [
            "Deploy (staging) with uv and the guide — snake_case_name",
            long_line.strip(),
            "Retry (once), then fix [flaky] tests",
        ]
    )
    page.click("#items a:has-text('Deploy (staging)')")
    expect(page.locator("#detail-title")).to_have_text("Deploy (staging) with uv and the guide — snake_case_name")


def test_search_scores_say_what_they_mean(live: Live, page: Any) -> None:
    live.create(SCOPE, title="Deploy tool", text="We deploy with uv, and deploy often.")
    live.create(SCOPE, title="Scratch", text="Deploy notes for the on-call and the release checklist.")
    found = live.api.get("/api/memories/search", params={"q": "deploy uv", "scope": SCOPE, "mode": "fts"}).json()
    want = {h["title"]: round(h["score"] * 100) for h in found["hits"]}
    parts = {h["title"]: f"full-text {h['contributions']['lexical']:.2f}" for h in found["hits"]}
    assert len(want) == 2
    assert all(0 <= h["score"] <= 1 for h in found["hits"])
    page.goto(live.url + WEB)
    page.wait_for_selector("#items .item")
    page.select_option("#mode", "fts")
    page.fill("#q", "deploy uv")
    page.press("#q", "Enter")
    page.wait_for_selector("#summary:has-text('for “deploy uv”')")
    shown = {}
    for item in page.locator("#items .item").all():
        score = item.locator(".score")
        name = item.locator(".item-title").inner_text()
        shown[name] = score.inner_text()
        title = score.get_attribute("title") or ""
        assert title == f"Relevance {want[name]} % (1 is a perfect match), matched by full-text: {parts[name]}"
        assert score.locator("meter").count() == 1
    assert shown == {t: f"{pct} %" for t, pct in want.items()}


def test_token_mode_shows_no_error_before_a_token_is_typed(
    live_token: TokenLive, page: Any, watch: Watch, tmp_path: Path
) -> None:
    live = live_token.live
    page.goto(live.url + "/memory/explorer/")
    page.wait_for_selector("#login[open]")
    page.wait_for_timeout(300)  # let every first request come back
    page.screenshot(path=str(screenshots(tmp_path) / "explorer-sign-in.png"))
    assert page.locator("#login-error").is_hidden()
    assert page.inner_text("#login-error") == ""
    assert "show" not in (page.get_attribute("#toast", "class") or "")
    assert page.inner_text("#summary") == ""
    assert page.locator("[role=alert]:visible").count() == 0
    page.fill("#l-token", "mst_wrong")
    page.click("#login-form button[type='submit']")
    page.wait_for_selector("#login[open] #login-error:not([hidden])")  # a token that fails does say so
    assert "unknown or revoked" in page.inner_text("#login-error")
    page.fill("#l-token", live_token.token)
    page.click("#login-form button[type='submit']")
    page.wait_for_selector("#login", state="hidden")
    expect(page.locator("#who")).to_contain_text("alice")


HOSTILE = '<img src=x onerror="window.__pwned=1;alert(1)"><script>window.__pwned=2</script>'


def test_reasons_titles_and_diffs_are_text_not_markup(live: Live, page: Any, watch: Watch) -> None:
    rec = live.create(SCOPE, title=f"T {HOSTILE}", text=f"one {HOSTILE}")
    eid = rec["entry_id"]
    live.patch(eid, 1, text=f"two {HOSTILE}\n<svg onload=alert(3)>", reason=f"why {HOSTILE}")
    page.goto(live.url + WEB + eid + "?from=1&to=2")
    page.wait_for_selector("#compare")
    page.wait_for_timeout(300)
    assert watch.dialogs == [] and page.evaluate("window.__pwned") is None
    assert page.locator("#detail img, #detail script, #detail svg").count() == 0
    assert page.locator("#text-diff ins.line").all_inner_texts() == [f"+two {HOSTILE}", "+<svg onload=alert(3)>"]
    assert f"why {HOSTILE}" in page.inner_text("#compare-to")
    assert page.inner_text("#detail-title") == f"T {HOSTILE}"
    page.click("#compare-close")
    page.wait_for_selector("#chain")
    assert page.locator("#chain li .reason").last.inner_text() == f"why {HOSTILE}"
    assert page.locator("#items .item-title").first.inner_text() == f"T {HOSTILE}"
    assert page.locator("img, script:not([src]), svg").count() == 0
    assert page.evaluate("window.__pwned") is None and watch.dialogs == []


def screenshots(tmp_path: Path) -> Path:
    out = Path(os.environ.get("MEMSTONE_SCREENSHOTS") or tmp_path)
    out.mkdir(parents=True, exist_ok=True)
    return out


def test_screenshots_of_the_history_views(live_token: TokenLive, browser: Any, watch: Watch, tmp_path: Path) -> None:
    """The chain with reasons and a comparison, signed in as alice; kept with MEMSTONE_SCREENSHOTS=<dir>
    (docs/img/explorer-*.png)."""
    out = screenshots(tmp_path)
    live = live_token.live
    eid = four_versions(live)
    laptop = open_page(browser, watch, width=1366, height=900, locale="en-GB", timezone_id="Europe/London")
    try:
        laptop.goto(live.url + WEB + eid)
        laptop.fill("#l-token", live_token.token)
        laptop.click("#login-form button[type='submit']")
        expect(laptop.locator("#chain li .author").first).to_have_text("alice")
        laptop.wait_for_selector("#chain li")
        laptop.locator(".chain").scroll_into_view_if_needed()
        laptop.screenshot(path=str(out / "explorer-chain.png"))
        laptop.goto(live.url + WEB + eid + "?from=1&to=4")
        laptop.wait_for_selector("#compare")
        laptop.screenshot(path=str(out / "explorer-compare.png"))
    finally:
        laptop.context.close()
    assert watch.errors == []
    assert {"explorer-chain.png", "explorer-compare.png"} <= {p.name for p in out.iterdir()}


def test_a_purged_version_shows_when_by_whom_and_why_it_was_purged(live: Live, page: Any) -> None:
    rec = live.create(SCOPE, title="Vendor", text="Vendor Qzxwvmu holds the keys.")
    eid = rec["entry_id"]
    live.patch(eid, 1, text="The vendor's name was removed.")
    purged = live.api.post(f"/api/memories/{eid}/purge", json={"reason": "vendor secret", "versions": [1]})
    assert purged.status_code == 200, purged.text
    page.goto(live.url + WEB + eid)
    page.wait_for_selector(".position:has-text('Revision 2 of 2')")
    assert page.locator("#purged-note").count() == 0  # the current version was not purged
    page.click("#chain li[data-version='1'] a >> nth=0")
    page.wait_for_selector(".position:has-text('Revision 1 of 2')")
    note = page.inner_text("#purged-note")
    assert "purged" in note and "vendor secret" in note
    assert "Qzxwvmu" not in page.content()
