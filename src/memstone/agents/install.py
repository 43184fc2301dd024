"""``memstone install --agent NAME``: write an agent's hook settings and MCP config, and take them out again.

Installing is idempotent (a second run changes no byte), keeps every other setting of the user, and updates
our own entries in place (a new command path replaces the old one). Our entries are recognized by content: a
hook handler whose command runs ``memstone … hook … --agent …``, and an MCP server named ``memstone``.

Uninstalling is exact. Before the first change to a file, its original bytes (or its absence) are kept in a
receipt under ``~/.memstone/installs/``; when the file still holds exactly what we wrote, uninstall restores
those bytes (or removes the file and the folders we created). When someone edited the file since, only our
entries are taken out (the user's edits are kept; JSON is re-serialized with the file's own indentation).

Files, per agent (``--user``: under the home folder; ``--project``: under the project's root). A project's files
are committed by the team, so they hold only portable commands (``memstone`` on PATH, no ``--url``); what is this
machine's (``--url``) goes to Claude Code's uncommitted ``.claude/settings.local.json`` (the others have none):

============  ==========================================  ==========================================
agent         hooks                                       MCP server
============  ==========================================  ==========================================
claude-code   ``.claude/settings.json``                   ``~/.claude.json`` (user), ``.mcp.json`` (project)
codex         ``.codex/hooks.json``                       ``.codex/config.toml`` (``[mcp_servers.memstone]``)
gemini        ``.gemini/settings.json`` (``hooks``)       ``.gemini/settings.json`` (``mcpServers``)
cursor        ``.cursor/hooks.json``                      ``.cursor/mcp.json``
============  ==========================================  ==========================================
"""

from __future__ import annotations

import contextlib
import json
import re
import shlex
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ..domain.errors import InvalidInput
from .payloads import NATIVE_EVENTS, Agent, Event
from .receipts import ConfigFile, FileChange, decode_text, install_file, read_bytes, receipts_dir, uninstall_file

Where = Literal["user", "project"]
SERVER_NAME = "memstone"
_OURS = re.compile(r"memstone\S*\s.*\bhook\s+\S+.*--agent\b")
JsonDoc = dict[str, object]


@dataclass(frozen=True, slots=True, kw_only=True)
class HookSpec:
    """One hook handler to install: the agent's event, our event, and extra handler fields."""

    native: str
    event: Event
    extra: tuple[tuple[str, object], ...] = ()


HOOKS: dict[Agent, tuple[HookSpec, ...]] = {
    "claude-code": (
        HookSpec(native="SessionStart", event="session-start", extra=(("timeout", 10),)),
        HookSpec(native="UserPromptSubmit", event="user-prompt-submit", extra=(("timeout", 10),)),
        HookSpec(native="Stop", event="stop", extra=(("timeout", 15), ("async", True))),
        HookSpec(native="PreCompact", event="pre-compact", extra=(("timeout", 5),)),
    ),
    "codex": (
        HookSpec(
            native="SessionStart",
            event="session-start",
            extra=(("timeout", 10), ("statusMessage", "Loading memstone memories")),
        ),
        HookSpec(native="UserPromptSubmit", event="user-prompt-submit", extra=(("timeout", 10),)),
        HookSpec(native="Stop", event="stop", extra=(("timeout", 15),)),
        HookSpec(native="PreCompact", event="pre-compact", extra=(("timeout", 5),)),
    ),
    "gemini": (  # Gemini timeouts are milliseconds
        HookSpec(native="SessionStart", event="session-start", extra=(("timeout", 10000),)),
        HookSpec(native="BeforeAgent", event="user-prompt-submit", extra=(("timeout", 10000),)),
        HookSpec(native="AfterAgent", event="stop", extra=(("timeout", 15000),)),
        HookSpec(native="PreCompress", event="pre-compact", extra=(("timeout", 5000),)),
    ),
    "cursor": (  # Cursor has no compaction hook; its sessionStart context is re-sent with every request
        HookSpec(native="sessionStart", event="session-start"),
        HookSpec(native="beforeSubmitPrompt", event="user-prompt-submit"),
        HookSpec(native="afterAgentResponse", event="stop"),
    ),
}
for _agent, _specs in HOOKS.items():  # the table above and payloads.NATIVE_EVENTS must agree
    assert all(NATIVE_EVENTS[_agent][s.event] == s.native for s in _specs), _agent


