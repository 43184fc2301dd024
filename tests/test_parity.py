"""One rule, every surface: the same input through the library, the CLI, HTTP and MCP gives the same outcome
and the same error code (issue 11). Each surface only translates; the rule lives in the service.

Before the policy moved into the service, a GitHub token was refused by MCP only (the library, the CLI and
``POST /api/memories`` stored it for good), and ``memstone remember --revise`` dropped the flags and tags that
HTTP PATCH and MCP ``memory_update`` kept.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import httpx2
import pytest

from mcp import Client
from memstone import EntryInput, MemoryService, open_service
from memstone.agents.settings import AgentSettings
from memstone.api.http.app import create_app
from memstone.api.http.settings import Settings
from memstone.api.mcp.server import build_server
from memstone.domain.errors import MemstoneError
from memstone.domain.model import EntryPatch

SCOPE = "memstone://orgs/acme/projects/web"
GITHUB_TOKEN = "ghp_" + "R4nd0mL00k1ngT0k3nV4lu3Abcdef123456"  # the ghp_ format: 36 characters after the prefix
Outcome = tuple[str, str | None]  # ("ok", None) or ("error", code)


class Surfaces:
    """The four front ends over one store file."""

    def __init__(self, tmp: Path, svc: MemoryService, http: httpx2.AsyncClient) -> None:
        self.url = f"sqlite:///{tmp / 'm.db'}"
        self.svc = svc
        self.http = http
        self.settings = AgentSettings(url=self.url, project_scope=SCOPE, user_scope="memstone://users/alice", home=tmp)

    async def library_remember(self, **fields: Any) -> Outcome:
        try:
            await self.svc.remember(None, entries=[EntryInput(**fields)], scope=SCOPE)
        except MemstoneError as exc:
            return "error", exc.code
        return "ok", None

    def cli(self, *args: str) -> tuple[Outcome, dict[str, Any]]:
        """The real ``memstone`` command in a child process (its own event loop, like a user's shell)."""
        command = [str(Path(sys.executable).parent / "memstone"), "--url", self.url, "--scope", SCOPE]
        result = subprocess.run(
            [*command, "--embedding", "none", *args, "--json"], capture_output=True, text=True, timeout=60, check=False
        )
        data = json.loads(result.stdout or "{}")
        if result.returncode != 0:
            return ("error", data.get("error", {}).get("code")), data
        return ("ok", None), data

    async def http_call(self, method: str, path: str, **kwargs: Any) -> Outcome:
        response = await self.http.request(method, path, **kwargs)
        if response.status_code >= 400:
            return "error", response.json()["error"]["code"]
        return "ok", None

    async def mcp(self, tool: str, args: dict[str, Any]) -> Outcome:
        async with Client(build_server(self.svc, self.settings)) as client:
            result = await client.call_tool(tool, args)
        if result.is_error:
            text = result.content[0].text  # type: ignore[union-attr]
            return "error", text.rsplit("[code: ", 1)[1].rstrip("]") if "[code: " in text else text
        return "ok", None

    async def stored(self) -> int:
        """Entry versions in the store: what "nothing was stored" is checked against."""
        total = 0
        for head in await self.svc.memories():
            total += sum(v.version for v in await self.svc.entries(head, include_inactive=True))
        return total


@pytest.fixture
async def surfaces(tmp_path: Path) -> AsyncIterator[Surfaces]:
    url = f"sqlite:///{tmp_path / 'm.db'}"
    async with open_service(url, embedding=None, surface="api") as svc:
        app = create_app(Settings(url=url, embedding="none"))
        async with app.router.lifespan_context(app):
            transport = httpx2.ASGITransport(app=app, client=("127.0.0.1", 50000))
            async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1:8765") as http:
                yield Surfaces(tmp_path, svc, http)


async def test_a_secret_is_refused_with_the_same_code_everywhere_and_nothing_is_stored(surfaces: Surfaces) -> None:
    text = f"The deploy bot uses {GITHUB_TOKEN} to push."
    outcomes = {
        "library": await surfaces.library_remember(kind="fact", text=text),
        "library-tags": await surfaces.library_remember(kind="fact", text="A fact.", tags=[GITHUB_TOKEN.lower()]),
        "library-title": await surfaces.library_remember(kind="fact", text="A fact.", title=text),
        "cli": surfaces.cli("remember", "--kind", "fact", "--text", text)[0],
        "http": await surfaces.http_call(
            "POST", "/api/memories", params={"scope": SCOPE}, json={"kind": "fact", "text": text}
        ),
        "mcp": await surfaces.mcp("memory_remember", {"text": text, "kind": "fact"}),
        "mcp-title": await surfaces.mcp("memory_remember", {"text": "A fact.", "title": f"token {GITHUB_TOKEN}"}),
        # Issue 12, finding 6: at 08487f5 MCP stored a secret placed in tags.
        "mcp-tags": await surfaces.mcp("memory_remember", {"text": "A fact.", "tags": [GITHUB_TOKEN.lower()]}),
        "http-tags": await surfaces.http_call(
            "POST",
            "/api/memories",
            params={"scope": SCOPE},
            json={"kind": "fact", "text": "A fact.", "tags": [GITHUB_TOKEN.lower()]},
        ),
    }
    assert outcomes == dict.fromkeys(outcomes, ("error", "secret_refused"))
    assert await surfaces.stored() == 0


async def test_a_secret_added_by_an_update_is_refused_everywhere(surfaces: Surfaces) -> None:
    rev = await surfaces.svc.remember(None, entries=[EntryInput(kind="fact", text="We deploy with uv.")], scope=SCOPE)
    assert rev is not None
    entry = rev.changes[0].entry_id
    before = await surfaces.stored()
    outcomes = {
        "library": await _library_update(surfaces, entry, EntryPatch(title=f"key {GITHUB_TOKEN}")),
        "cli": surfaces.cli("remember", "--revise", entry, "--title", f"key {GITHUB_TOKEN}")[0],
        "http": await surfaces.http_call(
            "PATCH", f"/api/memories/{entry}", json={"title": f"key {GITHUB_TOKEN}"}, headers={"If-Match": "*"}
        ),
        "mcp": await surfaces.mcp("memory_update", {"id": entry, "title": f"key {GITHUB_TOKEN}"}),
        # Issue 12, finding 6: at 08487f5 an MCP update that changed only the title or the tags was not scanned.
        "library-tags": await _library_update(surfaces, entry, EntryPatch(tags=["deploy", GITHUB_TOKEN.lower()])),
        "http-tags": await surfaces.http_call(
            "PATCH", f"/api/memories/{entry}", json={"tags": [GITHUB_TOKEN.lower()]}, headers={"If-Match": "*"}
        ),
        "mcp-tags": await surfaces.mcp("memory_update", {"id": entry, "tags": ["deploy", GITHUB_TOKEN.lower()]}),
    }
    assert outcomes == dict.fromkeys(outcomes, ("error", "secret_refused"))
    assert await surfaces.stored() == before


async def _library_update(surfaces: Surfaces, entry: str, patch: EntryPatch, **kw: Any) -> Outcome:
    try:
        await surfaces.svc.update(entry, patch, **kw)
    except MemstoneError as exc:
        return "error", exc.code
    return "ok", None


async def test_a_revise_without_flags_keeps_flags_and_tags_on_every_surface(surfaces: Surfaces) -> None:
    made: dict[str, str] = {}
    for name in ("library", "cli", "http", "mcp"):
        item = EntryInput(kind="constraint", text=f"Never edit site/ ({name}).", tags=["docs"], mandatory=True)
        rev = await surfaces.svc.remember(None, entries=[item], scope=SCOPE)
        assert rev is not None
        made[name] = next(c.entry_id for c in rev.changes if c.op == "add")
    new = "Never edit site/: it is generated by mkdocs."
    revisions: dict[str, Callable[[], Any]] = {
        "library": lambda: _library_update(surfaces, made["library"], EntryPatch(text=new + " (library)")),
        "http": lambda: surfaces.http_call(
            "PATCH", f"/api/memories/{made['http']}", json={"text": new + " (http)"}, headers={"If-Match": "*"}
        ),
        "mcp": lambda: surfaces.mcp("memory_update", {"id": made["mcp"], "text": new + " (mcp)"}),
    }
    for call in revisions.values():
        assert await call() == ("ok", None)
    assert surfaces.cli("remember", "--revise", made["cli"], "--text", new + " (cli)")[0] == ("ok", None)
    for name, entry in made.items():
        now = await surfaces.svc.get(entry)
        assert now.version == 2, name
        assert now.content.text == f"{new} ({name})"
        assert (now.content.mandatory, now.content.tags, now.content.kind) == (True, ("docs",), "constraint"), name


async def test_a_stale_update_is_a_revision_conflict_on_every_surface(surfaces: Surfaces) -> None:
    rev = await surfaces.svc.remember(None, entries=[EntryInput(kind="fact", text="We deploy with uv.")], scope=SCOPE)
    assert rev is not None
    entry = rev.changes[0].entry_id
    await surfaces.svc.update(entry, EntryPatch(text="We deploy with uv 0.9."))  # now at version 2
    before = await surfaces.stored()
    outcomes = {
        "library": await _library_update(surfaces, entry, EntryPatch(text="stale"), expected_version=1),
        "cli": surfaces.cli("remember", "--revise", entry, "--text", "stale", "--expected-version", "1")[0],
        "http": await surfaces.http_call("PATCH", f"/api/memories/{entry}", json={"text": "stale", "revision": 1}),
        "mcp": await surfaces.mcp("memory_update", {"id": entry, "text": "stale", "expected_version": 1}),
    }
    assert outcomes == dict.fromkeys(outcomes, ("error", "revision_conflict"))
    assert await surfaces.stored() == before


@pytest.mark.parametrize(
    ("fields", "code"),
    [
        pytest.param({"kind": "fact", "text": "x" * 8193}, "invalid_input", id="oversize-text"),
        pytest.param({"kind": "not a kind!", "text": "A fact."}, "invalid_input", id="bad-kind"),
    ],
)
async def test_bad_input_is_refused_with_the_same_code_everywhere(
    surfaces: Surfaces, fields: dict[str, str], code: str
) -> None:
    outcomes = {
        "library": await surfaces.library_remember(**fields),
        "cli": surfaces.cli("remember", "--kind", fields["kind"], "--text", fields["text"])[0],
        "http": await surfaces.http_call("POST", "/api/memories", params={"scope": SCOPE}, json=fields),
        "mcp": await surfaces.mcp("memory_remember", fields),
    }
    assert outcomes == dict.fromkeys(outcomes, ("error", code))
    assert await surfaces.stored() == 0


async def test_neighbour_context_is_the_same_opt_in_on_every_surface(surfaces: Surfaces) -> None:
    # The answer shares no word with the question; only neighbour context (issue 15) finds it.
    turns = ["we should book the venue soon", "which weekend suits the lighthouse excursion?", "the second Saturday"]
    head = None
    for text in turns:
        head = await surfaces.svc.remember(
            head, scope=SCOPE if head is None else None, entries=[EntryInput(kind="note", text=text)]
        )
    query = "lighthouse excursion weekend"
    found: dict[str, list[str]] = {}
    for context in (False, True):
        lib = await surfaces.svc.search(query, scopes=[SCOPE], limit=10, context=context)
        found[f"library {context}"] = [h.text for h in lib.hits]
        _, cli = surfaces.cli("search", query, "--limit", "10", *(["--context"] if context else []))
        found[f"cli {context}"] = [h["text"] for h in cli["hits"]]
        params: dict[str, Any] = {"q": query, "scope": SCOPE, "limit": 10, "context": context}
        http = (await surfaces.http.get("/api/memories/search", params=params)).json()
        found[f"http {context}"] = [h["text"] for h in http["hits"]]
        async with Client(build_server(surfaces.svc, surfaces.settings)) as client:
            result = await client.call_tool(
                "memory_search", {"query": query, "scope": "project", "limit": 10, "context": context}
            )
        assert isinstance(result.structured_content, dict)
        found[f"mcp {context}"] = [h["snippet"] for h in result.structured_content["hits"]]
        matched = [h["matched_by"] for h in http["hits"]]
        assert matched == ([["fts"], ["context"], ["context"]] if context else [["fts"]])
    assert {k: v for k, v in found.items() if k.endswith("False")} == {
        f"{s} False": [turns[1]] for s in ("library", "cli", "http", "mcp")
    }
    assert {k: v for k, v in found.items() if k.endswith("True")} == {
        f"{s} True": [turns[1], turns[0], turns[2]] for s in ("library", "cli", "http", "mcp")
    }
