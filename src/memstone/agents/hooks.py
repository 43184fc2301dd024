"""``memstone hook <event> --agent NAME``: one agent hook invocation, fail-open, fast.

The path imports the standard library, the memstone core and :mod:`memstone.capture` only: no MCP SDK, no
pydantic, no embedding model. The store is opened without a model (``embedding=None``), so the contextual
search of a hook is full-text (FTS5) whatever the store's profile: loading the ONNX model alone costs more
than the 300 ms budget. The capture a prompt or turn defers to a detached child (the default) is the
exception: no agent waits for it, so it opens the store with the store's own model (``MEMSTONE_EMBEDDING``
overrides; ``none`` turns it off), matches near-duplicates by meaning, and its entries carry vectors. Other
writes a hook makes carry no vector yet; the MCP server's background backfill, ``memstone embed --backfill``
or the daemon fill them in.

What each event does:

- ``session-start``: the briefing (every mandatory memory in full, then important ones within
  ``MEMSTONE_HOOK_BUDGET_TOKENS``) in the agent's format. After ``source=compact``/``fork`` (hosts are known to
  drop SessionStart context there) the next prompt carries the mandatory memories again.
- ``user-prompt-submit``: the prompt becomes a Source and goes through capture; the answer is the mandatory
  memories again when a compaction happened (or no session start was seen), plus up to three memories matching
  the prompt that this session has not been shown yet.
- ``stop``: the assistant's final message becomes a Source and goes through capture. Prints nothing.
- ``pre-compact`` / ``post-compact``: mark the session so its next prompt re-sends the mandatory memories.
- ``session-end``: forget the session's state.

Against a team server (``MEMSTONE_URL=https://…``) the same briefing and context come from its ``/api``
(:mod:`memstone.agents.hook_reads`); capture does not run there yet.

A hook never fails its agent: every error is logged to ``<store folder>/hooks.log`` (``memstone doctor`` shows
the latest) and the hook prints what lets the agent carry on (nothing, or ``{"continue": true}`` for Cursor).

Start-up is most of a hook's cost, so this module imports at module level only what every event needs
(payloads, settings, session state). asyncio, the service and the store load only for the events that open the
store (session-start, user-prompt-submit, and a capture); pre-compact, post-compact, session-end and a deferred
stop answer without them.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from collections.abc import AsyncIterator, Mapping
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, cast

from ..backends.url import state_dir
from ..config import Config
from ..domain.errors import InvalidInput, MemstoneError
from ..domain.scopes import ANONYMOUS
from ..domain.search import searchable
from ..remote.url import is_remote
from .payloads import HookEvent, check_agent, check_event, fallback_output, output, parse_payload
from .project import current_branch
from .settings import AgentSettings
from .state import SessionState, drop_state, load_state, log_failure, prune_states, save_state

if TYPE_CHECKING:
    from ..capture import CaptureResult
    from ..capture.session import SessionEvent
    from ..remote.client import RemoteClient
    from ..service import MemoryService
    from .briefing import Briefing, Shown
    from .hook_reads import HookReads

DEADLINES_S: dict[str, float] = {"session-start": 8.0, "user-prompt-submit": 4.0, "stop": 8.0}


@dataclass(frozen=True, slots=True, kw_only=True)
class HookResult:
    """What one invocation printed and did (returned for tests and the benchmark; the CLI prints ``stdout``)."""

    stdout: str
    event: HookEvent | None = None
    context: str | None = None
    captured: CaptureResult | None = None
    error: BaseException | None = None
    timed_out: bool = False
    elapsed_ms: float = 0.0
    deferred: tuple[HookEvent, AgentSettings] | None = None  # capture still to run (see spawn_capture)


def run_hook(
    event: str,
    agent: str,
    stdin_text: str,
    *,
    url: str | None = None,
    scope: str | None = None,
    env: Mapping[str, str] | None = None,
    defer_capture: bool = False,
) -> HookResult:
    """Handle one hook invocation; never raises. ``scope`` pins the project or user scope (CLI ``--scope``).

    With ``defer_capture`` the prompt/turn capture is not run here but returned in ``deferred``: the CLI answers
    the agent first and captures in a detached child (:func:`spawn_capture`), so capture costs no hook latency.
    """
    started = time.perf_counter()
    env = os.environ if env is None else env
    hook_event: HookEvent | None = None
    try:
        checked_agent = check_agent(agent)
        checked_event = check_event(event)
        hook_event = parse_payload(checked_agent, checked_event, stdin_text)
        settings = AgentSettings.load(url=url, cwd=hook_event.cwd or os.getcwd(), scope=scope, env=env)
        deadline = DEADLINES_S.get(checked_event, 4.0)
        wants_capture = _wants_capture(hook_event, settings)
        # Trigger: a team server. Why: its capture is one more round trip, which must not eat the answer's deadline.
        # Outcome: captured after the answer (finish_capture), in the child or, in the foreground, in this process.
        defer_capture = defer_capture or is_remote(settings.url)
        run_capture = wants_capture and not defer_capture
        context: str | None = None
        captured: CaptureResult | None = None
        if not _handle_locally(hook_event, settings, capture_now=run_capture):
            import asyncio  # only the events that open the store pay for it

            context, captured = asyncio.run(
                asyncio.wait_for(_handle(hook_event, settings, capture_now=run_capture), deadline)
            )
        answer = output(checked_agent, checked_event, context)
        elapsed = (time.perf_counter() - started) * 1000
        return HookResult(
            stdout=json.dumps(answer, ensure_ascii=False) if answer is not None else "",
            event=hook_event,
            context=context,
            captured=captured,
            elapsed_ms=elapsed,
            deferred=(hook_event, settings) if wants_capture and defer_capture else None,
        )
    except BaseException as exc:  # fail open: an agent must never be blocked by its memory
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            raise
        elapsed = (time.perf_counter() - started) * 1000
        log_failure(_log_dir(url, env) / "hooks.log", agent=agent, event=event, error=exc, elapsed_ms=elapsed)
        fallback = fallback_output(agent, event)
        return HookResult(
            stdout=json.dumps(fallback) if fallback is not None else "",
            event=hook_event,
            error=exc,
            timed_out=isinstance(exc, TimeoutError),
            elapsed_ms=elapsed,
        )


def _log_dir(url: str | None, env: Mapping[str, str]) -> Path:
    """Where a failure is logged: the store's folder, even when the settings themselves did not resolve."""
    try:
        return state_dir(url or Config.load(env=env, cwd=Path.home()).url)
    except MemstoneError:
        return state_dir(url)