@dataclass(frozen=True, slots=True, kw_only=True)
class Launcher:
    """How an agent starts memstone: the program and the arguments before the subcommand."""

    program: str
    prefix: tuple[str, ...] = ()

    @classmethod
    def current(cls, *, url: str | None = None, command: str | None = None) -> Launcher:
        """The memstone that is running now (its absolute path), or ``command`` (e.g. ``memstone`` on PATH)."""
        extra: tuple[str, ...] = ("--url", url) if url else ()
        if command:
            parts = shlex.split(command)
            if not parts:
                raise InvalidInput("--command is empty")
            return cls(program=parts[0], prefix=(*parts[1:], *extra))
        argv0 = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
        if argv0 is not None and argv0.name in ("memstone", "memstone.exe") and argv0.exists():
            return cls(program=str(argv0.resolve()), prefix=extra)
        return cls(program=sys.executable, prefix=("-m", "memstone", *extra))

    @classmethod
    def portable(cls, *, command: str | None = None) -> Launcher:
        """What a file a team commits may hold: ``memstone`` on PATH (or ``command``), never a path or ``--url``."""
        parts = shlex.split(command) if command else ["memstone"]
        if not parts:
            raise InvalidInput("--command is empty")
        return cls(program=parts[0], prefix=tuple(parts[1:]))

    def argv(self, *args: str) -> list[str]:
        return [self.program, *self.prefix, *args]

    def shell(self, *args: str) -> str:
        return " ".join(shlex.quote(a) for a in self.argv(*args))


# ------------------------------------------------------------------------------------------------ JSON edits
def _is_ours(handler: object) -> bool:
    command = handler.get("command") if isinstance(handler, dict) else None
    return isinstance(command, str) and _OURS.search(command) is not None


def _handler(agent: Agent, spec: HookSpec, launcher: Launcher) -> JsonDoc:
    command = launcher.shell("hook", spec.event, "--agent", agent)
    if agent == "cursor":
        return {"command": command, **dict(spec.extra)}
    base: JsonDoc = {"type": "command", "command": command}
    if agent == "gemini":
        base = {"name": f"memstone-{spec.event}", **base}
    return {**base, **dict(spec.extra)}


def _obj(doc: JsonDoc, key: str, where: str) -> JsonDoc:
    value = doc.setdefault(key, {})
    if not isinstance(value, dict):
        raise InvalidInput(f"{where}: '{key}' is not an object; fix it by hand, memstone changed nothing")
    return value


def _list(doc: JsonDoc, key: str, where: str) -> list[object]:
    value = doc.setdefault(key, [])
    if not isinstance(value, list):
        raise InvalidInput(f"{where}: '{key}' is not a list; fix it by hand, memstone changed nothing")
    return value


def _handlers_of(agent: Agent, groups: list[object]) -> list[list[object]]:
    """The handler lists under one event: Cursor lists handlers directly, the others nest them in groups."""
    if agent == "cursor":
        return [groups]
    out = []
    for group in groups:
        inner = group.get("hooks") if isinstance(group, dict) else None
        if isinstance(inner, list):
            out.append(inner)
    return out


def add_hooks(doc: JsonDoc, agent: Agent, launcher: Launcher, where: str) -> None:
    """Put our handler under each event: replace the first of ours in place, else append a new group."""
    if agent == "cursor" and not doc:
        doc["version"] = 1
    hooks = _obj(doc, "hooks", where)
    for spec in HOOKS[agent]:
        wanted = _handler(agent, spec, launcher)
        groups = _list(hooks, spec.native, f"{where}: hooks")
        placed = False
        for handlers in _handlers_of(agent, groups):
            for i, h in enumerate(list(handlers)):
                if _is_ours(h) and not placed:
                    handlers[i] = wanted
                    placed = True
        if not placed:
            groups.append(wanted if agent == "cursor" else {"hooks": [wanted]})


