"""A small YAML-subset reader for Markdown frontmatter (basic-memory, Cursor ``.mdc``, the sync folder).

It reads what those files use and nothing more: ``key: scalar``, ``key: [a, "b"]``, ``key:`` followed by
``- item`` lines, quoted strings (a JSON string is a valid YAML double-quoted scalar), ``true``/``false``/``null``,
integers and ``#`` comment lines. Anything else is refused with the file and line, never guessed.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from ..domain.errors import InvalidInput

Value = str | int | bool | None | list[str]
_KEY = re.compile(r"^([A-Za-z_][A-Za-z0-9_\-]*)\s*:(.*)$")


@dataclass(frozen=True, slots=True, kw_only=True)
class Frontmatter:
    """The parsed mapping, the body after it, and the 1-based line the body starts on."""

    data: dict[str, Value]
    body: str
    body_line: int
    present: bool


def split_frontmatter(text: str, *, where: str) -> Frontmatter:
    """Split ``---`` frontmatter from a Markdown document (no frontmatter: an empty mapping)."""
    lines = text.split("\n")
    if not lines or lines[0].strip() != "---":
        return Frontmatter(data={}, body=text, body_line=1, present=False)
    for end in range(1, len(lines)):
        if lines[end].strip() in ("---", "..."):
            data = parse_mapping(lines[1:end], where=where, first_line=2)
            return Frontmatter(data=data, body="\n".join(lines[end + 1 :]), body_line=end + 2, present=True)
    raise InvalidInput(f"{where}:1: the frontmatter opened here is never closed", hint="end it with a '---' line")


def parse_mapping(lines: list[str], *, where: str, first_line: int) -> dict[str, Value]:
    out: dict[str, Value] = {}
    current: str | None = None
    for offset, raw in enumerate(lines):
        number = first_line + offset
        line = raw.rstrip()
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if stripped.startswith("- ") or stripped == "-":
            if current is None or not isinstance(out.get(current), list):
                raise InvalidInput(f"{where}:{number}: a list item with no key above it")
            items = out[current]
            assert isinstance(items, list)
            items.append(_text(scalar(stripped[1:].strip(), where=where, line=number)))
            continue
        if line[:1].isspace():
            raise InvalidInput(f"{where}:{number}: unexpected indentation", hint="frontmatter here is flat key: value")
        found = _KEY.match(line)
        if found is None:
            raise InvalidInput(f"{where}:{number}: expected 'key: value', got {line[:60]!r}")
        key, rest = found.group(1), found.group(2).strip()
        if key in out:
            raise InvalidInput(f"{where}:{number}: key {key!r} appears twice")
        current = key
        if not rest:
            out[key] = []  # a block list may follow; an empty value stays an empty list
        elif rest.startswith("["):
            out[key] = flow_list(rest, where=where, line=number)
        else:
            out[key] = scalar(rest, where=where, line=number)
    return out


def flow_list(text: str, *, where: str, line: int) -> list[str]:
    if not text.endswith("]"):
        raise InvalidInput(f"{where}:{line}: a '[' list must close on the same line")
    inner = text[1:-1].strip()
    if not inner:
        return []
    items: list[str] = []
    i = 0
    while i < len(inner):
        if inner[i] in "\"'":
            quote = inner[i]
            end = inner.find(quote, i + 1)
            while quote == '"' and end > 0 and inner[end - 1] == "\\":
                end = inner.find(quote, end + 1)
            if end < 0:
                raise InvalidInput(f"{where}:{line}: an unterminated string in a list")
            items.append(_text(scalar(inner[i : end + 1], where=where, line=line)))
            i = end + 1
            while i < len(inner) and inner[i] in " ,":
                i += 1
        else:
            end = inner.find(",", i)
            end = len(inner) if end < 0 else end
            items.append(_text(scalar(inner[i:end].strip(), where=where, line=line)))
            i = end + 1
            while i < len(inner) and inner[i] == " ":
                i += 1
    return items


def scalar(text: str, *, where: str, line: int) -> str | int | bool | None:
    if text.startswith('"'):
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InvalidInput(f"{where}:{line}: a bad double-quoted string: {exc.msg}") from exc
        if not isinstance(value, str):
            raise InvalidInput(f"{where}:{line}: expected one quoted string")
        return value
    if text.startswith("'"):
        if len(text) < 2 or not text.endswith("'"):
            raise InvalidInput(f"{where}:{line}: an unterminated single-quoted string")
        return text[1:-1].replace("''", "'")
    if " #" in text:
        text = text[: text.index(" #")].rstrip()
    lowered = text.lower()
    if lowered in ("true", "yes"):
        return True
    if lowered in ("false", "no"):
        return False
    if lowered in ("null", "~", ""):
        return None
    if re.fullmatch(r"-?\d+", text):
        return int(text)
    return text


def _text(value: str | int | bool | None) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def quote(value: str) -> str:
    """A YAML double-quoted scalar (JSON string syntax)."""
    return json.dumps(value, ensure_ascii=False)


__all__ = ["Frontmatter", "Value", "parse_mapping", "quote", "split_frontmatter"]
