"""Capture settings: the mode per scope (``auto`` / ``review`` / ``off``) and the optional model extractor.

Settings live in the memory store itself (the ``capture`` row of its ``store_settings`` table, on every engine):
:func:`load_capture_settings` / :func:`save_capture_settings`, and ``memstone capture-settings`` on the command
line. The API key of the model extractor is never stored; the settings name the environment variable instead.
(An old store's ``<db>.capture.json`` beside the database is moved in when the store opens.)

Mode precedence for a write to scope ``S``: the ``mode=`` argument of :func:`~memstone.capture.capture`, then
``modes[S]``, then ``default_mode`` (``auto``). ``off`` stores nothing at all, not even the event's Source.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from ..domain.errors import InvalidInput
from ..domain.fields import FieldDict
from .store import SETTINGS_NAME, capture_store_of

if TYPE_CHECKING:
    from ..service import MemoryService

__all__ = ["CaptureMode", "CaptureSettings", "ExtractorSettings", "load_capture_settings", "save_capture_settings"]

CaptureMode = Literal["auto", "review", "off"]
RecordSources = Literal["always", "when_used"]
MODES: tuple[CaptureMode, ...] = ("auto", "review", "off")
DEFAULT_USER_SCOPE = "memstone://users/anonymous"
SETTINGS_VERSION = 1


def _mode(value: object, where: str) -> CaptureMode:
    if value not in MODES:
        raise InvalidInput(f"{where}: capture mode must be auto, review or off, got {value!r}")
    return value


@dataclass(frozen=True, slots=True, kw_only=True)
class ExtractorSettings(FieldDict):
    """Where the optional model extractor is (an OpenAI-compatible ``/chat/completions`` server)."""

    base_url: str
    model: str
    api_key_env: str | None = None  # the *name* of the environment variable that holds the key
    timeout: float = 30.0
    max_candidates: int = 5


@dataclass(frozen=True, slots=True, kw_only=True)
class CaptureSettings:
    """How capture behaves, per scope. Immutable; ``with_mode`` returns a changed copy.

    >>> CaptureSettings().with_mode("memstone://orgs/acme/projects/api", "review").mode_for("memstone://orgs/acme/projects/api")
    'review'
    """

    default_mode: CaptureMode = "auto"
    modes: Mapping[str, CaptureMode] = field(default_factory=dict)
    record_sources: RecordSources = "always"  # "when_used": only Sources that back a write, a queue item or a flag
    working_notes: bool = True  # the RFC's mechanical working_note from turn stops and handoffs
    user_scope: str = DEFAULT_USER_SCOPE  # where cross-project preferences go
    extractor: ExtractorSettings | None = None  # None: no model (the default)

    def mode_for(self, scope: str | None) -> CaptureMode:
        """The configured mode of ``scope`` (the default mode for an unknown or absent scope)."""
        if scope is not None and scope in self.modes:
            return self.modes[scope]
        return self.default_mode

    def with_mode(self, scope: str | None, mode: CaptureMode) -> CaptureSettings:
        """A copy with ``scope`` set to ``mode`` (``scope=None`` sets the default mode)."""
        checked = _mode(mode, "with_mode")
        if scope is None:
            return replace(self, default_mode=checked)
        return replace(self, modes={**self.modes, scope: checked})

    def to_dict(self) -> dict[str, object]:
        return {
            "version": SETTINGS_VERSION,
            "default_mode": self.default_mode,
            "modes": dict(sorted(self.modes.items())),
            "record_sources": self.record_sources,
            "working_notes": self.working_notes,
            "user_scope": self.user_scope,
            "extractor": self.extractor.to_dict() if self.extractor else None,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, object], *, where: str = "capture settings") -> CaptureSettings:
        """Settings from JSON-like data; unknown keys and bad values are refused by name."""
        allowed = {"version", "default_mode", "modes", "record_sources", "working_notes", "user_scope", "extractor"}
        unknown = sorted(set(data) - allowed)
        if unknown:
            raise InvalidInput(f"{where}: unknown setting(s) {', '.join(unknown)}")
        modes_raw = data.get("modes") or {}
        if not isinstance(modes_raw, Mapping):
            raise InvalidInput(f"{where}: 'modes' must map scope URIs to modes")
        modes = {str(k): _mode(v, f"{where}: modes[{k!r}]") for k, v in modes_raw.items()}
        record = data.get("record_sources", "always")
        if record not in ("always", "when_used"):
            raise InvalidInput(f"{where}: record_sources must be always or when_used, got {record!r}")
        notes = data.get("working_notes", True)
        if not isinstance(notes, bool):
            raise InvalidInput(f"{where}: working_notes must be true or false")
        user_scope = data.get("user_scope", DEFAULT_USER_SCOPE)
        if not isinstance(user_scope, str) or not user_scope:
            raise InvalidInput(f"{where}: user_scope must be a scope URI")
        ext = data.get("extractor")
        extractor = None
        if ext is not None:
            if not isinstance(ext, Mapping) or not isinstance(ext.get("base_url"), str) or not ext.get("model"):
                raise InvalidInput(f"{where}: extractor needs base_url and model")
            key_env = ext.get("api_key_env")
            timeout = ext.get("timeout", 30.0)
            max_candidates = ext.get("max_candidates", 5)
            if not isinstance(timeout, (int, float)) or isinstance(timeout, bool) or timeout <= 0:
                raise InvalidInput(f"{where}: extractor.timeout must be a positive number")
            if not isinstance(max_candidates, int) or isinstance(max_candidates, bool) or max_candidates < 1:
                raise InvalidInput(f"{where}: extractor.max_candidates must be a positive integer")
            extractor = ExtractorSettings(
                base_url=str(ext["base_url"]),
                model=str(ext["model"]),
                api_key_env=str(key_env) if key_env else None,
                timeout=float(timeout),
                max_candidates=max_candidates,
            )
        return cls(
            default_mode=_mode(data.get("default_mode", "auto"), f"{where}: default_mode"),
            modes=modes,
            record_sources=record,
            working_notes=notes,
            user_scope=user_scope,
            extractor=extractor,
        )

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> CaptureSettings:
        """Read settings from ``path``; a missing file means the defaults."""
        p = Path(path)
        try:
            raw = p.read_text("utf-8")
        except FileNotFoundError:
            return cls()
        try:
            data = json.loads(raw)
        except ValueError as exc:
            raise InvalidInput(f"{p} is not valid JSON: {exc}", hint="fix or delete the file") from exc
        if not isinstance(data, dict):
            raise InvalidInput(f"{p} must hold a JSON object")
        return cls.from_dict(data, where=str(p))

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write settings to ``path`` atomically (a temporary file renamed over it)."""
        write_json_atomic(Path(path), self.to_dict())


def write_json_atomic(path: Path, data: object) -> None:
    """Write JSON to a temporary file in the same directory, then rename it over ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(data, f, ensure_ascii=False, indent=2, sort_keys=True)
            f.write("\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


async def load_capture_settings(svc: MemoryService) -> CaptureSettings:
    """The capture settings kept in a service's store (the defaults when none were saved)."""
    data = await capture_store_of(svc.backend).setting(SETTINGS_NAME)
    return CaptureSettings() if data is None else CaptureSettings.from_dict(data, where="the store's capture settings")


async def save_capture_settings(svc: MemoryService, settings: CaptureSettings) -> None:
    """Keep ``settings`` in a service's store (every process using the store sees them from its next event)."""
    await capture_store_of(svc.backend).put_setting(SETTINGS_NAME, settings.to_dict(), _now())


def _now() -> str:
    import datetime as _dt

    return _dt.datetime.now(_dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
