"""Governed maintenance through MCP tools (in-process client, real SQLite file, the real service)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

from mcp_helpers import PROJECT

from mcp import Client
from memstone import EntryInput, MemoryService
from memstone.agents.settings import AgentSettings
from memstone.api.mcp.server import build_server


async def call(client: Client, tool: str, **args: Any) -> dict[str, Any]:
    result = await client.call_tool(tool, args)
    assert result.is_error is False, result.content
    assert isinstance(result.structured_content, dict)
    return result.structured_content


async def test_maintain_propose_accept_reject_and_a_repeat_run_does_nothing(
    service: MemoryService, settings: AgentSettings
) -> None:
    await service.remember(
        scope=PROJECT,
        entries=[
            EntryInput(kind="convention", text="Always run make test before pushing.", important=True),
            EntryInput(kind="convention", text="Run make test before you push, always."),
            EntryInput(kind="convention", text="Always run make lint before pushing."),
            EntryInput(kind="convention", text="Run make lint before you push, always."),
        ],
    )
    async with Client(build_server(service, settings)) as client:
        run = await call(client, "memory_maintain")
        assert run["scope"] == PROJECT and run["mode"] == "DRY_RUN" and run["status"] == "COMPLETED"
        first, second = (p for p in run["proposals"] if p["kind"] == "duplicate")
        listed = await call(client, "memory_maintenance_proposals", status="PROPOSED")
        assert {p["id"] for p in listed["proposals"]} >= {first["id"], second["id"]}
        assert (await call(client, "memory_maintenance_accept", id=first["id"]))["status"] == "APPLIED"
        assert (await call(client, "memory_maintenance_reject", id=second["id"]))["status"] == "REJECTED"
        again = await client.call_tool("memory_maintenance_accept", {"id": first["id"]})
        assert again.is_error is True
        # A dry run records nothing in the ledger: the first APPLY run sees what no decision covered.
        assert (await call(client, "memory_maintain", mode="apply"))["proposals"] == []
        repeat = await call(client, "memory_maintain", mode="apply")
        assert repeat["listed"] == 0 and repeat["proposals"] == [] and repeat["model_calls"] == 0
    head = await service.resolve(PROJECT)
    assert head is not None and first["entries"][1] not in {v.entry_id for v in await service.entries(head)}


async def test_memory_maintain_takes_the_repo_that_code_anchored_memories_cite(
    service: MemoryService, settings: AgentSettings, tmp_path: Path
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "app.py").write_text("PORT = 8080\n")
    env = {**os.environ, "GIT_AUTHOR_DATE": "2020-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2020-01-01T00:00:00Z"}
    for args in (("init", "-q"), ("add", "."), ("commit", "-q", "-m", "init")):
        subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.org", *args],
                       check=True, capture_output=True, env=env)  # fmt: skip
    src = await service.record_source("file", "PORT = 8080", uri="file://app.py#L1")
    await service.remember(scope=PROJECT, entries=[EntryInput(kind="fact", text="The app listens on 8080.")],
                           sources=[src])  # fmt: skip
    (repo / "app.py").write_text("PORT = 9000\n")
    async with Client(build_server(service, settings)) as client:
        assert (await call(client, "memory_maintain"))["proposals"] == []  # no repo: no evidence check
        judged = await call(client, "memory_maintain", repo=str(repo))
        (flag,) = judged["proposals"]
        assert flag["kind"] == "stale"
        outside = await client.call_tool("memory_maintain", {"repo": str(tmp_path / "nowhere")})
        assert outside.is_error is True and "git work tree" in str(outside.content)