def _wants_capture(ev: HookEvent, settings: AgentSettings | None = None) -> bool:
    return (ev.event == "user-prompt-submit" and bool(ev.prompt)) or (ev.event == "stop" and bool(ev.assistant_message))


@asynccontextmanager
async def _hook_service(settings: AgentSettings, *, with_model: bool = False) -> AsyncIterator[MemoryService]:
    """The service a hook uses: no embedding model (FTS only), so nothing heavy is imported on this path.

    ``with_model`` (the detached capture child, which no agent waits for): the store's own model, so capture
    matches near-duplicates by meaning and its writes carry vectors. ``MEMSTONE_EMBEDDING`` chooses: ``none`` is
    no model, a profile name is that one; unset is the profile the store records (none when it records none:
    a hook never configures a store). A model that cannot be loaded is logged and the capture runs without it.
    """
    from ..service import RECORDED, open_service

    choice = settings.embedding.strip() if settings.embedding else None
    embedding = None if not with_model or (choice or "").lower() == "none" else (choice or RECORDED)
    async with AsyncExitStack() as stack:
        if embedding is not None:
            try:
                svc = await stack.enter_async_context(
                    open_service(settings.url, surface="agent-session", author=settings.author, embedding=embedding)
                )
            except Exception as exc:  # the model, not the store: a broken store fails again below
                log_failure(settings.log_path, agent="capture", event="open-model", error=exc, elapsed_ms=0.0)
                embedding = None
        if embedding is None:
            svc = await stack.enter_async_context(
                open_service(settings.url, surface="agent-session", author=settings.author, embedding=None)
            )
        yield svc


