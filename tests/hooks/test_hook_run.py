"""``run_hook`` on each agent's real payload shapes, against a real SQLite store: output shapes, the briefing,
per-prompt context, re-injection after compaction, capture of prompts and turns, and failing open."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hook_helpers import CODEX_OUTPUT, IMPORTANT, MANDATORY, NORMAL, USER_RULE, payload

from memstone import open_service
from memstone.agents.hooks import HookResult, run_hook
from memstone.agents.payloads import MAX_CONTEXT_CHARS

AGENTS = ["claude-code", "codex", "gemini", "cursor"]
PROMPT_EVENT = {"claude-code": "UserPromptSubmit", "codex": "UserPromptSubmit", "gemini": "BeforeAgent"}


def hook(agent: str, event: str, store_url: str, env: dict[str, str], body: dict[str, Any] | str) -> HookResult:
    raw = body if isinstance(body, str) else json.dumps(body)
    result = run_hook(event, agent, raw, url=store_url, env=env)
    assert result.error is None, result.error
    return result


def injected(agent: str, event: str, result: HookResult) -> str:
    """The context an agent receives, after checking the output has exactly that agent's shape."""
    out = json.loads(result.stdout)
    if agent == "cursor":
        if event == "user-prompt-submit":
            assert set(out) == {"continue", "additional_context"} and out["continue"] is True
        else:
            assert set(out) == {"additional_context"}
        return str(out["additional_context"])
    native = "SessionStart" if event == "session-start" else PROMPT_EVENT[agent]
    assert out == {"hookSpecificOutput": {"hookEventName": native, "additionalContext": out["hookSpecificOutput"]
                                          ["additionalContext"]}}  # fmt: skip
    if agent == "codex":
        jsonschema.validate(out, CODEX_OUTPUT[native])
    return str(out["hookSpecificOutput"]["additionalContext"])


@pytest.mark.parametrize("agent", AGENTS)
def test_session_start_injects_the_mandatory_memories_and_the_important_ones(
    agent: str, store_url: str, env: dict[str, str], project: Path, seeded: dict[str, str]
) -> None:
    result = hook(agent, "session-start", store_url, env, payload(agent, "session-start", cwd=project))
    text = injected(agent, "session-start", result)
    assert text.startswith("memstone briefing ")
    assert MANDATORY in text and USER_RULE in text and IMPORTANT in text
    assert NORMAL not in text  # neither mandatory nor important: found by search when relevant
    assert text.index(MANDATORY) < text.index(IMPORTANT)
    assert "SYSTEM" not in text and "you must" not in text.lower()
    assert len(text) <= MAX_CONTEXT_CHARS


def test_a_feature_branch_brings_its_memories_to_session_start(
    store_url: str, env: dict[str, str], project: Path, seeded: dict[str, str]
) -> None:
    (project / ".git" / "HEAD").write_text("ref: refs/heads/fix/login-timeout\n", "utf-8")
    text = injected("codex", "session-start", hook("codex", "session-start", store_url, env,
                                                    payload("codex", "session-start", cwd=project)))  # fmt: skip
    assert MANDATORY in text and NORMAL in text
    assert "match the branch 'fix login timeout'" in text
    body = payload("codex", "user-prompt-submit", cwd=project, prompt="the login timeout again")
    assert NORMAL not in hook("codex", "user-prompt-submit", store_url, env, body).stdout  # already shown


@pytest.mark.parametrize("agent", AGENTS)
def test_a_prompt_gets_matching_memories_once_and_never_the_briefing_again(
    agent: str, store_url: str, env: dict[str, str], project: Path, seeded: dict[str, str]
) -> None:
    hook(agent, "session-start", store_url, env, payload(agent, "session-start", cwd=project))
    body = payload(agent, "user-prompt-submit", cwd=project, prompt="why does the login time out after 30 seconds?")
    first = injected(agent, "user-prompt-submit", hook(agent, "user-prompt-submit", store_url, env, body))
    assert NORMAL in first and first.startswith("memstone context ")
    assert MANDATORY not in first  # already in the session's briefing
    again = hook(agent, "user-prompt-submit", store_url, env, body)
    if agent == "cursor":
        assert json.loads(again.stdout) == {"continue": True}
    else:
        assert again.stdout == ""  # nothing new: "no opinion"