def remove_hooks(doc: JsonDoc, agent: Agent) -> None:
    """Take out our handlers; drop the groups, event lists and ``hooks`` object that this leaves empty."""
    hooks = doc.get("hooks")
    if not isinstance(hooks, dict):
        return
    for native in [s.native for s in HOOKS[agent]]:
        groups = hooks.get(native)
        if not isinstance(groups, list):
            continue
        if agent == "cursor":
            kept = [h for h in groups if not _is_ours(h)]
        else:
            kept = []
            for group in groups:
                inner = group.get("hooks") if isinstance(group, dict) else None
                if isinstance(group, dict) and isinstance(inner, list) and any(_is_ours(h) for h in inner):
                    rest = [h for h in inner if not _is_ours(h)]
                    if rest:
                        kept.append({**group, "hooks": rest})
                    continue
                kept.append(group)
        if len(kept) == len(groups) and kept == groups:
            continue
        if kept:
            hooks[native] = kept
        else:
            del hooks[native]
    if not hooks:
        del doc["hooks"]
    if agent == "cursor" and set(doc) == {"version"}:
        doc.clear()


def has_hooks(doc: JsonDoc, agent: Agent) -> list[str]:
    """The agent events that carry one of our handlers."""
    hooks = doc.get("hooks")
    found: list[str] = []
    if not isinstance(hooks, dict):
        return found
    for spec in HOOKS[agent]:
        groups = hooks.get(spec.native)
        if not isinstance(groups, list):
            continue
        if any(_is_ours(h) for handlers in _handlers_of(agent, groups) for h in handlers):
            found.append(spec.native)
    return found


def mcp_entry(launcher: Launcher) -> JsonDoc:
    return {"command": launcher.program, "args": [*launcher.prefix, "mcp"]}


def add_mcp(doc: JsonDoc, launcher: Launcher, where: str) -> None:
    servers = _obj(doc, "mcpServers", where)
    servers[SERVER_NAME] = mcp_entry(launcher)


def remove_mcp(doc: JsonDoc) -> None:
    servers = doc.get("mcpServers")
    if isinstance(servers, dict) and SERVER_NAME in servers:
        del servers[SERVER_NAME]
        if not servers:
            del doc["mcpServers"]


def has_mcp(doc: JsonDoc) -> bool:
    servers = doc.get("mcpServers")
    return isinstance(servers, dict) and SERVER_NAME in servers


def _indent(text: str) -> str | int:
    """The file's own indentation (a tab, or the first indented line's spaces); 2 for a new file."""
    m = re.search(r"\n([ \t]+)\S", text)
    if m is None:
        return 2
    ws = m.group(1)
    return "\t" if ws.startswith("\t") else len(ws)


def _load_json(text: str | None, where: str) -> JsonDoc:
    if text is None or not text.strip():
        return {}
    try:
        doc = json.loads(text)
    except ValueError as exc:
        raise InvalidInput(
            f"{where} is not valid JSON ({exc})", hint="fix the file (comments are not allowed); nothing was changed"
        ) from exc
    if not isinstance(doc, dict):
        raise InvalidInput(f"{where} does not hold a JSON object; nothing was changed")
    return doc


def _dump_json(doc: JsonDoc, original: str | None) -> str | None:
    """The document in the original's style; None when it is empty (the file should not exist)."""
    if not doc:
        return None
    indent = _indent(original) if original else 2
    newline = "\n" if original is None or original.endswith("\n") else ""
    text = json.dumps(doc, indent=indent, ensure_ascii=False) + newline
    return text.replace("\n", "\r\n") if original and "\r\n" in original else text


# ------------------------------------------------------------------------------------------------ TOML (Codex)
_TOML_HEADER = re.compile(r'^\[\s*mcp_servers\s*\.\s*(?:memstone|"memstone")\s*\]\s*(?:#.*)?$', re.M)
_ANY_HEADER = re.compile(r"^\s*\[", re.M)


def _toml_string(value: str) -> str:
    return json.dumps(value)  # JSON string escapes are valid TOML basic-string escapes


