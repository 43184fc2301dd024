"""Agent rule files: CLAUDE.md (with ``@path`` imports), AGENTS.md, GEMINI.md, Cursor ``.mdc``, Copilot.

Each top-level bullet of a section becomes one entry; the prose (and code) of a section becomes one more. The
title is the section's heading, the kind and flags come from the wording (``wording.py``), and the slug is the
rule's first words plus a hash of the file, heading and those words, so a re-import finds the same entry when a
rule's later words are edited or rules are reordered. A block written by ``memstone render`` is skipped: its
entries already live in the store.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ..domain.errors import InvalidInput
from .files import read_utf8
from .frontmatter import split_frontmatter
from .model import BLOCK_BEGIN, BLOCK_END, Draft, split_long, stable_slug
from .wording import classify

_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_BULLET = re.compile(r"^([-*+]|\d+[.)])\s+(.*)$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_IMPORT = re.compile(r"(?<![\w@`/])@((?:~/|\.{1,2}/|/)?[\w.\-]+(?:/[\w.\-]+)*)")
_CODE_SPAN = re.compile(r"`[^`]*`")
MAX_IMPORT_DEPTH = 5  # Claude Code follows @imports five hops deep
SKIP_DIRS = {".git", "node_modules", ".venv", "venv", "__pycache__", "dist", "build", ".tox"}

RULE_FORMATS = ("claude-md", "agents-md", "gemini-md", "cursor", "copilot")
_FILE_NAMES = {
    "claude-md": ("CLAUDE.md", "CLAUDE.local.md", ".claude/CLAUDE.md"),
    "agents-md": ("AGENTS.md",),
    "gemini-md": ("GEMINI.md",),
    "copilot": (".github/copilot-instructions.md",),
}


@dataclass(frozen=True, slots=True, kw_only=True)
class Unit:
    heading: str | None
    text: str
    first: int
    last: int
    bullet: bool


def rule_files(fmt: str, path: Path) -> list[Path]:
    """The files a PATH names for a format: the file itself, or the format's files in the directory."""
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise InvalidInput(f"{path}: no such file or directory")
    if fmt == "cursor":
        rules = path / ".cursor" / "rules" if (path / ".cursor" / "rules").is_dir() else path
        found = sorted(p for p in rules.rglob("*.mdc") if p.is_file())
        legacy = path / ".cursorrules"
        return found + ([legacy] if legacy.is_file() else [])
    if fmt == "agents-md":
        # AGENTS.md files nest: one in a subdirectory applies to work inside it.
        out: list[Path] = []
        for root, dirs, files in os.walk(path):
            dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
            out.extend(Path(root) / f for f in sorted(files) if f == "AGENTS.md")
        return out
    return [path / name for name in _FILE_NAMES[fmt] if (path / name).is_file()]


def parse_rules(fmt: str, path: Path) -> list[Draft]:
    """Every draft of the rule files PATH names (a file, or a project directory)."""
    path = path.expanduser().resolve()
    files = rule_files(fmt, path)
    if not files:
        names = ", ".join(_FILE_NAMES.get(fmt, (".cursor/rules/*.mdc",)))
        raise InvalidInput(f"{path}: no {fmt} files here", hint=f"point at the file, or a directory with {names}")
    root = path if path.is_dir() else path.parent
    drafts: list[Draft] = []
    seen: set[Path] = set()
    for file in files:
        drafts.extend(_parse_file(fmt, file, root=root, seen=seen, depth=0, imported_by=None))
    return drafts


