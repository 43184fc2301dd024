"""Hypothesis over every MCP tool's arguments (issue 12), through the real server and the SDK's in-memory client.

For each example a tool is drawn from the server's own list, and a value for each of its parameters (by name:
ids, texts, tags, scopes, limits, flags, all valid or hostile), some left out, sometimes an unknown one added.
The property: the call returns, and an error result carries a known ``[code: …]``
(``memstone.testing.fuzzing.mcp_failure``); the store is checked after the test (``conftest.store_intact``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fuzz_strategies import (
    JUNK,
    SCOPES,
    Deep,
    Opaque,
    entry_ids,
    flags,
    hostile_text,
    kinds,
    numbers,
    relation_kinds,
    slugs,
    tags,
)
from fuzz_world import FUZZ, World
from hypothesis import given
from hypothesis import strategies as st

from mcp import Client
from memstone.agents.settings import AgentSettings
from memstone.api.mcp.server import build_server
from memstone.testing.fuzzing import mcp_failure

scope_names = st.one_of(st.sampled_from(["project", "user", "all", "all", "other", "Project", ""]), JUNK)
ids_list = st.one_of(st.lists(entry_ids(), min_size=1, max_size=3), hostile_text(), st.just([]))
BY_NAME: dict[str, st.SearchStrategy[Any]] = {
    "text": hostile_text(),
    "query": hostile_text(),
    "context": hostile_text(),
    "title": hostile_text(),
    "reason": hostile_text(),
    "kind": st.one_of(kinds(), relation_kinds()),
    "kinds": st.one_of(st.lists(kinds(), max_size=3), JUNK),
    "tags": st.one_of(tags(), st.sampled_from(["ops, db", ",,", "a b, "])),
    "scope": scope_names,
    "id": entry_ids(),
    "ids": ids_list,
    "source": entry_ids(),
    "target": entry_ids(),
    "slug": slugs(),
    "limit": st.one_of(st.integers(-1, 210), numbers()),
    "expected_version": numbers(),
    "since_revision": numbers(),
    "mode": st.one_of(st.sampled_from(["auto", "fts", "vector", "hybrid", "x"]), JUNK),
    "order": st.one_of(st.sampled_from(["relevance", "priority", "x"]), JUNK),
}
OTHER = st.one_of(flags(), hostile_text(), numbers())


def wire(value: Any) -> Any:
    """What a JSON-RPC client could send for ``value``: bytes and unknown objects become strings; NaN and lone
    surrogates stay (a hostile client sends them), deep nesting is cut to what the SDK's client serializes."""
    if isinstance(value, Deep):
        return Deep(min(value.depth, 100))
    if isinstance(value, bytes):
        return value.decode("latin-1")
    if isinstance(value, Opaque):
        return repr(value)
    if type(value) is list:
        return [wire(v) for v in value]
    if type(value) is dict:
        return {str(k): wire(v) for k, v in value.items()}
    return value


@pytest.fixture(scope="module")
def mcp(world: World) -> Iterator[tuple[Client, dict[str, dict[str, Any]]]]:
    agent = AgentSettings(url=world.url, project_scope=SCOPES[0], user_scope=SCOPES[2], home=world.path)
    client = world.hold(Client(build_server(world.svc, agent)))
    tools = world.run(client.list_tools()).tools
    yield client, {t.name: t.input_schema for t in tools}


@FUZZ
@given(data=st.data())
def test_every_tool(world: World, mcp: tuple[Client, dict[str, dict[str, Any]]], data: st.DataObject) -> None:
    client, schemas = mcp
    tool = data.draw(st.sampled_from(sorted(schemas)), label="tool")
    schema = schemas[tool]
    required = set(schema.get("required", ()))
    args: dict[str, Any] = {}
    for name in sorted(schema.get("properties", {})):
        if data.draw(st.booleans() if name not in required else st.sampled_from([True] * 9 + [False])):
            args[name] = data.draw(BY_NAME.get(name, OTHER), label=name)
    if data.draw(st.integers(0, 9), label="extra") == 0:
        args[data.draw(st.sampled_from(["x", "__proto__", "scope\n"]))] = data.draw(OTHER)

    async def call() -> tuple[bool, str]:
        result = await client.call_tool(tool, wire(await world.resolve(args)))
        if tool == "memory_remember" and not result.is_error and isinstance(result.structured_content, dict):
            for rev in result.structured_content.get("revisions", []):
                memory_id = rev.get("memory_id")
                if isinstance(memory_id, str) and memory_id not in world.memory_ids:
                    world.memory_ids.append(memory_id)
            world.entries.extend(e["id"] for e in result.structured_content.get("entries", []) if e.get("id"))
        return result.is_error, " ".join(getattr(c, "text", "") for c in result.content)

    is_error, text = world.run(call())
    failure = mcp_failure(is_error, text)
    assert failure is None, f"{tool}: {failure}"


# Found by test_every_tool: an integer past str()'s 4300 digits in any argument made pydantic's errors() raise
# ValueError inside the server's argument-error mapping; the SDK answered its own text, without a code.
@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("memory_source", {"id": 10**4300}),
        ("memory_list", {"limit": 10**4300}),
        ("memory_update", {"id": "ent_01J00000000000000000000000", "expected_version": -(10**4300)}),
    ],
)
def test_an_integer_past_4300_digits_is_invalid_input(
    world: World, mcp: tuple[Client, dict[str, dict[str, Any]]], tool: str, args: dict[str, Any]
) -> None:
    client, _ = mcp
    result = world.run(client.call_tool(tool, args))
    text = " ".join(getattr(c, "text", "") for c in result.content)
    assert result.is_error and text.endswith("[code: invalid_input]"), text
    assert "past 64 bits" in text or "must be a string, got int" in text, text
