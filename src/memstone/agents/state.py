"""Per-session injection state and the hook failure log (stdlib only; files under the store's folder).

Why state: SessionStart context is known to be dropped by hosts (Claude Code on ``compact``/``fork``, plugin
hooks, new VS Code windows) and compaction loses what was injected. So each session remembers whether it was
briefed, whether a compaction happened since (then the next prompt carries the mandatory memories again), and
which entries it has already been shown (so per-prompt context never repeats them).
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

STALE_AFTER_S = 7 * 24 * 3600
MAX_LOG_BYTES = 512 * 1024


@dataclass(slots=True, kw_only=True)
class SessionState:
    """What one agent session has been shown."""

    briefed: bool = False  # a session-start briefing was emitted
    reinject: bool = False  # a compaction (or a risky session start) happened: re-send the mandatory memories
    shown: list[str] = field(default_factory=list)  # entry ids already injected in this session
    briefing: str | None = None  # the tag of the last briefing (``memstone briefing <hash>``)


def _state_file(state_dir: Path, agent: str, session_id: str) -> Path:
    key = hashlib.sha256(f"{agent}\0{session_id}".encode()).hexdigest()[:32]
    return state_dir / f"{key}.json"


def load_state(state_dir: Path, agent: str, session_id: str | None) -> SessionState | None:
    """The session's state, or None when this session has never run a hook (or has no id)."""
    if not session_id:
        return None
    try:
        data = json.loads(_state_file(state_dir, agent, session_id).read_text("utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    return SessionState(
        briefed=bool(data.get("briefed")),
        reinject=bool(data.get("reinject")),
        shown=[s for s in data.get("shown", []) if isinstance(s, str)],
        briefing=data.get("briefing") if isinstance(data.get("briefing"), str) else None,
    )


def save_state(state_dir: Path, agent: str, session_id: str | None, state: SessionState) -> None:
    """Write atomically (hooks of one session may run concurrently): a temp file, then rename."""
    if not session_id:
        return
    state_dir.mkdir(parents=True, exist_ok=True)
    target = _state_file(state_dir, agent, session_id)
    tmp = target.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(asdict(state)), "utf-8")
    os.replace(tmp, target)


def drop_state(state_dir: Path, agent: str, session_id: str | None) -> None:
    if session_id:
        _state_file(state_dir, agent, session_id).unlink(missing_ok=True)


def prune_states(state_dir: Path, *, now: float | None = None) -> int:
    """Delete session files untouched for a week (sessions that ended without a session-end hook)."""
    cutoff = (time.time() if now is None else now) - STALE_AFTER_S
    removed = 0
    try:
        entries = list(os.scandir(state_dir))
    except OSError:
        return 0
    for entry in entries:
        try:
            if entry.name.endswith((".json", ".tmp")) and entry.stat().st_mtime < cutoff:
                os.unlink(entry.path)
                removed += 1
        except OSError:
            continue
    return removed


# ------------------------------------------------------------------------------------------------ failure log
def log_failure(log_path: Path, *, agent: str, event: str, error: BaseException, elapsed_ms: float) -> None:
    """Append one JSON line per failure (never raises: a hook must not fail because its log cannot be written)."""
    try:
        import traceback  # only a failing hook pays for it

        log_path.parent.mkdir(parents=True, exist_ok=True)
        if log_path.exists() and log_path.stat().st_size > MAX_LOG_BYTES:
            os.replace(log_path, log_path.with_suffix(".log.1"))
        line = {
            "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "agent": agent,
            "event": event,
            "error": type(error).__name__,
            "message": str(error)[:500],
            "where": "".join(traceback.format_exception(error)[-2:])[-800:],
            "elapsed_ms": round(elapsed_ms, 1),
        }
        with open(log_path, "a", encoding="utf-8") as f:
            f.write(json.dumps(line, ensure_ascii=False) + "\n")
    except Exception:  # the log is best effort: a hook must not fail because of it
        pass


def read_failures(log_path: Path, limit: int = 10) -> list[dict[str, object]]:
    """The most recent failures, newest last."""
    try:
        lines = log_path.read_text("utf-8").splitlines()
    except OSError:
        return []
    out: list[dict[str, object]] = []
    for line in lines[-limit:]:
        try:
            item = json.loads(line)
        except ValueError:
            continue
        if isinstance(item, dict):
            out.append(item)
    return out


def iter_states(state_dir: Path) -> Iterator[Path]:
    try:
        yield from sorted(p for p in state_dir.iterdir() if p.suffix == ".json")
    except OSError:
        return


__all__ = [
    "SessionState",
    "drop_state",
    "iter_states",
    "load_state",
    "log_failure",
    "prune_states",
    "read_failures",
    "save_state",
]
