"""memstone's settings, read in one place: every ``MEMSTONE_*`` variable is read here and nowhere else.

Precedence, per setting: argument (a CLI option, a keyword) > environment (``MEMSTONE_…``) > file (the TOML file
``MEMSTONE_CONFIG`` names, default ``~/.memstone/config.toml``) > derived (the scopes of the working directory)
> default. A composition root (the CLI group, ``memstone hook``, ``open_service``, ``memstone serve``) calls
:meth:`Config.load` once and passes the values down; ``memstone config show`` prints each with its source.

Standard library only (no pydantic): ``memstone hook`` runs on every agent prompt and must start fast.

=================================  ===================================================================
``MEMSTONE_URL``                   the store (default ``sqlite:///~/.memstone/memstone.db``), or a team server
                                   (``https://HOST:PORT``: the CLI and ``memstone mcp`` use its HTTP API)
``MEMSTONE_TOKEN``                 the API token sent to a team server (``memstone token create`` there)
``MEMSTONE_SCOPE``                 the scope of the CLI's and the Explorer's default Memory
``MEMSTONE_PROJECT_SCOPE``         the project scope (default: derived from the working directory)
``MEMSTONE_USER_SCOPE``            the user scope (default ``memstone://users/anonymous``)
``MEMSTONE_AUTHOR``                the author recorded on writes
``MEMSTONE_EMBEDDING``             the embedding profile (``none``: full-text only; default: the store's)
``MEMSTONE_HOST``/``_PORT``/``_AUTH``  ``memstone serve``'s address, port and access mode
``MEMSTONE_HOOK_BUDGET_TOKENS``    session-start injection budget (default 1500 tokens)
``MEMSTONE_HOOK_PROMPT_TOKENS``    per-prompt injection budget (default 400 tokens; 0 turns it off)
``MEMSTONE_HOOK_FOREGROUND``       ``1``: a hook on a local store captures before it answers (default: in a detached
                                   child; a team server's capture always runs after the answer)
``MEMSTONE_CONFIG``                the settings file (default ``~/.memstone/config.toml``)
=================================  ===================================================================
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from .agents.project import project_scope  # stdlib only: the project of a directory
from .domain.errors import InvalidInput
from .domain.scopes import ANONYMOUS, canonical_scope

Source = Literal["argument", "environment", "file", "derived", "default"]
DEFAULT_URL = "sqlite:///~/.memstone/memstone.db"
DEFAULT_FILE = "~/.memstone/config.toml"
CONFIG_VAR = "MEMSTONE_CONFIG"


@dataclass(frozen=True, slots=True, kw_only=True)
class Setting:
    """One known setting: its name (argument and file key), its variable, its default and what it means."""

    name: str
    env: str
    default: str | None
    help: str
    integer: bool = False
    secret: bool = False  # shown masked by ``memstone config show``


SETTINGS: tuple[Setting, ...] = (
    Setting(name="url", env="MEMSTONE_URL", default=DEFAULT_URL, help="the store URL, or a team server's https://"),
    Setting(name="token", env="MEMSTONE_TOKEN", default=None, help="API token for a team server", secret=True),
    Setting(name="scope", env="MEMSTONE_SCOPE", default=None, help="the default Memory's scope (CLI, Explorer)"),
    Setting(name="project_scope", env="MEMSTONE_PROJECT_SCOPE", default=None, help="the project scope"),
    Setting(name="user_scope", env="MEMSTONE_USER_SCOPE", default=ANONYMOUS, help="the user scope"),
    Setting(name="author", env="MEMSTONE_AUTHOR", default=None, help="the author recorded on writes"),
    Setting(name="embedding", env="MEMSTONE_EMBEDDING", default=None, help="embedding profile ('none': FTS only)"),
    Setting(name="host", env="MEMSTONE_HOST", default="127.0.0.1", help="memstone serve's bind address"),
    Setting(name="port", env="MEMSTONE_PORT", default="8765", help="memstone serve's port", integer=True),
    Setting(name="auth", env="MEMSTONE_AUTH", default=None, help="memstone serve's mode: local or token"),
    Setting(
        name="hook_budget_tokens", env="MEMSTONE_HOOK_BUDGET_TOKENS", default="1500", help="session-start budget",
        integer=True,
    ),
    Setting(
        name="hook_prompt_tokens", env="MEMSTONE_HOOK_PROMPT_TOKENS", default="400", help="per-prompt budget",
        integer=True,
    ),
    Setting(
        name="hook_foreground", env="MEMSTONE_HOOK_FOREGROUND", default="0", help="1: hooks capture in front",
        integer=True,
    ),
    Setting(
        name="hook_server", env="MEMSTONE_HOOK_SERVER", default="600",
        help="seconds the warm hook server waits for the next hook before it exits; 0: no server", integer=True,
    ),
)  # fmt: skip
BY_NAME: Mapping[str, Setting] = {s.name: s for s in SETTINGS}


@dataclass(frozen=True, slots=True, kw_only=True)
class Value:
    """A setting's value and where it came from."""

    name: str
    value: str | None
    source: Source
    origin: str  # the variable, the file, or "default"

    def to_dict(self) -> dict[str, object]:
        return {"name": self.name, "value": self.value, "source": self.source, "from": self.origin}


