"""Maintenance proposals in the Explorer (headless Chromium): a dry run proposes, accept writes, reject writes
nothing; a proposal's strings are text."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from playwright.sync_api import expect
from web_support import Live, Watch

SCOPE = "memstone://orgs/acme/projects/web"
WEB = "/memory/explorer/orgs/acme/projects/web/"


def proposals(live: Live, status: str) -> list[dict[str, Any]]:
    r = live.api.get("/api/maintenance/proposals", params={"scope": SCOPE, "status": status})
    assert r.status_code == 200, r.text
    return list(r.json()["proposals"])


def test_a_dry_run_then_accept_from_the_explorer(live: Live, page: Any, watch: Watch, tmp_path: Path) -> None:
    live.create(SCOPE, kind="convention", text="Always run make test before pushing.", important=True)
    live.create(SCOPE, kind="convention", text="Run make test before you push, always.", mandatory=True)
    page.goto(live.url + WEB)
    expect(page.locator("#items .item")).to_have_count(2)
    page.click("#maint")
    expect(page.locator("#maint-items .maint-empty")).to_be_visible()
    page.click("#maint-run")
    expect(page.locator("#toast")).to_contain_text("Dry run completed: 1 proposal")
    item = page.locator("#maint-items .maint-item")
    expect(item).to_have_count(1)
    (p,) = proposals(live, "PROPOSED")
    expect(item.locator(".badge")).to_have_text(p["kind"])
    expect(item.locator(".maint-evidence")).to_have_text(p["evidence"])
    assert item.locator(".maint-entries code").all_inner_texts() == p["entries"]
    out = Path(os.environ.get("MEMSTONE_SCREENSHOTS") or tmp_path)  # docs/img/explorer-maintenance.png
    out.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(out / "explorer-maintenance.png"))
    item.get_by_role("button", name="Accept").click()
    expect(page.locator("#toast")).to_contain_text("Applied")
    expect(page.locator("#maint-items .maint-empty")).to_be_visible()
    expect(page.locator("#items .item")).to_have_count(1)  # the duplicate is gone from the catalogue
    assert [x["proposal_id"] for x in proposals(live, "APPLIED")] == [p["proposal_id"]]
    assert watch.dialogs == []


def test_reject_writes_nothing_and_hostile_text_stays_text(live: Live, page: Any, watch: Watch) -> None:
    hostile = 'Always <img src=x onerror="window.__pwned=1"> run make test before pushing.'
    live.create(SCOPE, kind="convention", text=hostile, important=True)
    live.create(SCOPE, kind="convention", text=hostile.replace("Always", "Always,"), mandatory=True)
    before = live.api.get("/api/memories/revisions/head", params={"scope": SCOPE}).json()["revision"]
    page.goto(live.url + WEB)
    page.click("#maint")
    page.click("#maint-run")
    item = page.locator("#maint-items .maint-item")
    expect(item).to_have_count(1)
    item.get_by_role("button", name="Reject").click()
    expect(page.locator("#toast")).to_contain_text("Rejected")
    expect(page.locator("#maint-items .maint-empty")).to_be_visible()
    assert len(proposals(live, "REJECTED")) == 1
    after = live.api.get("/api/memories/revisions/head", params={"scope": SCOPE}).json()["revision"]
    assert after == before
    assert page.locator("#maint-dialog img").count() == 0
    assert page.evaluate("window.__pwned") is None and watch.dialogs == []


def test_an_accepted_stale_proposal_shows_stale_in_the_catalogue_and_the_detail(live: Live, page: Any) -> None:
    target = live.create(SCOPE, kind="decision", text="We deploy with uv on Fridays.")
    summary = live.create(
        SCOPE,
        kind="fact",
        text="Summary: deployment uses uv, once a week.",
        relations=[{"kind": "summarizes", "target": target["entry_id"]}],
    )
    live.patch(target["entry_id"], 1, text="We deploy with uv on Tuesdays and Thursdays.")
    page.goto(live.url + WEB)
    expect(page.locator("#items .item")).to_have_count(2)
    expect(page.locator("#items .badge.stale")).to_have_count(0)
    page.click("#maint")
    page.click("#maint-run")
    item = page.locator("#maint-items .maint-item")
    expect(item).to_have_count(1)
    expect(item.locator(".badge")).to_have_text("stale")
    item.get_by_role("button", name="Accept").click()
    expect(page.locator("#toast")).to_contain_text("Applied")
    row = page.locator("#items .item", has_text="Summary: deployment")
    expect(row.locator(".badge.stale")).to_have_text("stale")
    expect(page.locator("#items .badge.stale")).to_have_count(1)
    assert live.record(summary["entry_id"])["stale"] is True
    page.goto(live.url + WEB + summary["entry_id"])
    expect(page.locator(".detail-head .badge.stale")).to_be_visible()