def _handle_locally(ev: HookEvent, settings: AgentSettings, *, capture_now: bool = True) -> bool:
    """Handle the events that need no store (session state only); False when the event needs the store."""
    state_dir = settings.state_dir
    match ev.event:
        case "pre-compact" | "post-compact":
            state = load_state(state_dir, ev.agent, ev.session_id) or SessionState()
            # Trigger: the conversation is (being) compacted. Why: injected memories do not survive it, and
            # SessionStart after compaction is known to drop context. Outcome: the next prompt re-sends them.
            save_state(state_dir, ev.agent, ev.session_id, replace(state, reinject=True, shown=[]))
            return True
        case "session-end":
            drop_state(state_dir, ev.agent, ev.session_id)
            return True
        case "stop" if not capture_now:
            return True  # nothing to answer; the deferred capture opens the store itself
    return False


async def _handle(
    ev: HookEvent, settings: AgentSettings, *, capture_now: bool = True
) -> tuple[str | None, CaptureResult | None]:
    if _handle_locally(ev, settings, capture_now=capture_now):
        return None, None
    if is_remote(settings.url):  # a team server: the same briefing from its /api, the capture into its queue
        from ..remote.client import RemoteClient
        from .hook_reads import RemoteReads

        assert settings.url is not None
        async with RemoteClient(settings.url, token=settings.token, timeout_s=3.0) as client:
            captured = await _capture(client, ev, settings) if capture_now and _wants_capture(ev) else None
            return await _answer(RemoteReads(client, settings), ev, settings), captured
    from .hook_reads import LocalReads

    async with _hook_service(settings) as svc:
        captured = await _capture(svc, ev, settings) if capture_now and _wants_capture(ev) else None
        return await _answer(LocalReads(svc, settings), ev, settings), captured


async def _answer(reads: HookReads, ev: HookEvent, settings: AgentSettings) -> str | None:
    match ev.event:
        case "session-start":
            return await _session_start(reads, ev, settings)
        case "user-prompt-submit":
            return await _prompt(reads, ev, settings)
    return None


async def _briefing(
    reads: HookReads, settings: AgentSettings, *, mandatory_only: bool, after_compaction: bool
) -> Briefing | None:
    if not await reads.has_memories():
        return None
    from .briefing import session_briefing

    budget = settings.session_budget_tokens
    parts = await reads.briefing_parts(budget, mandatory_only=mandatory_only)
    return session_briefing(
        parts.mandatory,
        parts.important,
        budget_tokens=budget,
        project_scope=settings.project_scope,
        omitted=parts.omitted,
        after_compaction=after_compaction,
    )


async def _session_start(reads: HookReads, ev: HookEvent, settings: AgentSettings) -> str | None:
    from .briefing import Briefing, prompt_context

    prune_states(settings.state_dir)
    compacted = ev.source in ("compact", "fork")
    brief = await _briefing(reads, settings, mandatory_only=False, after_compaction=ev.source == "compact")
    topic = _branch_topic(ev.cwd)
    if topic and searchable(topic) and settings.prompt_budget_tokens > 0 and await reads.has_memories():
        # Trigger: a feature branch is checked out. Why: its name is the best context a session start has
        # (there is no prompt yet). Outcome: the memories matching it (FTS), after the briefing, not repeated.
        shown = set(brief.entry_ids) if brief else set()
        limit = settings.prompt_limit * 4
        fresh = [h for h in await reads.search(topic, limit=limit) if h.entry_id not in shown][: settings.prompt_limit]
        found = prompt_context(fresh, budget_tokens=settings.prompt_budget_tokens, why=f"the branch {topic!r}")
        if found is not None:
            text = f"{brief.text}\n\n{found.text}" if brief else found.text
            ids = (*(brief.entry_ids if brief else ()), *found.entry_ids)
            brief = Briefing(text=text, tag=brief.tag if brief else found.tag, entry_ids=ids)
    state = SessionState(
        briefed=True,
        # Trigger: SessionStart after compaction or a fork. Why: hosts drop SessionStart context in exactly
        # these cases (anthropics/claude-code #28305, #93458). Outcome: the first prompt re-sends the mandatory ones.
        reinject=compacted,
        shown=list(brief.entry_ids) if brief else [],
        briefing=brief.tag if brief else None,
    )
    save_state(settings.state_dir, ev.agent, ev.session_id, state)
    return brief.text if brief else None


