"""Tool behaviour through the SDK's in-process client: real service, real SQLite file, no mocks."""

from __future__ import annotations

from typing import Any

import pytest
from mcp.server.mcpserver import MCPServer
from mcp.types import TextContent
from mcp_helpers import PROJECT, USER

from mcp import Client
from memstone import MemoryService
from memstone.agents.settings import AgentSettings
from memstone.api.http.schemas import VersionOut
from memstone.api.mcp.server import INSTRUCTIONS, build_server


@pytest.fixture
def server(service: MemoryService, settings: AgentSettings) -> MCPServer:
    """The server over the seeded store. Tests enter ``Client(server)`` themselves: anyio cancel scopes must be
    entered and left in one task, and async fixtures run setup and teardown in different ones."""
    return build_server(service, settings)


async def call(client: Client, tool: str, **args: Any) -> dict[str, Any]:
    result = await client.call_tool(tool, args)
    assert result.is_error is False, result.content
    assert isinstance(result.structured_content, dict)
    return result.structured_content


async def error(client: Client, tool: str, **args: Any) -> str:
    result = await client.call_tool(tool, args)
    assert result.is_error is True
    assert isinstance(result.content[0], TextContent)
    return result.content[0].text


def test_the_instructions_teach_the_acquisition_rules_in_under_2_kb() -> None:
    assert len(INSTRUCTIONS.encode("utf-8")) < 2048
    for phrase in ("memory_mandatory", "exclude_mandatory=true", "Never capture", "secrets", "speculation",
                   "project by default", "scope=user", "memory_update", "instead of adding a duplicate"):  # fmt: skip
        assert phrase in INSTRUCTIONS, phrase
    assert "SYSTEM" not in INSTRUCTIONS and "you must" not in INSTRUCTIONS.lower()


async def test_remember_writes_to_the_project_by_default_and_lists_similar_memories(server: MCPServer) -> None:
    async with Client(server) as client:
        text = "We deploy with uv and GitHub Actions on every tag."
        out = await call(client, "memory_remember", text=text, kind="decision")
        assert out["status"] == "created"
        assert out["revisions"][0]["scope"] == PROJECT
        assert [s["kind"] for s in out["similar"]] == ["decision"]
        assert "memory_update" in out["note"]


async def test_an_exact_duplicate_writes_nothing_and_names_the_existing_memory(
    server: MCPServer, seeded: dict[str, str]
) -> None:
    async with Client(server) as client:
        out = await call(client, "memory_remember", text="The login timeout is 30 seconds (auth/settings.py).")
        assert out["status"] == "unchanged"
        assert out["entries"][0]["id"] == seeded["timeout"]


async def test_a_duplicate_no_search_can_find_is_still_named(server: MCPServer) -> None:
    # The service names the live entry a no-op matched (issue 11); a text of stopwords only is never searched.
    async with Client(server) as client:
        first = await call(client, "memory_remember", text="It is what it is.")
        again = await call(client, "memory_remember", text="It is what it is.")
        assert again["status"] == "unchanged"
        assert [e["id"] for e in again["entries"]] == [first["entries"][0]["id"]]


async def test_user_scope_is_explicit(server: MCPServer) -> None:
    async with Client(server) as client:
        text = "Alice reads diffs in split view."
        out = await call(client, "memory_remember", text=text, kind="preference", scope="user")
        assert out["revisions"][0]["scope"] == USER


async def test_a_secret_is_refused_and_nothing_is_stored(server: MCPServer, service: MemoryService) -> None:
    async with Client(server) as client:
        before = await service.resolve(PROJECT)
        message = await error(client, "memory_remember", text="The deploy key is ghp_" + "a1B2c3D4" * 5)
        assert "invalid input: refused" in message and "ghp_a1B2" not in message
        assert (await service.resolve(PROJECT)) == before


async def test_update_revises_in_place_keeps_history_and_checks_the_version(
    server: MCPServer, seeded: dict[str, str]
) -> None:
    async with Client(server) as client:
        eid = seeded["timeout"]
        out = await call(client, "memory_update", id=eid, text="The login timeout is 45 seconds (auth/settings.py).",
                         expected_version=1)  # fmt: skip
        assert out["status"] == "updated"
        assert out["entries"][0]["op"] == "revise"
        stale = await error(client, "memory_update", id=eid, text="again", expected_version=1)
        assert "stale revision" in stale and "expected_version=2" in stale
        flagged = await call(client, "memory_update", id=eid, important=True)
        assert flagged["status"] == "updated"
        history = await call(client, "memory_history", id=eid)
        versions = history["versions"]
        assert [v["version"] for v in versions] == [1, 2, 3]
        assert [v["status"] for v in versions] == ["superseded", "superseded", "current"]
        assert {c["field"] for c in versions[1]["changes"]} == {"text"}
        assert versions[1]["text_diff"][0].startswith("---")
        assert [c["field"] for c in versions[2]["changes"]] == ["important"]
        assert [v["reason"] for v in versions][1:] == ["update", "flag"]
        changes = await call(client, "memory_changes")
        reasons = [c["reason"] for r in changes["revisions"] for c in r["changes"] if c["id"] == eid]
        assert reasons[-2:] == ["update", "flag"]
        same = await call(client, "memory_update", id=eid, important=True)
        assert same["status"] == "unchanged"


