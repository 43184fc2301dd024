"""Normalized task events: what an agent integration hands to capture, independent of any agent's payload.

A hook or the MCP server turns Claude Code / Codex / Gemini / Cursor JSON into one of these values and calls
:func:`memstone.capture.capture`. Every event becomes one immutable Source (kind ``user-prompt``,
``user-correction``, ``agent-turn``, ``handoff``, ``git-change``, ``explicit-submit`` or ``bootstrap``) whose
content is the canonical JSON of the event; each :class:`FileSnapshot` it carries becomes a second Source of
kind ``build-file`` with ``uri="file:<path>"``, so a later :class:`GitChange` touching that path can find the
entries it supports.

Sources are capped at 8,192 UTF-8 bytes, so :func:`fit_event` trims the largest free-text field (patch first,
then reports and texts) with a visible ``…[truncated N chars]`` marker before anything else happens; the
adapters then read the same trimmed event, so every candidate is supported by exactly what was stored.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Literal

from ..domain.errors import InvalidInput
from ..domain.model import Source

__all__ = [
    "BUILD_FILE_NAMES",
    "Bootstrap",
    "EventContext",
    "ExplicitSubmit",
    "FileSnapshot",
    "GitChange",
    "Handoff",
    "SourceDraft",
    "SubmittedEntry",
    "TaskEvent",
    "TurnStop",
    "UserCorrection",
    "UserPrompt",
    "Verification",
    "event_from_dict",
    "event_from_source",
    "event_sources",
    "event_to_dict",
    "fit_event",
    "read_build_files",
]

MAX_SOURCE_BYTES = 8192
_SOURCE_BUDGET = 8000  # headroom under the 8,192-byte limit for the truncation markers
MAX_FILE_BYTES = 64 * 1024  # build files larger than this are not read by read_build_files

# The build files the deterministic adapter understands, in the order they are read.
BUILD_FILE_NAMES = (
    "pyproject.toml",
    "package.json",
    "Makefile",
    "GNUmakefile",
    "Cargo.toml",
    "go.mod",
    "justfile",
    "Justfile",
    "tox.ini",
    "noxfile.py",
)

Outcome = Literal["passed", "failed", "skipped", "unknown"]
Scope = Literal["project", "user"]


@dataclass(frozen=True, slots=True, kw_only=True)
class EventContext:
    """Where an event came from. Stored with the event; never used to authorize anything."""

    agent: str | None = None  # "claude-code", "codex", "gemini", "cursor", "api", ...
    session_id: str | None = None
    turn_id: str | None = None
    cwd: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class FileSnapshot:
    """The content of one file the task used, by repository-relative POSIX path (``pyproject.toml``)."""

    path: str
    content: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Verification:
    """One verification step the agent ran and its outcome (``passed`` / ``failed`` / ``skipped`` / ``unknown``)."""

    command: str
    outcome: Outcome = "unknown"
    detail: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class UserPrompt:
    """A user's prompt or statement, as submitted (Claude ``UserPromptSubmit``, Gemini ``BeforeAgent``, …)."""

    text: str
    context: EventContext = field(default_factory=EventContext)
    source_kind: Literal["user-prompt"] = "user-prompt"


@dataclass(frozen=True, slots=True, kw_only=True)
class UserCorrection:
    """A statement the integration already knows is a correction of the agent (e.g. a "that's wrong" button)."""

    text: str
    context: EventContext = field(default_factory=EventContext)
    source_kind: Literal["user-correction"] = "user-correction"


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnStop:
    """The main agent turn stopped: its final report, changed paths, verification and the files it used."""

    final_report: str
    changed_paths: tuple[str, ...] = ()
    verification: tuple[Verification, ...] = ()
    git_head: str | None = None
    files: tuple[FileSnapshot, ...] = ()
    context: EventContext = field(default_factory=EventContext)
    source_kind: Literal["agent-turn"] = "agent-turn"

    @property
    def report(self) -> str:
        """What the agent said it did (a Handoff's is its summary)."""
        return self.final_report


@dataclass(frozen=True, slots=True, kw_only=True)
class Handoff:
    """A Handoff is ready: what was done, what is left, and the state it leaves."""

    summary: str
    open_items: tuple[str, ...] = ()
    changed_paths: tuple[str, ...] = ()
    verification: tuple[Verification, ...] = ()
    git_head: str | None = None
    context: EventContext = field(default_factory=EventContext)
    source_kind: Literal["handoff"] = "handoff"

    @property
    def report(self) -> str:
        """What the agent said it did (a turn's is its final report)."""
        return self.summary