def toml_block(launcher: Launcher) -> str:
    args = ", ".join(_toml_string(a) for a in (*launcher.prefix, "mcp"))
    return (
        f"[mcp_servers.{SERVER_NAME}]\n"
        f"command = {_toml_string(launcher.program)}\n"
        f"args = [{args}]\n"
        "startup_timeout_sec = 30\n"
    )


def _toml_span(text: str) -> tuple[int, int] | None:
    """Where our ``[mcp_servers.memstone]`` table starts and ends (up to the next table header)."""
    m = _TOML_HEADER.search(text)
    if m is None:
        return None
    nxt = _ANY_HEADER.search(text, m.end())
    return m.start(), nxt.start() if nxt else len(text)


def toml_add(text: str | None, launcher: Launcher) -> str:
    block = toml_block(launcher)
    current = text or ""
    span = _toml_span(current)
    if span is not None:
        start, end = span
        tail = current[end:]
        body = block if not tail else block + "\n"
        return current[:start] + body + tail
    if not current:
        return block
    sep = "" if current.endswith("\n") else "\n"
    return current + sep + "\n" + block


def toml_remove(text: str) -> str:
    span = _toml_span(text)
    if span is None:
        return text
    start, end = span
    head, tail = text[:start], text[end:]
    if not tail and head.endswith("\n\n"):
        head = head[:-1]
    return head + tail


# ------------------------------------------------------------------------------------------------ files
def _json_file(path: Path, what: str, edits: Sequence[tuple[str, Launcher, Agent]]) -> ConfigFile:
    where = str(path)

    def add(text: str | None) -> str | None:
        doc = _load_json(text, where)
        for kind, launcher, agent in edits:
            if kind == "hooks":
                add_hooks(doc, agent, launcher, where)
            else:
                add_mcp(doc, launcher, where)
        if text is not None and _load_json(text, where) == doc:
            return text  # already installed exactly: not one byte changes
        return _dump_json(doc, text)

    def remove(text: str) -> str | None:
        doc = _load_json(text, where)
        before = json.loads(json.dumps(doc))
        for kind, _, agent in edits:
            if kind == "hooks":
                remove_hooks(doc, agent)
            else:
                remove_mcp(doc)
        return text if doc == before else _dump_json(doc, text)

    def present(text: str) -> bool:
        try:
            doc = _load_json(text, where)
        except InvalidInput:
            return False
        return all(has_hooks(doc, agent) if kind == "hooks" else has_mcp(doc) for kind, _, agent in edits)

    return ConfigFile(path=path, what=what, add=add, remove=remove, present=present)


def _env_file(path: Path, what: str, env: Mapping[str, str]) -> ConfigFile:
    """A settings file's ``env`` object carrying ``env`` (Claude Code's ``settings.local.json``)."""
    where = str(path)

    def add(text: str | None) -> str | None:
        doc = _load_json(text, where)
        _obj(doc, "env", where).update(env)
        return text if text is not None and _load_json(text, where) == doc else _dump_json(doc, text)

    def remove(text: str) -> str | None:
        doc = _load_json(text, where)
        values = doc.get("env")
        ours = [k for k, v in env.items() if isinstance(values, dict) and k in values and v in ("", values[k])]
        if not isinstance(values, dict) or not ours:
            return text
        for k in ours:  # an empty value (an uninstall without --url) takes the key whatever it holds
            del values[k]
        if not values:
            del doc["env"]
        return _dump_json(doc, text)

    def present(text: str) -> bool:
        try:
            values = _load_json(text, where).get("env")
        except InvalidInput:
            return False
        return isinstance(values, dict) and all(k in values and v in ("", values[k]) for k, v in env.items())

    return ConfigFile(path=path, what=what, add=add, remove=remove, present=present)


def _toml_file(path: Path, what: str, launcher: Launcher) -> ConfigFile:
    return ConfigFile(
        path=path,
        what=what,
        add=lambda text: toml_add(text, launcher),
        remove=lambda text: toml_remove(text) or None,
        present=lambda text: _toml_span(text) is not None,
    )


def project_root_of(cwd: Path) -> Path:
    """The Git work tree of ``cwd`` (``cwd`` itself outside Git): where ``--project`` writes."""
    for candidate in (cwd, *cwd.parents):
        if (candidate / ".git").exists():
            return candidate
    return cwd