@pytest.mark.parametrize("agent", ["claude-code", "codex", "gemini"])
def test_after_compaction_the_next_prompt_carries_the_mandatory_memories_again(
    agent: str, store_url: str, env: dict[str, str], project: Path, seeded: dict[str, str]
) -> None:
    hook(agent, "session-start", store_url, env, payload(agent, "session-start", cwd=project))
    compact = hook(agent, "pre-compact", store_url, env, payload(agent, "pre-compact", cwd=project))
    assert compact.stdout == ""  # PreCompact/PreCompress output would be discarded (or block): print nothing
    body = payload(agent, "user-prompt-submit", cwd=project, prompt="continue with the refactor")
    text = injected(agent, "user-prompt-submit", hook(agent, "user-prompt-submit", store_url, env, body))
    assert MANDATORY in text and USER_RULE in text
    assert "after the conversation was compacted" in text
    assert IMPORTANT not in text  # after compaction only the must-follow memories are re-sent
    later = hook(agent, "user-prompt-submit", store_url, env, body)
    assert MANDATORY not in later.stdout


@pytest.mark.parametrize("agent", ["claude-code", "codex"])
def test_session_start_after_compaction_injects_and_the_first_prompt_repeats_the_mandatory(
    agent: str, store_url: str, env: dict[str, str], project: Path, seeded: dict[str, str]
) -> None:
    start = payload(agent, "session-start", cwd=project, source="compact")
    text = injected(agent, "session-start", hook(agent, "session-start", store_url, env, start))
    assert MANDATORY in text and "compacted" in text
    # Hosts are known to drop SessionStart context on compact, so the first prompt sends the mandatory ones again.
    body = payload(agent, "user-prompt-submit", cwd=project, prompt="go on")
    assert MANDATORY in injected(agent, "user-prompt-submit", hook(agent, "user-prompt-submit", store_url, env, body))


@pytest.mark.parametrize("agent", AGENTS)
def test_a_prompt_of_stopwords_only_still_gets_the_mandatory_memories_after_compaction(
    agent: str, store_url: str, env: dict[str, str], project: Path, seeded: dict[str, str]
) -> None:
    # Search refuses an all-stopword query (issue 15); the hook skips that search instead of failing.
    start = payload(agent, "session-start", cwd=project, source="compact")
    hook(agent, "session-start", store_url, env, start)
    body = payload(agent, "user-prompt-submit", cwd=project, prompt="do it")
    assert MANDATORY in injected(agent, "user-prompt-submit", hook(agent, "user-prompt-submit", store_url, env, body))


@pytest.mark.parametrize("agent", AGENTS)
def test_a_session_whose_start_was_never_seen_is_briefed_on_its_first_prompt(
    agent: str, store_url: str, env: dict[str, str], project: Path, seeded: dict[str, str]
) -> None:
    body = payload(agent, "user-prompt-submit", cwd=project, session="never-started", prompt="hello there")
    text = injected(agent, "user-prompt-submit", hook(agent, "user-prompt-submit", store_url, env, body))
    assert MANDATORY in text and IMPORTANT in text


@pytest.mark.parametrize("agent", AGENTS)
def test_prompts_and_turns_become_sources_and_go_through_capture(
    agent: str, store_url: str, env: dict[str, str], project: Path, seeded: dict[str, str]
) -> None:
    prompt = "From now on, always run `make lint` before committing in this repository."
    body = payload(agent, "user-prompt-submit", cwd=project, prompt=prompt)
    result = hook(agent, "user-prompt-submit", store_url, env, body)
    assert result.captured is not None and result.captured.sources
    stop = hook(agent, "stop", store_url, env, payload(agent, "stop", cwd=project))
    assert stop.stdout == ""
    assert stop.captured is not None and stop.captured.sources

    async def stored() -> list[str]:
        async with open_service(store_url, embedding=None) as svc:
            ids = [s.source_id for s in (*result.captured.sources, *stop.captured.sources)]  # type: ignore[union-attr]
            return [s.content for s in await svc.sources(ids)]

    contents = asyncio.run(stored())
    assert any(prompt.replace("`", "") in c.replace("`", "") or "make lint" in c for c in contents)
    assert any("Done." in c for c in contents)
    event = json.loads(contents[0])
    assert event["context"]["agent"] == agent and event["context"]["session_id"] == "sess-1"