async def _prompt(reads: HookReads, ev: HookEvent, settings: AgentSettings) -> str | None:
    from .briefing import prompt_context

    state = load_state(settings.state_dir, ev.agent, ev.session_id)
    parts: list[str] = []
    shown: list[str] = list(state.shown) if state else []
    if ev.session_id and (state is None or not state.briefed or state.reinject):
        # Trigger: no session start was seen for this session (the host skipped or dropped it), or a compaction
        # happened since. Why: a must-follow memory must not be lost. Outcome: (re)send the briefing now;
        # after a compaction only the mandatory memories.
        reinject = state is not None and state.reinject
        brief = await _briefing(reads, settings, mandatory_only=reinject, after_compaction=reinject)
        if brief is not None:
            parts.append(brief.text)
            shown.extend(e for e in brief.entry_ids if e not in shown)
    if ev.prompt and searchable(ev.prompt) and settings.prompt_budget_tokens > 0 and await reads.has_memories():
        hits = await reads.search(ev.prompt, limit=settings.prompt_limit * 4)
        fresh: list[Shown] = [h for h in hits if h.entry_id not in shown][: settings.prompt_limit]
        found = prompt_context(fresh, budget_tokens=settings.prompt_budget_tokens)
        if found is not None:
            parts.append(found.text)
            shown.extend(found.entry_ids)
    if ev.session_id:
        save_state(
            settings.state_dir,
            ev.agent,
            ev.session_id,
            SessionState(briefed=True, reinject=False, shown=shown, briefing=state.briefing if state else None),
        )
    return "\n\n".join(parts) if parts else None


def _branch_topic(cwd: str | None) -> str | None:
    """The words of a feature branch's name (``fix/login-timeout`` → ``fix login timeout``); None for trunks."""
    branch = current_branch(cwd) if cwd else None
    if not branch or branch in ("main", "master", "trunk", "develop", "dev", "HEAD"):
        return None
    words = re.sub(r"[-_/.]+", " ", branch).strip()
    return words or None


def _session_event(ev: HookEvent) -> SessionEvent:
    from ..capture import EventContext
    from ..capture.session import session_event

    context = EventContext(agent=ev.agent, session_id=ev.session_id, turn_id=ev.turn_id, cwd=ev.cwd)
    if ev.event == "user-prompt-submit":
        assert ev.prompt is not None
        return session_event("user-prompt", ev.prompt, context)
    assert ev.assistant_message is not None
    return session_event("turn-stop", ev.assistant_message, context)


async def _capture(svc: MemoryService | RemoteClient, ev: HookEvent, settings: AgentSettings) -> CaptureResult:
    """Persist the event as Sources and run it through the capture pipeline (which refuses secrets whole): in the
    hook's store, or, given a team server's client, in the server's (its settings, its review queue)."""
    from ..capture import CaptureResult
    from ..capture.session import capture_session_event
    from ..capture.vector_cache import VectorCache

    scope = settings.project_scope or settings.user_scope
    user_scope = settings.user_scope if settings.user_scope != ANONYMOUS else None
    try:
        if is_remote(settings.url):  # the server captures: POST /api/capture/events (api/http/capture_events.py)
            from ..capture.session import session_event_body
            from ..remote.client import RemoteClient

            assert isinstance(svc, RemoteClient)
            out = await svc.json("POST", "/api/capture/events", params={"scope": scope},
                                 json=session_event_body(_session_event(ev)))  # fmt: skip
            return CaptureResult(status=out["status"], mode=out["mode"], reason=out.get("reason"))
        local = cast("MemoryService", svc)
        # With a model (the detached child), the vectors of the Memory's entries are kept between events in a
        # file beside the hook log, so each event embeds only its own new texts.
        cache = VectorCache(settings.home / VECTOR_CACHE_FILE) if local.indexer is not None else None
        return await capture_session_event(
            local, _session_event(ev), scope=scope, user_scope=user_scope, author=settings.author, vector_cache=cache
        )
    except InvalidInput as exc:
        # Trigger: the event breaks a rule (e.g. too large to store even trimmed). Why: that is the event's
        # problem, not the hook's. Outcome: log it (doctor shows it); the agent carries on.
        log_failure(settings.log_path, agent=ev.agent, event=ev.event, error=exc, elapsed_ms=0.0)
        return CaptureResult(status="nothing", mode="auto", reason=str(exc))