def config_files(
    agent: Agent,
    where: Where,
    *,
    home: Path,
    project: Path,
    launcher: Launcher,
    machine_env: Mapping[str, str] | None = None,
) -> list[ConfigFile]:
    """The files ``install --agent`` writes for ``agent`` at ``where``.

    ``machine_env`` (e.g. ``MEMSTONE_URL``) is this machine's, not the team's: in a project it goes only to the
    agent's local, uncommitted settings file (Claude Code's ``.claude/settings.local.json``).
    """
    base = home if where == "user" else project
    if machine_env and any(machine_env.values()) and where == "project" and agent != "claude-code":
        raise InvalidInput(
            f"{agent} has no local settings file in a project: {', '.join(machine_env)} would be committed",
            hint="drop --url and set MEMSTONE_URL in the agent's environment, or install with --user",
        )
    match agent:
        case "claude-code":
            mcp_path = home / ".claude.json" if where == "user" else project / ".mcp.json"
            files = [
                _json_file(base / ".claude" / "settings.json", "hooks", [("hooks", launcher, agent)]),
                _json_file(mcp_path, "MCP server", [("mcp", launcher, agent)]),
            ]
            if machine_env is not None and where == "project":
                local = base / ".claude" / "settings.local.json"
                files.append(_env_file(local, "this machine's settings (not committed)", machine_env))
            return files
        case "codex":
            return [
                _json_file(base / ".codex" / "hooks.json", "hooks", [("hooks", launcher, agent)]),
                _toml_file(base / ".codex" / "config.toml", "MCP server", launcher),
            ]
        case "gemini":
            edits = [("hooks", launcher, agent), ("mcp", launcher, agent)]
            return [_json_file(base / ".gemini" / "settings.json", "hooks and MCP server", edits)]
        case "cursor":
            return [
                _json_file(base / ".cursor" / "hooks.json", "hooks", [("hooks", launcher, agent)]),
                _json_file(base / ".cursor" / "mcp.json", "MCP server", [("mcp", launcher, agent)]),
            ]


def install(
    agent: Agent,
    where: Where,
    *,
    home: Path,
    project: Path,
    launcher: Launcher,
    uninstall: bool = False,
    machine_env: Mapping[str, str] | None = None,
) -> list[FileChange]:
    """Install (or with ``uninstall=True`` remove) memstone's hooks and MCP server for one agent.

    >>> install("codex", "user", home=Path.home(), project=Path.cwd(), launcher=Launcher.current())  # doctest: +SKIP
    """
    receipts = receipts_dir(home)
    files = config_files(agent, where, home=home, project=project, launcher=launcher, machine_env=machine_env)
    # Parse every file before touching any, so a broken file changes nothing at all.
    for cfg in files:
        data = read_bytes(cfg.path)
        if data is not None:
            text = decode_text(data, cfg.path)
            if uninstall:
                cfg.remove(text)
            else:
                cfg.add(text)
    if not uninstall:
        return [install_file(cfg, receipts) for cfg in files]
    # Reverse order: a folder install created for the first file is removed with it, after the others.
    changes = [uninstall_file(cfg, receipts) for cfg in reversed(files)][::-1]
    with contextlib.suppress(OSError):
        receipts.rmdir()
    return changes


def status(agent: Agent, where: Where, *, home: Path, project: Path) -> list[tuple[Path, str, bool]]:
    """Which of the agent's files carry memstone's part: (path, what, installed)."""
    out = []
    for cfg in config_files(agent, where, home=home, project=project, launcher=Launcher(program="memstone")):
        data = read_bytes(cfg.path)
        try:
            present = data is not None and cfg.present(data.decode("utf-8"))
        except UnicodeDecodeError:
            present = False
        out.append((cfg.path, cfg.what, present))
    return out


__all__ = [
    "HOOKS",
    "SERVER_NAME",
    "ConfigFile",
    "FileChange",
    "HookSpec",
    "Launcher",
    "Where",
    "config_files",
    "install",
    "project_root_of",
    "receipts_dir",
    "status",
    "toml_add",
    "toml_block",
    "toml_remove",
]
