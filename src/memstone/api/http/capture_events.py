"""``POST /api/capture/events``: an agent hook on a laptop sends a session event to the team server, which captures
it into the scope's Memory with the server's capture settings (auto, review or off) and review queue, exactly as a
hook on the store's own machine does (:mod:`memstone.capture.session`). A secret refuses the whole event.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field
from starlette.responses import JSONResponse, Response

from ...capture.events import EventContext
from ...capture.session import capture_session_event, session_event
from ...capture.settings import CaptureMode
from . import schemas as s
from .routing import Call, Operation


class CaptureEventIn(s.Strict):
    kind: Literal["user-prompt", "turn-stop"] = Field(description="The prompt, or the turn's final report.")
    text: str = Field(min_length=1, max_length=200_000)
    agent: str | None = Field(default=None, max_length=100)
    session_id: str | None = Field(default=None, max_length=200)
    turn_id: str | None = Field(default=None, max_length=200)
    cwd: str | None = Field(default=None, max_length=4096, description="The agent's folder (kept as evidence).")


class CaptureEventOut(s.Open):
    status: Literal["stored", "queued", "unchanged", "nothing", "refused", "off"]
    mode: CaptureMode
    reason: str | None = None


async def capture_event(call: Call) -> Response:
    body = call.b(CaptureEventIn)
    gate = call.gate
    scope = await gate.named(call.q(s.ScopeQuery).scope, "write")
    context = EventContext(agent=body.agent, session_id=body.session_id, turn_id=body.turn_id, cwd=body.cwd)
    user_scope = None if gate.access.local else gate.access.principal.user_scope  # the caller's own scope
    result = await capture_session_event(
        gate.service, session_event(body.kind, body.text, context), scope=scope.uri, user_scope=user_scope,
        author=gate.author,
    )  # fmt: skip
    return JSONResponse(CaptureEventOut.model_validate(result.to_dict()).model_dump(mode="json"))


def capture_event_operations() -> list[Operation]:
    """The capture operation (appended to the /api table)."""
    return [
        Operation("POST", "/api/capture/events", "captureEvent",
                  "Capture an agent-session event (a prompt or a turn's report) into the scope",
                  "write on the scope (?scope=, default your own)", capture_event, query=s.ScopeQuery,
                  body=CaptureEventIn, response=CaptureEventOut, errors=(401, 403, 422), tags=("capture",)),
    ]  # fmt: skip


__all__ = ["capture_event_operations"]
