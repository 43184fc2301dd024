"""One agent-session event captured into a store: the hook's path, on a local store and on a team server alike.

An agent hook captures a prompt (``user-prompt``) or a turn's final report (``turn-stop``). Locally the hook runs
:func:`capture_session_event` on its own store; against a team server it posts :func:`session_event_body` to
``POST /api/capture/events``, whose handler rebuilds the same event with :func:`session_event` and runs the same
function on the server's store, with the server's capture settings and review queue. So the mode (auto, review,
off), the secret refusal and the review queue are decided once, where the store is.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Literal

from ..domain.errors import InvalidInput
from ..service import MemoryService
from .events import EventContext, TurnStop, UserPrompt
from .outcomes import CaptureResult
from .pipeline import CapturePipeline, capture
from .queue import ReviewQueue
from .settings import load_capture_settings
from .vector_cache import VectorCache

SessionEventKind = Literal["user-prompt", "turn-stop"]
SessionEvent = UserPrompt | TurnStop
CONTEXT_FIELDS = ("agent", "session_id", "turn_id", "cwd")


def session_event(kind: SessionEventKind, text: str, context: EventContext) -> SessionEvent:
    """The task event of a hook: the prompt, or the turn's final report.

    >>> session_event("user-prompt", "We deploy with uv.", EventContext(agent="codex")).source_kind
    'user-prompt'
    """
    if kind == "user-prompt":
        return UserPrompt(text=text, context=context)
    if kind == "turn-stop":
        return TurnStop(final_report=text, context=context)
    raise InvalidInput(f"unknown session event {kind!r}", hint="use user-prompt or turn-stop")


def session_event_body(event: SessionEvent) -> dict[str, object]:
    """The JSON body of ``POST /api/capture/events`` for ``event`` (what :func:`session_event` rebuilds)."""
    text = event.text if isinstance(event, UserPrompt) else event.final_report
    context: Mapping[str, str | None] = {name: getattr(event.context, name) for name in CONTEXT_FIELDS}
    return {"kind": event.source_kind, "text": text, **{k: v for k, v in context.items() if v is not None}}


async def capture_session_event(
    service: MemoryService,
    event: SessionEvent,
    *,
    scope: str,
    user_scope: str | None,
    author: str | None,
    vector_cache: VectorCache | None = None,
) -> CaptureResult:
    """Capture ``event`` into ``scope`` with the store's capture settings and review queue.

    ``user_scope`` (the person's own scope) receives the "in all my projects" candidates; None keeps the
    settings' own. ``vector_cache`` keeps the Memory's entry vectors between events (the hook child's file), so
    each event embeds only its own new texts. An event that breaks a rule (too large even trimmed) raises
    InvalidInput.
    """
    settings = await load_capture_settings(service)
    if user_scope is not None:
        settings = replace(settings, user_scope=user_scope)
    pipeline = CapturePipeline(working_notes=settings.working_notes, vector_cache=vector_cache)
    return await capture(
        service, event, scope=scope, settings=settings, queue=ReviewQueue.of(service), author=author, pipeline=pipeline
    )


__all__ = ["CONTEXT_FIELDS", "SessionEvent", "SessionEventKind", "capture_session_event", "session_event",
           "session_event_body"]  # fmt: skip