@dataclass(frozen=True, slots=True, kw_only=True)
class Config:
    """Every setting resolved once; pass it (or what it holds) down, never re-read the environment."""

    values: Mapping[str, Value]
    file: Path
    cwd: Path

    @classmethod
    def load(
        cls,
        arguments: Mapping[str, object | None] | None = None,
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        derive: bool = True,
    ) -> Config:
        """Resolve every setting: ``arguments`` (None values are absent) > ``env`` (default ``os.environ``) > file.

        ``derive=False`` skips reading the working directory's project (for a caller that needs no scope).

        >>> Config.load({"url": "sqlite:///m.db"}, env={}).url
        'sqlite:///m.db'
        """
        source = os.environ if env is None else env
        args = {k: v for k, v in (arguments or {}).items() if v is not None}
        for name in args:
            if name not in BY_NAME:
                raise InvalidInput(f"unknown setting {name!r}", hint=f"known: {', '.join(BY_NAME)}")
        raw_file = source.get(CONFIG_VAR) or DEFAULT_FILE
        file = Path(raw_file).expanduser()
        from_file = _read_file(file)
        values: dict[str, Value] = {}
        for s in SETTINGS:
            if s.name in args:
                value = Value(name=s.name, value=str(args[s.name]), source="argument", origin="argument")
            elif source.get(s.env):
                value = Value(name=s.name, value=source[s.env], source="environment", origin=s.env)
            elif s.name in from_file:
                value = Value(name=s.name, value=from_file[s.name], source="file", origin=str(file))
            else:
                value = Value(name=s.name, value=s.default, source="default", origin="default")
            if s.integer and value.value is not None:
                _check_int(value, s)
            values[s.name] = value
        where = Path(cwd) if cwd is not None else Path.cwd()
        if values["project_scope"].value is None and derive:
            derived = project_scope(where)
            if derived is not None:
                values["project_scope"] = Value(
                    name="project_scope", value=derived, source="derived", origin=f"the project of {where}"
                )
        if values["scope"].value is None:
            pick = values["project_scope"] if values["project_scope"].value else values["user_scope"]
            values["scope"] = Value(
                name="scope", value=pick.value, source="derived", origin=f"the {pick.name.replace('_', ' ')}"
            )
        return cls(values=values, file=file, cwd=where)

    def get(self, name: str) -> str | None:
        return self.values[name].value

    def integer(self, name: str) -> int:
        raw = self.values[name].value
        return int(raw) if raw is not None else 0

    def source(self, name: str) -> Source:
        return self.values[name].source

    @property
    def url(self) -> str:
        return self.get("url") or DEFAULT_URL

    @property
    def default_scope(self) -> str:
        """The scope a command addresses when none is named: the project of the working directory, else the user."""
        return canonical_scope(self.get("scope") or ANONYMOUS)

    @property
    def read_scopes(self) -> tuple[str, ...]:
        """The scopes a read covers by default: a pinned ``scope`` alone, else the project and the user scope."""
        if self.source("scope") != "derived":
            return (self.default_scope,)
        tiers = (self.get("project_scope"), self.get("user_scope"))
        return tuple(dict.fromkeys(canonical_scope(s) for s in tiers if s))

    def pinned_scope(self) -> str | None:
        """``scope`` when given (argument, environment or file), for the surfaces that pin a tier with it."""
        return None if self.source("scope") == "derived" else self.get("scope")

    def show(self) -> list[dict[str, object]]:
        """Each setting with its value and source (``memstone config show``)."""
        shown = []
        for s in SETTINGS:
            row = self.values[s.name].to_dict() | {"env": s.env, "help": s.help}
            if s.secret and row["value"] is not None:
                row["value"] = "********"  # a token is never printed; its source is
            shown.append(row)
        return shown


def _check_int(value: Value, setting: Setting) -> None:
    assert value.value is not None
    try:
        number = int(value.value.strip())
    except ValueError:
        raise InvalidInput(
            f"{setting.env if value.source == 'environment' else setting.name} must be an integer, got {value.value!r}",
            hint=f"set it in {value.origin}" if value.source != "default" else None,
        ) from None
    if number < 0:
        raise InvalidInput(f"{setting.name} must not be negative, got {number} (from {value.origin})")


def _read_file(path: Path) -> dict[str, str]:
    """The settings file's values (``{}`` when there is none). Unknown keys are refused by name."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise InvalidInput(f"cannot read the settings file {path}: {exc.strerror}", hint=f"check {CONFIG_VAR}") from exc
    import tomllib  # only when a file exists: the hook path stays light

    try:
        doc = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise InvalidInput(f"the settings file {path} is not valid TOML: {exc}") from exc
    out: dict[str, str] = {}
    for key, value in doc.items():
        if key not in BY_NAME:
            raise InvalidInput(f"{path}: unknown setting {key!r}", hint=f"known: {', '.join(BY_NAME)}")
        if not isinstance(value, str | int) or isinstance(value, bool):
            raise InvalidInput(f"{path}: {key} must be a string or an integer, got {type(value).__name__}")
        out[key] = str(value)
    return out


def load_config(arguments: Mapping[str, object | None] | None = None, **kw: object) -> Config:
    """Shorthand for :meth:`Config.load`."""
    return Config.load(arguments, **kw)  # type: ignore[arg-type]


__all__ = ["BY_NAME", "CONFIG_VAR", "DEFAULT_URL", "SETTINGS", "Config", "Setting", "Source", "Value", "load_config"]
