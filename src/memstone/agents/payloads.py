"""The four agents' hook payloads, normalized, and each agent's own output shape (stdlib only).

Sources: ``../shared/reference/mcp-hooks.md`` §2 (Claude Code, Codex CLI, Gemini CLI, Cursor). Our events are
named by what happened, and the agent's own event name is only used to answer in its format:

==================  ==================  =============  ===========  ==================
our event           Claude Code         Codex          Gemini       Cursor
==================  ==================  =============  ===========  ==================
session-start       SessionStart        SessionStart   SessionStart sessionStart
user-prompt-submit  UserPromptSubmit    UserPromptSubmit BeforeAgent beforeSubmitPrompt
stop                Stop                Stop           AfterAgent   afterAgentResponse
pre-compact         PreCompact          PreCompact     PreCompress  (none)
post-compact        PostCompact         PostCompact    (none)       (none)
session-end         SessionEnd          (none)         SessionEnd   sessionEnd
==================  ==================  =============  ===========  ==================

Injected context goes in ``hookSpecificOutput.additionalContext`` (Claude Code, Codex, Gemini; a top-level
``additionalContext`` is silently ignored by all three) or in ``additional_context`` (Cursor). Everything else
answers with nothing on stdout, which every agent reads as "no opinion".
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Literal

Agent = Literal["claude-code", "codex", "gemini", "cursor"]
Event = Literal["session-start", "user-prompt-submit", "stop", "pre-compact", "post-compact", "session-end"]
AGENTS: tuple[Agent, ...] = ("claude-code", "codex", "gemini", "cursor")
EVENTS: tuple[Event, ...] = (
    "session-start",
    "user-prompt-submit",
    "stop",
    "pre-compact",
    "post-compact",
    "session-end",
)
MAX_CONTEXT_CHARS = 9_500  # Claude Code and Cursor cap injected strings at 10,000 characters

#: The agent's own name for each of our events (only the events that agent has).
NATIVE_EVENTS: dict[Agent, dict[Event, str]] = {
    "claude-code": {
        "session-start": "SessionStart",
        "user-prompt-submit": "UserPromptSubmit",
        "stop": "Stop",
        "pre-compact": "PreCompact",
        "post-compact": "PostCompact",
        "session-end": "SessionEnd",
    },
    "codex": {
        "session-start": "SessionStart",
        "user-prompt-submit": "UserPromptSubmit",
        "stop": "Stop",
        "pre-compact": "PreCompact",
        "post-compact": "PostCompact",
    },
    "gemini": {
        "session-start": "SessionStart",
        "user-prompt-submit": "BeforeAgent",
        "stop": "AfterAgent",
        "pre-compact": "PreCompress",
        "session-end": "SessionEnd",
    },
    "cursor": {
        "session-start": "sessionStart",
        "user-prompt-submit": "beforeSubmitPrompt",
        "stop": "afterAgentResponse",
        "session-end": "sessionEnd",
    },
}


@dataclass(frozen=True, slots=True, kw_only=True)
class HookEvent:
    """One hook invocation, normalized across agents."""

    agent: Agent
    event: Event
    session_id: str | None = None
    turn_id: str | None = None
    cwd: str | None = None
    source: str | None = None  # session-start: startup/resume/clear/compact/fork; compaction: manual/auto
    prompt: str | None = None
    assistant_message: str | None = None
    native_event: str | None = None


def check_agent(agent: str) -> Agent:
    if agent not in AGENTS:
        raise ValueError(f"unknown agent {agent!r} (use {', '.join(AGENTS)})")
    return agent


def check_event(event: str) -> Event:
    if event not in EVENTS:
        raise ValueError(f"unknown hook event {event!r} (use {', '.join(EVENTS)})")
    return event


def _text(payload: dict[str, object], *keys: str) -> str | None:
    for key in keys:
        value = payload.get(key)
        if isinstance(value, str) and value.strip():
            return value
    return None


def parse_payload(agent: Agent, event: Event, raw: str) -> HookEvent:
    """Read an agent's stdin JSON (empty stdin is an empty payload); anything but a JSON object is refused."""
    payload = json.loads(raw) if raw.strip() else {}
    if not isinstance(payload, dict):
        raise ValueError(f"the hook payload is a JSON {type(payload).__name__}, not an object")
    roots = payload.get("workspace_roots")
    first_root = roots[0] if isinstance(roots, list) and roots and isinstance(roots[0], str) else None
    return HookEvent(
        agent=agent,
        event=event,
        session_id=_text(payload, "session_id", "conversation_id"),
        turn_id=_text(payload, "turn_id", "prompt_id", "generation_id"),
        cwd=_text(payload, "cwd") or first_root,
        source=_text(payload, "source", "trigger", "reason"),
        prompt=_text(payload, "prompt"),
        assistant_message=_text(payload, "last_assistant_message", "prompt_response", "text"),
        native_event=_text(payload, "hook_event_name"),
    )


def clip(context: str, limit: int = MAX_CONTEXT_CHARS) -> str:
    """Keep injected text under the agents' 10,000-character cap, cutting at a line end and saying so."""
    if len(context) <= limit:
        return context
    cut = context.rfind("\n", 0, limit - 60)
    cut = cut if cut > 0 else limit - 60
    return context[:cut] + "\n(… cut to fit the agent's context limit; use memory_search for the rest)"


def output(agent: Agent, event: Event, context: str | None) -> dict[str, object] | None:
    """What the hook prints for an event: the agent's injection shape, or None (print nothing)."""
    if agent == "cursor":
        if event == "user-prompt-submit":
            return {"continue": True, "additional_context": clip(context)} if context else {"continue": True}
        if event == "session-start" and context:
            return {"additional_context": clip(context)}
        return None
    if not context or event not in ("session-start", "user-prompt-submit"):
        return None
    return {"hookSpecificOutput": {"hookEventName": NATIVE_EVENTS[agent][event], "additionalContext": clip(context)}}


def fallback_output(agent: Agent | str, event: Event | str) -> dict[str, object] | None:
    """What a failed hook prints: only Cursor's prompt hook needs an answer (``continue``) to let the prompt go."""
    if agent == "cursor" and event == "user-prompt-submit":
        return {"continue": True}
    return None


__all__ = [
    "AGENTS",
    "EVENTS",
    "MAX_CONTEXT_CHARS",
    "NATIVE_EVENTS",
    "Agent",
    "Event",
    "HookEvent",
    "check_agent",
    "check_event",
    "clip",
    "fallback_output",
    "output",
    "parse_payload",
]
