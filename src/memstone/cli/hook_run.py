"""``memstone hook EVENT``, without click: the body of the hook command, and the argv shapes an agent runs.

An agent spawns ``memstone hook …`` on every event and waits for it, so the console script (:mod:`.entry`)
recognises the argv that ``memstone install`` writes (``[--url U] [--scope S] hook EVENT [--agent A] [--json]``)
and calls :func:`run_hook_command` directly, skipping click and the command table; any other shape (``--help``,
an unknown option) goes through click, whose ``hook`` command calls the same function. This module imports only
``os`` and ``sys`` at module level.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # the console script imports this module before it forwards a hook: no typing, no json
if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence
    from typing import Any

    from ..agents.hooks import HookResult


class HookArgv:
    """A hook call's event, ``--agent``, ``--json``, ``--url`` and ``--scope``."""

    __slots__ = ("agent", "as_json", "event", "scope", "url")

    def __init__(self, event: str, agent: str, as_json: bool, url: str | None, scope: str | None) -> None:
        self.event, self.agent, self.as_json, self.url, self.scope = event, agent, as_json, url, scope

    def __iter__(self) -> Iterator[object]:
        return iter((self.event, self.agent, self.as_json, self.url, self.scope))


_GLOBAL = ("--url", "--scope")
_OWN = ("--agent",)


def parse_hook_argv(argv: Sequence[str]) -> HookArgv | None:
    """The hook call in ``argv`` (without the program name), or None when it is any other command or shape."""
    values: dict[str, str] = {}
    rest = _take_options(list(argv), _GLOBAL, values, stop="hook")
    if rest is None or not rest or rest[0] != "hook":
        return None
    event = ""
    as_json = False
    args = rest[1:]
    while args:
        arg = args.pop(0)
        if arg == "--json":
            as_json = True
        elif arg.startswith("-"):
            name, eq, value = arg.partition("=")
            if name not in _OWN or name in values:
                return None
            if not eq:
                if not args:
                    return None
                value = args.pop(0)
            values[name] = value
        elif not event:
            event = arg
        else:
            return None  # an extra argument: click's command decides what it means
    return HookArgv(event, values.get("--agent", ""), as_json, values.get("--url"), values.get("--scope"))


def _take_options(args: list[str], names: tuple[str, ...], values: dict[str, str], *, stop: str) -> list[str] | None:
    while args and args[0] != stop:
        name, eq, value = args[0].partition("=")
        if name not in names or name in values:
            return None
        if eq:
            args = args[1:]
        elif len(args) < 2:
            return None
        else:
            value, args = args[1], args[2:]
        values[name] = value
    return args


def run_hook_command(event: str, agent: str, *, as_json: bool, url: str | None, scope: str | None) -> int:
    """Handle one hook event as ``memstone hook`` does: read stdin, answer, then capture. Returns the exit code
    (always 0: an agent is never blocked)."""
    import json

    from ..agents.hooks import finish_capture, run_hook, spawn_capture

    stdin = sys.stdin
    raw = stdin.buffer.read().decode("utf-8", "replace") if stdin is not None and not stdin.isatty() else ""
    # Capture (Sources + the pipeline) runs after the answer, in a detached child, unless told to stay in front.
    background = hasattr(os, "fork") and not _hook_foreground() and not as_json
    result = run_hook(event, agent, raw, url=url, scope=scope, defer_capture=background)
    if as_json:
        sys.stdout.write(json.dumps(hook_report(result), ensure_ascii=False, indent=2) + "\n")
    elif result.stdout:
        sys.stdout.write(result.stdout + "\n")
    sys.stdout.flush()
    if result.deferred is not None and (not background or not spawn_capture(result)):
        finish_capture(result)  # in the foreground (a team server defers even then: after the answer)
    if result.timed_out:
        os._exit(0)  # a store call may still hold the worker thread; do not wait for it
    return 0


def _hook_foreground() -> bool:
    """``MEMSTONE_HOOK_FOREGROUND=1``: capture before answering. A bad setting never fails a hook (it is logged
    by run_hook, which resolves the same config)."""
    from ..config import Config
    from ..domain.errors import MemstoneError

    try:
        return Config.load(derive=False).integer("hook_foreground") != 0
    except MemstoneError:
        return False


def hook_report(result: HookResult) -> dict[str, Any]:
    import json

    ev = result.event
    return {
        "stdout": json.loads(result.stdout) if result.stdout else None,
        "event": None
        if ev is None
        else {k: getattr(ev, k) for k in ("agent", "event", "session_id", "turn_id", "cwd", "source", "native_event")},
        "context": result.context,
        "capture": result.captured.to_dict() if result.captured is not None else None,
        "elapsed_ms": round(result.elapsed_ms, 1),
        "error": None if result.error is None else f"{type(result.error).__name__}: {result.error}",
    }