@dataclass(frozen=True, slots=True, kw_only=True)
class GitChange:
    """A change Git produced: base and head commit, the changed paths, optionally the patch and new file contents."""

    base_commit: str
    head_commit: str
    changed_paths: tuple[str, ...]
    patch: str | None = None
    files: tuple[FileSnapshot, ...] = ()
    context: EventContext = field(default_factory=EventContext)
    source_kind: Literal["git-change"] = "git-change"


@dataclass(frozen=True, slots=True, kw_only=True)
class SubmittedEntry:
    """One structured entry a caller submits explicitly (a decision, constraint, working_note, …)."""

    kind: str
    text: str
    title: str | None = None
    tags: tuple[str, ...] = ()
    important: bool = False
    mandatory: bool = False
    scope: Scope = "project"


@dataclass(frozen=True, slots=True, kw_only=True)
class ExplicitSubmit:
    """The caller explicitly submits structured entries; they still pass secret scanning, admission and dedup."""

    entries: tuple[SubmittedEntry, ...]
    context: EventContext = field(default_factory=EventContext)
    source_kind: Literal["explicit-submit"] = "explicit-submit"


@dataclass(frozen=True, slots=True, kw_only=True)
class Bootstrap:
    """An explicit repository bootstrap: the bounded build files to derive build and test conventions from."""

    files: tuple[FileSnapshot, ...]
    context: EventContext = field(default_factory=EventContext)
    source_kind: Literal["bootstrap"] = "bootstrap"


TaskEvent = UserPrompt | UserCorrection | TurnStop | Handoff | GitChange | ExplicitSubmit | Bootstrap

_EVENT_TYPES: dict[str, type[TaskEvent]] = {
    "user_prompt": UserPrompt,
    "user_correction": UserCorrection,
    "turn_stop": TurnStop,
    "handoff": Handoff,
    "git_change": GitChange,
    "explicit_submit": ExplicitSubmit,
    "bootstrap": Bootstrap,
}
_TYPE_NAMES = {cls: name for name, cls in _EVENT_TYPES.items()}
_SOURCE_KINDS = {
    "user-prompt": "user_prompt",
    "user-correction": "user_correction",
    "agent-turn": "turn_stop",
    "handoff": "handoff",
    "git-change": "git_change",
    "explicit-submit": "explicit_submit",
    "bootstrap": "bootstrap",
}


@dataclass(frozen=True, slots=True, kw_only=True)
class SourceDraft:
    """A Source to record: ``key`` is how candidates name it as evidence (``event`` or ``file:<path>``)."""

    key: str
    kind: str
    content: str
    uri: str | None = None


# ------------------------------------------------------------------------------------------- serialization
def _plain(value: object) -> object:
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    if hasattr(value, "__dataclass_fields__"):
        return {
            f.name: _plain(getattr(value, f.name))
            for f in fields(value)  # type: ignore[arg-type]
            if f.name != "source_kind" and getattr(value, f.name) not in (None, (), "")
        }
    return value


def event_to_dict(event: TaskEvent) -> dict[str, object]:
    """The event as JSON-ready data with a ``type`` field (``user_prompt``, ``turn_stop``, …)."""
    body = _plain(event)
    assert isinstance(body, dict)
    if body.get("context") == {}:
        body.pop("context")
    return {"type": _TYPE_NAMES[type(event)], **body}


def _str(data: Mapping[str, object], key: str, *, required: bool = False) -> str | None:
    value = data.get(key)
    if value is None:
        if required:
            raise InvalidInput(f"event field {key!r} is required")
        return None
    if not isinstance(value, str):
        raise InvalidInput(f"event field {key!r} must be a string, got {type(value).__name__}")
    return value


def _strs(data: Mapping[str, object], key: str) -> tuple[str, ...]:
    value = data.get(key) or ()
    if isinstance(value, str) or not isinstance(value, (list, tuple)):
        raise InvalidInput(f"event field {key!r} must be a list of strings")
    if not all(isinstance(v, str) for v in value):
        raise InvalidInput(f"event field {key!r} must be a list of strings")
    return tuple(value)


def _objs(data: Mapping[str, object], key: str) -> list[Mapping[str, object]]:
    value = data.get(key) or ()
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, Mapping) for v in value):
        raise InvalidInput(f"event field {key!r} must be a list of objects")
    return list(value)


def _context(data: Mapping[str, object]) -> EventContext:
    raw = data.get("context") or {}
    if not isinstance(raw, Mapping):
        raise InvalidInput("event field 'context' must be an object")
    return EventContext(
        agent=_str(raw, "agent"), session_id=_str(raw, "session_id"), turn_id=_str(raw, "turn_id"), cwd=_str(raw, "cwd")
    )


