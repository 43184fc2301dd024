"""The real server as a subprocess (``memstone mcp``), driven by the SDK's own client over stdio, in both handshakes.

``legacy`` is the ``initialize`` handshake Claude Code, Codex and Gemini speak today; ``auto`` (the SDK default)
probes ``server/discover`` (2026-07-28) first. Both must give the same tools, results and error messages.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Literal

import pytest
from mcp.types import TextContent

from mcp import Client, StdioServerParameters

TOOLS = {
    "memory_mandatory": (True, False, True),
    "memory_search": (True, False, True),
    "memory_source": (True, False, True),
    "memory_list": (True, False, True),
    "memory_history": (True, False, True),
    "memory_changes": (True, False, True),
    "memory_recall": (True, False, True),
    "memory_remember": (False, False, True),
    "memory_update": (False, False, True),
    "memory_forget": (False, True, True),
    "memory_reactivate": (False, False, True),
    "memory_relate": (False, False, True),
    "memory_review_list": (True, False, True),
    "memory_review_accept": (False, False, False),
    "memory_review_reject": (False, False, False),
    "memory_maintain": (False, False, True),
    "memory_maintenance_proposals": (True, False, True),
    "memory_maintenance_accept": (False, False, False),
    "memory_maintenance_reject": (False, False, False),
}


def params(env: dict[str, str], home: Path) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable, args=["-m", "memstone.cli.main", "mcp", "--no-backfill"], env=env, cwd=str(home)
    )


def structured(result: Any) -> dict[str, Any]:
    assert result.is_error is False, result.content
    data = result.structured_content
    assert isinstance(data, dict)
    return data


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_the_server_over_stdio(
    mode: Literal["legacy", "auto"], server_env: dict[str, str], seeded: dict[str, str], tmp_path: Path
) -> None:
    async with Client(params(server_env, tmp_path), mode=mode, read_timeout_seconds=60) as client:
        assert client.server_info is None or client.server_info.name == "memstone"
        if client.instructions is not None:  # the discover handshake may not carry them
            assert "memory_mandatory" in client.instructions
            assert len(client.instructions.encode("utf-8")) < 2048

        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert set(tools) == set(TOOLS)
        for name, (read_only, destructive, idempotent) in TOOLS.items():
            hints = tools[name].annotations
            assert hints is not None
            assert (hints.read_only_hint, hints.destructive_hint, hints.idempotent_hint) == (
                read_only,
                destructive,
                idempotent,
            ), name
            assert tools[name].output_schema is not None, name
        assert tools["memory_search"].input_schema["required"] == ["query"]

        # Step 1 of recall: every mandatory memory of the project and the user, in full.
        mandatory = structured(await client.call_tool("memory_mandatory", {}))
        assert {m["id"] for m in mandatory["memories"]} == {seeded["generated"], seeded["tabs"]}
        assert any("never edit it by hand" in m["text"] for m in mandatory["memories"])

        # Step 2: contextual search without repeating them.
        found = structured(await client.call_tool("memory_search", {"query": "deploy", "exclude_mandatory": True}))
        assert [h["id"] for h in found["hits"]] == [seeded["deploy"]]
        assert found["mode"] == "fts"

        source = structured(await client.call_tool("memory_source", {"id": seeded["deploy"]}))
        assert source["markdown"].startswith("---\n") and "GitHub Actions" in source["markdown"]

        created = structured(
            await client.call_tool(
                "memory_remember", {"text": f"CI runs on ubuntu-24.04 runners ({mode}).", "tags": "ci, infra"}
            )
        )
        assert created["status"] == "created"
        new_id = created["entries"][0]["id"]

        # A tool error reaches the client as a readable message that says what to do next.
        stale = await client.call_tool("memory_update", {"id": new_id, "text": "x", "expected_version": 7})
        assert stale.is_error is True
        assert isinstance(stale.content[0], TextContent)
        message = stale.content[0].text
        assert "stale revision" in message and "memory_source" in message and "retry" in message
        missing = await client.call_tool("memory_source", {"id": "ent_01M8RC00TC02RDF3185HSEDKRA"})
        assert missing.is_error is True
        assert isinstance(missing.content[0], TextContent)
        assert "not found" in missing.content[0].text and "memory_search" in missing.content[0].text
        invalid = await client.call_tool("memory_search", {"query": "x", "limit": 999})
        assert invalid.is_error is True

        resources = await client.list_resources()
        assert "memory://mandatory" in [str(r.uri) for r in resources.resources]
        templates = await client.list_resource_templates()
        assert [t.uri_template for t in templates.resource_templates] == ["memory://entry/{entry_id}"]
        markdown = await client.read_resource(f"memory://entry/{seeded['generated']}")
        text = markdown.contents[0]
        assert getattr(text, "text", "").startswith("---\n")

        prompts = {p.name for p in (await client.list_prompts()).prompts}
        assert prompts == {"session_start", "capture"}
        start = await client.get_prompt("session_start", {"task": "deploy"})
        content = start.messages[0].content
        assert isinstance(content, TextContent)
        assert "memstone briefing" in content.text and "never edit it by hand" in content.text
