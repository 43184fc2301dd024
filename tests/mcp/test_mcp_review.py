"""The capture review queue through MCP tools (in-process client, real SQLite file, the real capture pipeline)."""

from __future__ import annotations

from typing import Any

from mcp_helpers import PROJECT

from mcp import Client
from memstone import MemoryService
from memstone.agents.settings import AgentSettings
from memstone.api.mcp.server import build_server
from memstone.capture import CaptureSettings, ReviewQueue, UserPrompt, capture


async def queue_texts(service: MemoryService, url: str, *texts: str) -> list[str]:
    queue, settings = ReviewQueue.of(service), CaptureSettings().with_mode(PROJECT, "review")
    ids = []
    for text in texts:
        result = await capture(service, UserPrompt(text=text), scope=PROJECT, settings=settings, queue=queue)
        assert result.status == "queued"
        ids.append(str(result.outcomes[0].queue_item))
    return ids


async def call(client: Client, tool: str, **args: Any) -> dict[str, Any]:
    result = await client.call_tool(tool, args)
    assert result.is_error is False, result.content
    assert isinstance(result.structured_content, dict)
    return result.structured_content


async def test_list_accept_and_reject_through_mcp(
    service: MemoryService, settings: AgentSettings, store_url: str
) -> None:
    first, second = await queue_texts(service, store_url, "Never log card numbers.", "Prefer table-driven tests.")
    async with Client(build_server(service, settings)) as client:
        listed = await call(client, "memory_review_list")
        assert [(i["id"], i["text"], i["scope"]) for i in listed["items"]] == [
            (first, "Never log card numbers.", PROJECT),
            (second, "Prefer table-driven tests.", PROJECT),
        ]
        accepted = await call(client, "memory_review_accept", id=first)
        (entry,) = accepted["entries"]
        assert accepted["item"]["status"] == "accepted" and accepted["item"]["result_entry"] == entry
        assert (await service.get(entry)).text == "Never log card numbers."
        rejected = await call(client, "memory_review_reject", id=second, note="too generic")
        assert (rejected["item"]["status"], rejected["item"]["note"]) == ("rejected", "too generic")
        assert (await call(client, "memory_review_list"))["count"] == 0
        assert [i["status"] for i in (await call(client, "memory_review_list", status="all"))["items"]] == [
            "accepted",
            "rejected",
        ]
        again = await client.call_tool("memory_review_accept", {"id": second})
        assert again.is_error and "already rejected" in again.content[0].text  # type: ignore[union-attr]
        unknown = await client.call_tool("memory_review_reject", {"id": "cap_nope"})
        assert unknown.is_error and "[code: not_found]" in unknown.content[0].text  # type: ignore[union-attr]


async def test_in_token_mode_the_review_tools_need_a_caller(
    service: MemoryService, settings: AgentSettings, store_url: str
) -> None:
    (item,) = await queue_texts(service, store_url, "Never log card numbers.")
    async with Client(build_server(service, settings, authenticated=True)) as client:
        for tool, args in (("memory_review_list", {}), ("memory_review_accept", {"id": item})):
            refused = await client.call_tool(tool, args)
            assert refused.is_error and "[code: unauthenticated]" in refused.content[0].text  # type: ignore[union-attr]
    assert (await ReviewQueue.of(service).get(item)).status == "pending"  # nothing was decided