def _verification(data: Mapping[str, object]) -> tuple[Verification, ...]:
    out = []
    for v in _objs(data, "verification"):
        outcome = v.get("outcome", "unknown")
        if outcome not in ("passed", "failed", "skipped", "unknown"):
            raise InvalidInput(f"verification outcome must be passed, failed, skipped or unknown, got {outcome!r}")
        out.append(
            Verification(command=_str(v, "command", required=True) or "", outcome=outcome, detail=_str(v, "detail"))
        )
    return tuple(out)


def _files(data: Mapping[str, object]) -> tuple[FileSnapshot, ...]:
    return tuple(
        FileSnapshot(path=_str(f, "path", required=True) or "", content=_str(f, "content", required=True) or "")
        for f in _objs(data, "files")
    )


def event_from_dict(data: Mapping[str, object]) -> TaskEvent:
    """Build an event from JSON-like data with a ``type`` field; unknown types and bad fields are refused.

    >>> event_from_dict({"type": "user_prompt", "text": "We use uv."})
    UserPrompt(text='We use uv.', context=EventContext(agent=None, session_id=None, turn_id=None, cwd=None), ...)
    """
    kind = data.get("type")
    if kind not in _EVENT_TYPES:
        raise InvalidInput(f"unknown event type {kind!r}", hint=f"use one of: {', '.join(_EVENT_TYPES)}")
    ctx = _context(data)
    if kind == "user_prompt":
        return UserPrompt(text=_str(data, "text", required=True) or "", context=ctx)
    if kind == "user_correction":
        return UserCorrection(text=_str(data, "text", required=True) or "", context=ctx)
    if kind == "turn_stop":
        return TurnStop(
            final_report=_str(data, "final_report") or "",
            changed_paths=_strs(data, "changed_paths"),
            verification=_verification(data),
            git_head=_str(data, "git_head"),
            files=_files(data),
            context=ctx,
        )
    if kind == "handoff":
        return Handoff(
            summary=_str(data, "summary", required=True) or "",
            open_items=_strs(data, "open_items"),
            changed_paths=_strs(data, "changed_paths"),
            verification=_verification(data),
            git_head=_str(data, "git_head"),
            context=ctx,
        )
    if kind == "git_change":
        return GitChange(
            base_commit=_str(data, "base_commit", required=True) or "",
            head_commit=_str(data, "head_commit", required=True) or "",
            changed_paths=_strs(data, "changed_paths"),
            patch=_str(data, "patch"),
            files=_files(data),
            context=ctx,
        )
    if kind == "explicit_submit":
        entries = []
        for e in _objs(data, "entries"):
            scope = e.get("scope", "project")
            if scope not in ("project", "user"):
                raise InvalidInput(f"submitted entry scope must be project or user, got {scope!r}")
            for flag in ("important", "mandatory"):
                if not isinstance(e.get(flag, False), bool):
                    raise InvalidInput(f"submitted entry field {flag!r} must be true or false")
            entries.append(
                SubmittedEntry(
                    kind=_str(e, "kind", required=True) or "",
                    text=_str(e, "text", required=True) or "",
                    title=_str(e, "title"),
                    tags=_strs(e, "tags"),
                    important=bool(e.get("important", False)),
                    mandatory=bool(e.get("mandatory", False)),
                    scope=scope,
                )
            )
        return ExplicitSubmit(entries=tuple(entries), context=ctx)
    return Bootstrap(files=_files(data), context=ctx)


def event_from_source(source: Source) -> TaskEvent | FileSnapshot | None:
    """Decode a Source written by capture back into its event (or file); None for other Sources."""
    if source.kind == "build-file" and source.uri and source.uri.startswith("file:"):
        return FileSnapshot(path=source.uri.removeprefix("file:"), content=source.content)
    if source.kind not in _SOURCE_KINDS:
        return None
    try:
        data = json.loads(source.content)
    except ValueError:
        return None
    if not isinstance(data, dict) or data.get("type") != _SOURCE_KINDS[source.kind]:
        return None
    try:
        return event_from_dict(data)
    except InvalidInput:
        return None


# ------------------------------------------------------------------------------------------- sources
def _size(text: str) -> int:
    return len(text.encode("utf-8"))


def _trim(text: str, max_bytes: int) -> str:
    if _size(text) <= max_bytes:
        return text
    marker_room = 40
    keep = text.encode("utf-8")[: max(0, max_bytes - marker_room)].decode("utf-8", "ignore")
    return f"{keep}…[truncated {len(text) - len(keep)} chars]"