async def test_history_shows_what_a_purge_erased_as_http_does(
    server: MCPServer, service: MemoryService, seeded: dict[str, str]
) -> None:
    # A purged version carries its tombstone (when, by whom, why), the same object GET …/versions gives (issue 12).
    eid = seeded["timeout"]
    async with Client(server) as client:
        await call(client, "memory_update", id=eid, text="The login timeout is 45 seconds (auth/settings.py).")
        report = await service.purge(eid, versions=[1], reason="an old value written by mistake")
        versions = (await call(client, "memory_history", id=eid))["versions"]
    (tomb,) = report.tombstones
    assert [v["purge"] for v in versions] == [tomb.to_dict(), None]
    documented = VersionOut.model_json_schema()["$defs"]["Tombstone"]["properties"]  # what HTTP documents
    assert set(versions[0]["purge"]) == set(documented)
    assert versions[0]["purge"]["reason"] == "an old value written by mistake" and versions[1]["status"] == "current"
    assert "30 seconds" not in str(versions)


async def test_forget_and_reactivate_are_idempotent(server: MCPServer, seeded: dict[str, str]) -> None:
    async with Client(server) as client:
        eid = seeded["deploy"]
        assert (await call(client, "memory_forget", ids=[eid], reason="obsolete"))["status"] == "forgotten"
        assert (await call(client, "memory_forget", ids=eid))["status"] == "unchanged"  # a bare string id works too
        found = await call(client, "memory_search", query="deploy")
        assert found["hits"] == []
        listed = await call(client, "memory_list", include_inactive=True)
        assert {m["id"]: m["state"] for m in listed["memories"]}[eid] == "inactive"
        inactive = await error(client, "memory_update", id=eid, text="x")
        assert "memory_reactivate" in inactive
        assert (await call(client, "memory_reactivate", ids=[eid]))["status"] == "reactivated"
        assert (await call(client, "memory_search", query="deploy"))["hits"][0]["id"] == eid


async def test_relate_links_memories_and_recall_shows_it(server: MCPServer, seeded: dict[str, str]) -> None:
    async with Client(server) as client:
        source, target = seeded["deploy"], seeded["generated"]
        out = await call(client, "memory_relate", source=source, target=target, kind="relates-to")
        assert out["status"] == "related"
        recall = await call(client, "memory_recall", context="deploy")
        assert {(x["direction"], x["source"], x["target"]) for x in recall["links"]} >= {("outgoing", source, target)}
        again = await call(client, "memory_relate", source=seeded["deploy"], target=seeded["generated"])
        assert again["status"] == "unchanged"
        bad = await error(client, "memory_relate", source=seeded["deploy"], target=seeded["deploy"])
        assert "invalid input" in bad


async def test_recall_is_the_two_step_protocol_within_a_budget(server: MCPServer, seeded: dict[str, str]) -> None:
    async with Client(server) as client:
        out = await call(client, "memory_recall", context="how do we deploy", budget_tokens=2000)
        assert {m["id"] for m in out["mandatory"]} == {seeded["generated"], seeded["tabs"]}
        assert [h["id"] for h in out["contextual"]] == [seeded["deploy"]]
        assert out["briefing"].startswith("memstone briefing ")
        long_rule = "Release checklist: " + " ".join(f"step {i} must be signed off." for i in range(120))
        big = await call(client, "memory_remember", text=long_rule, kind="procedure", mandatory=True)
        tight = await call(client, "memory_recall", context="how do we deploy", budget_tokens=300)
        assert tight["used_tokens"] <= 300
        assert [(o["id"], o["reason"]) for o in tight["omitted"]] == [(big["entries"][0]["id"], "budget")]
        assert "left out" in tight["note"]


