"""The team path (issue 13): the same CLI and MCP operations against a local store and against a real
``memstone serve`` over HTTP with a token give the same outcome and the same error code and exit code.

The remote side decides nothing itself: a secret, a bad kind, an oversize text and a stale update are refused
by the server's service, and the client maps the server's stable ``code`` back to the local error class.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mcp.client.stdio import StdioServerParameters

from mcp import Client
from memstone.testing.team import MEMSTONE, Result, Team, isolated_env, memstone

SCOPE = "memstone://orgs/acme/projects/web"
GITHUB_TOKEN = "ghp_" + "R4nd0mL00k1ngT0k3nV4lu3Abcdef123456"


Cli = Callable[..., Result]


def local_cli(tmp: Path) -> Cli:
    env = isolated_env(tmp)
    return lambda *args: memstone("--url", f"sqlite:///{tmp / 'local.db'}", "--scope", SCOPE, *args, env=env, cwd=tmp)


def remote_cli(team: Team, token: str | None) -> Cli:
    env = isolated_env(team.tmp, **({"MEMSTONE_TOKEN": token} if token else {}))
    return lambda *args: memstone("--url", team.url, "--scope", SCOPE, *args, env=env, cwd=team.tmp)


def scenario(cli: Cli) -> list[tuple[Any, ...]]:
    """What a user sees, with ids left out (each store makes its own)."""
    seen: list[tuple[Any, ...]] = []

    def step(name: str, *args: str) -> Result:
        r = cli(*args)
        seen.append((name, r.code, r.error_code))
        return r

    made = step("remember", "remember", "--kind", "fact", "--text", "We deploy with uv.", "--tag", "ops")
    entry = made.data["entries"][0]  # type: ignore[index]
    seen.append(("status", made.data["status"]))
    again = step("remember-again", "remember", "--kind", "fact", "--text", "We deploy with uv.")
    seen.append(("again", again.data["status"], again.data["existing"] == [entry]))
    step("secret", "remember", "--kind", "fact", "--text", f"The bot pushes with {GITHUB_TOKEN}.")
    step("bad-kind", "remember", "--kind", "not a kind!", "--text", "A fact.")
    step("oversize", "remember", "--kind", "fact", "--text", "x" * 8193)
    found = step("search", "search", "deploy")
    seen.append(("hits", [(h["entry_id"] == entry, h["text"]) for h in found.data["hits"]]))  # type: ignore[union-attr]
    shown = step("show", "show", entry)
    seen.append(("markdown", "We deploy with uv." in str(shown.data["markdown"])))
    revised = step(
        "revise", "remember", "--revise", entry, "--text", "We deploy with uv 0.9.", "--expected-version", "1"
    )
    seen.append(("revised", revised.data["status"]))
    step("stale", "remember", "--revise", entry, "--text", "stale", "--expected-version", "1")
    same = step("no-op", "remember", "--revise", entry, "--text", "We deploy with uv 0.9.")
    seen.append(("no-op", same.data["status"]))
    history = step("history", "history", entry)
    seen.append(
        (
            "versions",
            [
                h["version"]["version"] if "version" in h and isinstance(h["version"], dict) else h["version"]
                for h in history.data["history"]
            ],
        )
    )  # type: ignore[union-attr]
    step("forget", "forget", entry)
    gone = step("search-after-forget", "search", "deploy")
    seen.append(("hits-after", len(gone.data["hits"])))  # type: ignore[arg-type]
    step("show-unknown", "show", "ent_01M8RC00TC02RDF3185HSEDKRA")
    step("forget-unknown", "forget", "ent_01M8RC00TC02RDF3185HSEDKRA")
    return seen


def test_the_cli_gives_the_same_outcomes_locally_and_against_a_team_server(team: Team, tmp_path: Path) -> None:
    local = scenario(local_cli(tmp_path))
    remote = scenario(remote_cli(team, team.writer))
    assert remote == local
    codes = {name: (code, error) for name, code, error, *_ in (s for s in local if len(s) == 3)}
    assert codes["secret"] == (2, "secret_refused") and codes["stale"] == (3, "revision_conflict")
    assert codes["show-unknown"] == (4, "not_found") and codes["remember"] == (0, None)


def test_a_team_server_refuses_a_missing_token_and_a_reader_writing(team: Team) -> None:
    nobody = remote_cli(team, None)("search", "deploy")
    assert (nobody.code, nobody.error_code) == (7, "unauthenticated")
    assert "MEMSTONE_TOKEN" in json.dumps(nobody.data)
    reader = remote_cli(team, team.reader)
    wrote = reader("remember", "--kind", "fact", "--text", "Readers cannot write.")
    assert (wrote.code, wrote.error_code) == (7, "forbidden")
    assert reader("search", "readers").code == 0


def test_a_command_with_no_http_operation_says_so(team: Team) -> None:
    r = remote_cli(team, team.writer)("verify")
    assert (r.code, r.error_code) == (5, "capability_not_supported")
    memory_id = remote_cli(team, team.writer)("remember", "--kind", "fact", "--text", "x", "--memory", "mem_1")
    assert (memory_id.code, memory_id.error_code) == (2, "invalid_input")


async def _mcp_outcomes(params: StdioServerParameters) -> list[tuple[Any, ...]]:
    seen: list[tuple[Any, ...]] = []
    async with Client(params, read_timeout_seconds=120) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        seen.append(("tools", {"memory_remember", "memory_search", "memory_update"} <= names))
        for tool, args in (
            ("memory_remember", {"text": "Releases are tagged from main.", "kind": "convention"}),
            ("memory_remember", {"text": f"The bot pushes with {GITHUB_TOKEN}.", "kind": "fact"}),
            ("memory_remember", {"text": "x" * 8193, "kind": "fact"}),
            ("memory_history", {"id": "ent_01M8RC00TC02RDF3185HSEDKRA"}),
        ):
            result = await client.call_tool(tool, args)
            text = result.content[0].text if result.content else ""  # type: ignore[union-attr]
            seen.append((tool, result.is_error, text.rsplit("[code: ", 1)[-1].rstrip("]") if result.is_error else ""))
        found = await client.call_tool("memory_search", {"query": "releases tagged"})
        assert isinstance(found.structured_content, dict), found
        seen.append(("search", [m["text"] for m in found.structured_content.get("memories", [])]))
    return seen


async def test_memstone_mcp_forwards_to_a_team_server_with_the_same_outcomes(team: Team, tmp_path: Path) -> None:
    project = {"MEMSTONE_PROJECT_SCOPE": SCOPE, "MEMSTONE_USER_SCOPE": "memstone://users/alice"}
    local_env = isolated_env(tmp_path, MEMSTONE_URL=f"sqlite:///{tmp_path / 'mcp.db'}", **project)
    remote_env = isolated_env(tmp_path, MEMSTONE_URL=team.url, MEMSTONE_TOKEN=team.writer, **project)
    local = await _mcp_outcomes(StdioServerParameters(command=MEMSTONE, args=["mcp", "--no-backfill"], env=local_env,
                                                      cwd=str(tmp_path)))  # fmt: skip
    remote = await _mcp_outcomes(StdioServerParameters(command=MEMSTONE, args=["mcp"], env=remote_env,
                                                       cwd=str(tmp_path)))  # fmt: skip
    assert remote == local
    assert local[2][1:] == (True, "secret_refused")
    # The proxy's project scope reached the server: the entry is in the project's Memory there.
    listed = remote_cli(team, team.writer)("search", "releases")
    assert [h["scope"] for h in listed.data["hits"]] == [SCOPE]  # type: ignore[union-attr]


def _hook(event: str, payload: dict[str, Any], env: dict[str, str], cwd: Path) -> str:
    import subprocess

    done = subprocess.run(
        [MEMSTONE, "hook", event, "--agent", "claude-code"], input=json.dumps(payload), env={**env,
        "MEMSTONE_HOOK_FOREGROUND": "1"}, cwd=cwd, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout


def _normalized(stdout: str) -> str:
    import re

    text = json.loads(stdout)["hookSpecificOutput"]["additionalContext"] if stdout.strip() else ""
    text = re.sub(r"(ent|ver|mem)_[0-9A-Z]{26}", r"\1_X", text)
    return re.sub(r"memstone (briefing|context) [0-9a-f]{10}", r"memstone \1 TAG", text)


def test_the_hooks_brief_from_a_team_server_as_from_a_local_store(team: Team, tmp_path: Path) -> None:
    scope = "memstone://orgs/acme/projects/hooks"
    extra = {"MEMSTONE_PROJECT_SCOPE": scope, "MEMSTONE_USER_SCOPE": "memstone://users/alice"}
    grant = memstone("--url", team.store, "token", "grant", "--user", "alice", "--scope", scope, "--permission",
                     "write", env=team.env, cwd=team.tmp)  # fmt: skip
    assert grant.code == 0, grant.data
    local_env = isolated_env(tmp_path, MEMSTONE_URL=f"sqlite:///{tmp_path / 'hooks.db'}", **extra)
    remote_env = isolated_env(tmp_path, MEMSTONE_URL=team.url, MEMSTONE_TOKEN=team.writer, **extra)
    outputs = []
    for env in (local_env, remote_env):
        for args in (
            ("--kind", "constraint", "--mandatory", "--text", "Never edit site/: it is generated."),
            ("--kind", "procedure", "--important", "--text", "Release: tag main, then run scripts/publish."),
            ("--kind", "fact", "--text", "Staging deploys run from the deploy branch every hour."),
        ):
            assert memstone("--scope", scope, "remember", *args, env=env, cwd=tmp_path).code == 0
        start = _hook("session-start", {"session_id": f"s-{len(outputs)}", "hook_event_name": "SessionStart",
                                        "cwd": str(tmp_path), "source": "startup"}, env, tmp_path)  # fmt: skip
        prompt = _hook("user-prompt-submit", {"session_id": f"s-{len(outputs)}", "hook_event_name":
                       "UserPromptSubmit", "cwd": str(tmp_path), "prompt": "when do staging deploys run?"}, env,
                       tmp_path)  # fmt: skip
        outputs.append((_normalized(start), _normalized(prompt)))
    local, remote = outputs
    assert "Never edit site/" in local[0] and "scripts/publish" in local[0]
    assert "Staging deploys run" in local[1]
    assert remote == local