def _parse_file(
    fmt: str, file: Path, *, root: Path, seen: set[Path], depth: int, imported_by: str | None
) -> list[Draft]:
    if file in seen:
        return []  # an import cycle, or a file imported twice: its rules are read once
    seen.add(file)
    try:
        text = read_utf8(file)
    except OSError as exc:
        raise InvalidInput(f"{file}: cannot be read ({exc.strerror})") from exc
    where = str(file)
    every_session = True
    tags = [fmt]
    if fmt == "cursor":
        fm = split_frontmatter(text, where=where)
        always = fm.data.get("alwaysApply", False)
        if not isinstance(always, bool):
            raise InvalidInput(f"{where}:1: alwaysApply must be true or false, got {always!r}")
        globs = fm.data.get("globs")
        every_session = always
        tags.append(f"cursor-rule:{file.stem}"[:64])
        if isinstance(globs, str) and globs.strip():
            tags.extend(f"glob:{g.strip()}"[:64] for g in globs.split(",") if g.strip())
        elif isinstance(globs, list):
            tags.extend(f"glob:{g.strip()}"[:64] for g in globs if g.strip())
        body, offset = fm.body, fm.body_line - 1
    else:
        body, offset = text, 0
        if fmt == "agents-md" and file.parent != root:
            every_session = False  # a nested AGENTS.md applies only to work in its directory
            tags.append(f"path:{file.parent.relative_to(root).as_posix()}"[:64])
    try:
        rel = file.relative_to(root).as_posix()
    except ValueError:
        rel = file.as_posix()
    out: list[Draft] = []
    counts: dict[str, int] = {}
    for unit in _units(body, offset, where=where):
        if fmt in ("claude-md", "gemini-md") and not _IMPORT.sub("", unit.text).strip(" \t\n-*"):
            continue  # a line that only imports other files: their rules are read below
        reading = classify(unit.text, heading=unit.heading, every_session=every_session)
        lead = " ".join(unit.text.split()[:6])
        for chunk, first, last in split_long(unit.text, unit.first):
            key = f"{unit.heading or ''}\0{lead}"
            counts[key] = counts.get(key, 0) + 1
            excerpt = "\n".join(text.split("\n")[first - 1 : last])
            out.append(
                Draft(
                    kind=reading.kind,
                    text=chunk,
                    title=unit.heading or file.name,
                    tags=tuple(tags),
                    slug=stable_slug(lead, fmt, rel, unit.heading or "", lead, str(counts[key])),
                    important=reading.important,
                    mandatory=reading.mandatory,
                    path=str(file),
                    lines=(first, last),
                    excerpt=excerpt if excerpt.strip() else chunk,
                )
            )
    if fmt in ("claude-md", "gemini-md"):
        for target, line in _imports(body, offset):
            resolved = _resolve_import(target, file)
            if not resolved.is_file():
                raise InvalidInput(
                    f"{where}:{line}: imported file @{target} does not exist ({resolved})",
                    hint="fix the path, or put it in backticks if it is not an import",
                )
            if depth + 1 > MAX_IMPORT_DEPTH:
                raise InvalidInput(f"{where}:{line}: @{target} is more than {MAX_IMPORT_DEPTH} imports deep")
            out.extend(_parse_file(fmt, resolved, root=root, seen=seen, depth=depth + 1, imported_by=f"{where}:{line}"))
    return out


def _resolve_import(target: str, file: Path) -> Path:
    if target.startswith("~/"):
        return Path(target).expanduser().resolve()
    return (file.parent / target).resolve()


def _imports(body: str, offset: int) -> Iterator[tuple[str, int]]:
    """``@path`` imports outside code blocks and code spans, with their 1-based lines."""
    fenced = False
    in_block = False
    for i, line in enumerate(body.split("\n")):
        if line.startswith(BLOCK_BEGIN):
            in_block = True
        if in_block:
            in_block = not line.startswith(BLOCK_END)
            continue
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if fenced:
            continue
        for found in _IMPORT.finditer(_CODE_SPAN.sub("", line)):
            target = found.group(1).rstrip(".,;:)")
            if "/" in target or re.search(r"\.[A-Za-z0-9]+$", target):
                yield target, offset + i + 1


def _units(body: str, offset: int, *, where: str) -> Iterator[Unit]:
    """Sections split into top-level bullets (one unit each) and the prose between them (one unit each)."""
    heading: str | None = None
    current: list[tuple[int, str]] = []
    bullet = False
    fenced = 0  # the line of the open fence (0: none)
    in_block = False

    def flush() -> Iterator[Unit]:
        nonlocal current
        while current and not current[-1][1].strip():
            current.pop()
        if current and any(t.strip() for _, t in current):
            lines = [t for _, t in current]
            if bullet:
                found = _BULLET.match(lines[0])
                assert found is not None
                lines[0] = found.group(2)
                lines = [lines[0], *(_dedent(t) for t in lines[1:])]
            text = "\n".join(lines).strip()
            if text:
                yield Unit(heading=heading, text=text, first=current[0][0], last=current[-1][0], bullet=bullet)
        current = []

    for i, line in enumerate(body.split("\n")):
        number = offset + i + 1
        if line.startswith(BLOCK_BEGIN):
            if in_block:
                raise InvalidInput(f"{where}:{number}: a memstone block opens inside another")
            yield from flush()
            in_block = True
            continue
        if in_block:
            if line.startswith(BLOCK_END):
                in_block = False
            continue
        if line.startswith(BLOCK_END):
            raise InvalidInput(f"{where}:{number}: a memstone block closes here but never opened")
        if _FENCE.match(line):
            fenced = 0 if fenced else number
            if not current:
                bullet = False
            current.append((number, line))
            continue
        if fenced:
            current.append((number, line))
            continue
        found = _HEADING.match(line)
        if found:
            yield from flush()
            heading = found.group(2).strip() or None
            bullet = False
            continue
        if _BULLET.match(line):
            yield from flush()
            bullet = True
            current = [(number, line)]
            continue
        if bullet and line.strip() and not line[:1].isspace():
            yield from flush()  # a paragraph after a list: back to prose
            bullet = False
        if bullet and not line.strip():
            current.append((number, line))
            continue
        if not current and not line.strip():
            continue
        current.append((number, line))
    if in_block:
        raise InvalidInput(f"{where}: a memstone block is never closed", hint="restore its '<!-- memstone:end' line")
    if fenced:
        raise InvalidInput(f"{where}:{fenced}: the code fence opened here is never closed")
    yield from flush()


def _dedent(line: str) -> str:
    return line[2:] if line.startswith("  ") else line.lstrip() if line.startswith("\t") else line


__all__ = ["RULE_FORMATS", "parse_rules", "rule_files"]
