"""Import memories from where they already live: agent rule files, basic-memory, mem0, the MCP memory server.

>>> async with open_service("sqlite:///m.db") as svc:                        # doctest: +SKIP
...     result = await import_from(svc, "claude-md", "CLAUDE.md", scope="memstone://orgs/acme/projects/web")
...     print(result.count("add"), "added")

Every format runs the same pipeline: parse (a clear error naming the file and line for bad input), validate every
draft with the service's own rules before anything is written, plan against the store (``dry_run=True`` stops
here), then record each changed draft's exact input as its evidence and write one Revision per Memory through
``MemoryService.remember`` (surface ``import``). See docs/importers.md.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from ..service.settle import settle
from .apply import ImportResult, PlannedEntry, Progress, plan, stale, validate, write
from .model import Draft

if TYPE_CHECKING:
    from ..service import MemoryService

FORMATS = ("claude-md", "agents-md", "gemini-md", "cursor", "copilot", "basic-memory", "mem0", "mcp-memory")


def parse(fmt: str, path: str | os.PathLike[str]) -> list[Draft]:
    """The drafts a file (or folder) of ``fmt`` holds, before any check against a store."""
    from ..domain.errors import InvalidInput

    target = Path(path)
    if fmt in ("claude-md", "agents-md", "gemini-md", "cursor", "copilot"):
        from .rules import parse_rules

        return parse_rules(fmt, target)
    if fmt == "basic-memory":
        from .notes import parse_notes

        return parse_notes(target)
    if fmt == "mem0":
        from .exports import parse_mem0

        return parse_mem0(target)
    if fmt == "mcp-memory":
        from .exports import parse_mcp_memory

        return parse_mcp_memory(target)
    raise InvalidInput(f"unknown import format {fmt!r}", hint=f"use one of {', '.join(FORMATS)}")


async def import_from(
    svc: MemoryService,
    fmt: str,
    path: str | os.PathLike[str],
    *,
    scope: str,
    dry_run: bool = False,
    progress: Progress | None = None,
) -> ImportResult:
    """Import ``path`` in format ``fmt`` into ``scope`` (mem0 memories with a user id go to that user's scope)."""
    drafts = validate(parse(fmt, path), await svc.kinds())
    planned = await plan(svc, drafts, scope=scope)
    gone = await stale(svc, drafts, scope=scope)
    unresolved = tuple(u for d in drafts for u in d.unresolved)
    where = str(Path(path).expanduser().resolve())
    result = ImportResult(
        format=fmt, path=where, dry_run=dry_run, entries=tuple(planned), unresolved=unresolved, stale=gone
    )
    if dry_run:
        return result
    revisions, sources = await write(svc, planned, progress=progress)
    await settle(svc.backend, sources)  # one row each at least: the store's tables were written in bulk
    return replace(result, revisions=revisions, sources_written=sources)


__all__ = ["FORMATS", "Draft", "ImportResult", "PlannedEntry", "import_from", "parse"]