def test_a_secret_in_a_prompt_is_never_stored(
    store_url: str, env: dict[str, str], project: Path, seeded: dict[str, str]
) -> None:
    secret = "sk-proj-" + "a1B2c3D4" * 6
    body = payload("claude-code", "user-prompt-submit", cwd=project, prompt=f"use the key {secret} for the tests")
    result = hook("claude-code", "user-prompt-submit", store_url, env, body)
    assert result.captured is not None
    assert result.captured.status == "refused" and result.captured.sources == ()
    assert secret not in (result.captured.reason or "")


def test_an_oversized_briefing_is_cut_to_the_agents_limit(
    store_url: str, env: dict[str, str], project: Path, seeded: dict[str, str]
) -> None:
    env = {**env, "MEMSTONE_HOOK_BUDGET_TOKENS": "100000"}

    async def add() -> None:
        from memstone import EntryInput
        from memstone.agents.project import project_scope

        scope = project_scope(project)
        async with open_service(store_url, embedding=None) as svc:
            for i in range(6):
                text = f"Rule {i}: " + "keep every generated file out of review diffs. " * 40
                await svc.remember(
                    None, entries=[EntryInput(kind="convention", mandatory=True, text=text)], scope=scope
                )

    asyncio.run(add())
    start = payload("claude-code", "session-start", cwd=project)
    text = injected("claude-code", "session-start", hook("claude-code", "session-start", store_url, env, start))
    assert len(text) <= MAX_CONTEXT_CHARS and "memory_search for the rest" in text


def test_the_budget_limits_the_briefing(
    store_url: str, env: dict[str, str], project: Path, seeded: dict[str, str]
) -> None:
    env = {**env, "MEMSTONE_HOOK_BUDGET_TOKENS": "40"}
    start = payload("codex", "session-start", cwd=project)
    text = injected("codex", "session-start", hook("codex", "session-start", store_url, env, start))
    assert IMPORTANT not in text and "did not fit the 40-token budget" in text


@pytest.mark.parametrize(
    ("agent", "event", "stdin", "expected"),
    [
        pytest.param("claude-code", "session-start", "{not json", "", id="bad-json"),
        pytest.param("cursor", "user-prompt-submit", "[1, 2]", '{"continue": true}', id="cursor-not-an-object"),
        pytest.param("vim", "session-start", "{}", "", id="unknown-agent"),
        pytest.param("gemini", "teleport", "{}", "", id="unknown-event"),
    ],
)
def test_failures_print_what_lets_the_agent_continue_and_are_logged(
    agent: str, event: str, stdin: str, expected: str, store_url: str, env: dict[str, str], tmp_path: Path
) -> None:
    result = run_hook(event, agent, stdin, url=store_url, env=env)
    assert result.error is not None
    assert result.stdout == expected
    log = (tmp_path / "store" / "hooks.log").read_text("utf-8").splitlines()
    entry = json.loads(log[-1])
    assert entry["agent"] == agent and entry["event"] == event and entry["error"]


def test_an_empty_store_gives_no_briefing(store_url: str, env: dict[str, str], project: Path) -> None:
    result = hook("claude-code", "session-start", store_url, env, payload("claude-code", "session-start", cwd=project))
    assert result.stdout == ""


def test_session_end_forgets_the_session(
    store_url: str, env: dict[str, str], project: Path, seeded: dict[str, str], tmp_path: Path
) -> None:
    hook("claude-code", "session-start", store_url, env, payload("claude-code", "session-start", cwd=project))
    states = tmp_path / "store" / "hook-sessions"
    assert len(list(states.glob("*.json"))) == 1
    hook("claude-code", "session-end", store_url, env, payload("claude-code", "session-end", cwd=project))
    assert list(states.glob("*.json")) == []