async def test_list_orders_mandatory_then_important_then_newest(server: MCPServer, seeded: dict[str, str]) -> None:
    async with Client(server) as client:
        out = await call(client, "memory_list", scope="project")
        assert [m["id"] for m in out["memories"]] == [seeded["generated"], seeded["deploy"], seeded["timeout"]]
        only = await call(client, "memory_list", scope="project", kinds=["fact"])
        assert [m["id"] for m in only["memories"]] == [seeded["timeout"]]


async def test_search_filters_and_priority_order(server: MCPServer, seeded: dict[str, str]) -> None:
    async with Client(server) as client:
        out = await call(client, "memory_search", query="edit generated site docs", order="priority")
        assert out["hits"][0]["id"] == seeded["generated"] and out["order"] == "priority"
        tagged = await call(client, "memory_search", query="deploy", tags="nope")
        assert tagged["hits"] == []


async def test_versions_are_readable_by_number(server: MCPServer, seeded: dict[str, str]) -> None:
    async with Client(server) as client:
        eid = seeded["timeout"]
        await call(client, "memory_update", id=eid, text="The login timeout is 60 seconds.")
        first = await call(client, "memory_source", id=f"{eid}@1")
        assert first["version"] == 1 and "30 seconds" in first["markdown"]


async def test_writes_to_a_project_need_a_project(service: MemoryService, settings: AgentSettings) -> None:
    from dataclasses import replace

    async with Client(build_server(service, replace(settings, project_scope=None))) as client:
        message = await error(client, "memory_remember", text="A fact about nothing in particular.")
        assert "no project scope" in message and "scope='user'" in message


# ---------------------------------------------------------------------------------------------- argument errors
async def test_the_text_limit_is_8192_utf8_bytes_as_everywhere(server: MCPServer, service: MemoryService) -> None:
    from memstone.domain.errors import InvalidInput
    from memstone.domain.model import EntryInput

    async with Client(server) as client:
        ascii_full = "a" * 8190 + " b"  # 8192 bytes, more than the 8000 characters the tool used to allow
        assert (await call(client, "memory_remember", text=ascii_full))["status"] == "created"
        wide = "é" * 4096  # 8192 bytes in 4096 characters
        created = await call(client, "memory_remember", text=wide)
        assert created["status"] == "created"
        eid = created["entries"][0]["id"]
        over = await error(client, "memory_remember", text="é" * 4097)
        with pytest.raises(InvalidInput) as library:
            await service.remember(None, scope=PROJECT, entries=[EntryInput(kind="fact", text="é" * 4097)])
        assert library.value.message in over and "[code: invalid_input]" in over
        assert library.value.message in await error(client, "memory_update", id=eid, text="é" * 4097)
        updated = await call(client, "memory_update", id=eid, text="c" * 8192)
        assert updated["entries"][0]["op"] == "revise"


@pytest.mark.parametrize(
    ("tool", "args", "says"),
    [
        pytest.param("memory_remember", {"text": ""}, "memory_remember: text must not be empty", id="empty-text"),
        pytest.param("memory_remember", {"text": "x", "tags": 5}, "tags must be a list, got int", id="tags-type"),
        pytest.param("memory_search", {"query": "x", "limit": 500}, "limit must be at most 50, got 500", id="limit"),
        pytest.param("memory_remember", {"text": "x", "kind": "guess"}, "kind must be one of", id="kind"),
        pytest.param("memory_history", {"id": "nope"}, "id does not have the expected form", id="id-form"),
        pytest.param("memory_forget", {}, "ids is required", id="missing"),
    ],
)
async def test_argument_errors_are_the_projects_messages_not_pydantics(
    server: MCPServer, tool: str, args: dict[str, Any], says: str
) -> None:
    async with Client(server) as client:
        message = await error(client, tool, **args)
    assert message.startswith(f"Error executing tool {tool}: invalid input: ")
    assert says in message and message.endswith("[code: invalid_input]")
    assert "pydantic" not in message and "validation error" not in message and "input_value" not in message


async def test_a_secret_in_an_invalid_argument_is_not_echoed(server: MCPServer) -> None:
    secret = "ghp_" + "a1B2c3D4" * 5
    async with Client(server) as client:
        message = await error(client, "memory_remember", text="x", slug=secret * 3)
    assert "slug is" in message and secret not in message


async def test_kinds_are_case_normalized(server: MCPServer, service: MemoryService) -> None:
    async with Client(server) as client:
        out = await call(client, "memory_remember", text="Retry flaky network calls with backoff.", kind="LESSON")
        (record,) = await service.records([out["entries"][0]["id"]])
        assert record.kind == "lesson"
        found = await call(client, "memory_list", kinds=["Lesson"])
        assert [m["id"] for m in found["memories"]] == [out["entries"][0]["id"]]