_TRIM_ORDER = ("patch", "final_report", "summary", "text")


def fit_event(event: TaskEvent) -> TaskEvent:
    """The event trimmed so its Source fits the 8,192-byte limit (the patch goes first); unchanged if it fits."""
    if isinstance(event, (GitChange, TurnStop, Bootstrap)) and event.files:
        event = replace(event, files=tuple(FileSnapshot(path=f.path, content=_trim(f.content, _SOURCE_BUDGET))
                                           for f in event.files))  # fmt: skip
    for name in _TRIM_ORDER:
        for _ in range(4):  # JSON escaping can make a field larger than its text: trim again until it fits
            size = _size(_event_json(event))
            if size <= _SOURCE_BUDGET:
                return event
            value = getattr(event, name, None)
            if not isinstance(value, str) or _size(value) <= 240:
                break
            budget = max(200, _size(value) - (size - _SOURCE_BUDGET) - 64)
            event = replace(event, **{name: _trim(value, budget)})  # type: ignore[arg-type]
    too_big = _size(_event_json(event)) > _SOURCE_BUDGET
    if too_big and isinstance(event, (TurnStop, Handoff, GitChange)) and len(event.changed_paths) > 50:
        extra = len(event.changed_paths) - 50
        event = replace(event, changed_paths=(*event.changed_paths[:50], f"…and {extra} more"))
    if _size(_event_json(event)) > _SOURCE_BUDGET:
        raise InvalidInput(
            "the event is too large to store as one Source even after trimming its free text",
            hint="send fewer entries or paths per event",
        )
    return event


def _event_json(event: TaskEvent) -> str:
    payload = event_to_dict(event)
    payload.pop("files", None)  # files become their own Sources
    return json.dumps(payload, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def event_sources(event: TaskEvent) -> tuple[SourceDraft, ...]:
    """The Sources an event becomes: the event itself (key ``event``) and one per file (``file:<path>``)."""
    drafts = [SourceDraft(key="event", kind=event.source_kind, content=_event_json(event))]
    files = event.files if isinstance(event, (TurnStop, GitChange, Bootstrap)) else ()
    seen: set[str] = set()
    for f in files:
        path = normalize_path(f.path)
        if path in seen or not f.content.strip():
            continue
        seen.add(path)
        drafts.append(SourceDraft(key=f"file:{path}", kind="build-file", content=f.content, uri=f"file:{path}"))
    return tuple(drafts)


def normalize_path(path: str) -> str:
    """A repository path in one spelling: POSIX separators, no ``./`` prefix, no trailing slash."""
    p = path.replace("\\", "/").strip()
    while p.startswith("./"):
        p = p[2:]
    return p.rstrip("/")


def read_build_files(root: str | os.PathLike[str], names: Sequence[str] = BUILD_FILE_NAMES) -> tuple[FileSnapshot, ...]:
    """The known build files directly under ``root`` (bounded: each at most 64 KiB, UTF-8), for a Bootstrap.

    >>> read_build_files(".")  # doctest: +SKIP
    (FileSnapshot(path='pyproject.toml', content='[project]...'),)
    """
    base = Path(root)
    out = []
    seen: set[str] = set()
    for name in names:
        path = base / name
        try:
            if not path.is_file() or path.stat().st_size > MAX_FILE_BYTES:
                continue
            real = str(path.resolve()).casefold()  # justfile/Justfile on a case-insensitive filesystem
            if real in seen:
                continue
            seen.add(real)
            out.append(FileSnapshot(path=name, content=path.read_text("utf-8")))
        except (OSError, UnicodeDecodeError):
            continue
    return tuple(out)


def event_texts(event: TaskEvent) -> tuple[str, ...]:
    """Every free-text field of an event (what the secret scanner reads besides the serialized Sources)."""
    match event:
        case UserPrompt() | UserCorrection():
            return (event.text,)
        case TurnStop():
            return (event.final_report, *event.changed_paths, *(v.command for v in event.verification),
                    *(v.detail or "" for v in event.verification), *(f.content for f in event.files))  # fmt: skip
        case Handoff():
            checks = (*(v.command for v in event.verification), *(v.detail or "" for v in event.verification))
            return (event.summary, *event.open_items, *event.changed_paths, *checks)
        case GitChange():
            return (event.patch or "", *event.changed_paths, *(f.content for f in event.files))
        case ExplicitSubmit():
            return tuple(t for e in event.entries for t in (e.text, e.title or "", *e.tags))
        case Bootstrap():
            return tuple(f.content for f in event.files)