VECTOR_CACHE_FILE = "capture-vectors.sqlite"  # in AgentSettings.home, beside hooks.log

# How much the detached capture child lowers its priority (os.nice): it shares the CPU with the agent and with
# the next hook, which are waited for; the child is not.
CHILD_NICENESS = 10


def lower_priority(increment: int) -> int:
    """Lower this process's CPU priority by ``increment`` (POSIX ``nice``); returns the niceness it now has.

    Never raises: where ``os.nice`` is missing or refused, the process keeps its priority (and 0 is returned
    on a platform without it)."""
    if increment <= 0 or not hasattr(os, "nice"):
        return os.nice(0) if hasattr(os, "nice") else 0
    try:
        return os.nice(increment)
    except OSError:
        return os.nice(0)


def finish_capture(
    result: HookResult, *, env: Mapping[str, str] | None = None, with_model: bool = False, niceness: int = 0
) -> CaptureResult | None:
    """Run a deferred capture now (in the detached child, or in the foreground); never raises.

    ``with_model``: open the store with its embedding model (see :func:`_hook_service`); the detached child does,
    a capture in the foreground (the agent waits for it) does not. ``niceness`` > 0 first lowers the process's
    priority by that much (the detached child: :data:`CHILD_NICENESS`), so the model load and the capture yield
    the CPU to the agent and to the next hook.
    """
    if result.deferred is None:
        return None
    import asyncio

    lower_priority(niceness)
    ev, settings = result.deferred
    started = time.perf_counter()

    async def run() -> CaptureResult:
        if is_remote(settings.url):  # the server captures with its own model (no model loads here)
            from ..remote.client import RemoteClient

            assert settings.url is not None
            async with RemoteClient(settings.url, token=settings.token, timeout_s=30.0) as client:
                return await _capture(client, ev, settings)
        async with _hook_service(settings, with_model=with_model) as svc:
            return await _capture(svc, ev, settings)

    try:
        return asyncio.run(asyncio.wait_for(run(), 30.0))
    except Exception as exc:
        elapsed = (time.perf_counter() - started) * 1000
        log_failure(settings.log_path, agent=ev.agent, event=ev.event, error=exc, elapsed_ms=elapsed)
        return None


def spawn_capture(result: HookResult) -> bool:
    """Run the deferred capture in a detached child process (POSIX fork), so the agent is answered first.

    The child starts a new session and points stdin/stdout/stderr at /dev/null, so the agent sees the hook's
    output end and its exit at once, and runs at :data:`CHILD_NICENESS` lower priority, so its model load and
    capture do not slow the agent or the next hook. Returns False where fork is unavailable (the caller captures
    inline).
    """
    if result.deferred is None:
        return True
    if not hasattr(os, "fork"):
        return False
    sys.stdout.flush()
    sys.stderr.flush()
    if os.fork() != 0:
        return True
    try:  # the child
        os.setsid()
        devnull = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(devnull, fd)
        finish_capture(result, with_model=True, niceness=CHILD_NICENESS)
    finally:
        os._exit(0)


__all__ = [
    "CHILD_NICENESS",
    "DEADLINES_S",
    "HookResult",
    "finish_capture",
    "lower_priority",
    "run_hook",
    "spawn_capture",
]
