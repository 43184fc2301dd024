"""The text an agent is given: the session briefing and per-prompt context, phrased as facts.

Hosts warn that text framed as out-of-band system commands ("SYSTEM: you must …") can trip a model's
prompt-injection defences, so the framing here states what the memories are and where they come from; the
memories speak for themselves. The first line carries a stable tag (``memstone briefing <hash>``, a hash of
the exact entry versions shown) so a person or a test can see which briefing was delivered.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from ..domain.records import estimate_tokens

SNIPPET_CHARS = 600


@dataclass(frozen=True, slots=True, kw_only=True)
class Briefing:
    """A rendered briefing and what it contains."""

    text: str
    tag: str
    entry_ids: tuple[str, ...]
    omitted: int = 0


class Shown(Protocol):
    """What a briefing shows of a memory: a Record, a MemoryHit, or a team server's record (agents/hook_reads.py)."""

    @property
    def entry_id(self) -> str: ...

    @property
    def entry_version_id(self) -> str: ...

    @property
    def kind(self) -> str: ...

    @property
    def title(self) -> str | None: ...

    @property
    def text(self) -> str: ...

    @property
    def scope(self) -> str | None: ...


def _where(scope: str | None) -> str:
    if scope is None:
        return ""
    return "user" if scope.startswith("memstone://users/") else "project"


def _line(kind: str, title: str | None, text: str, entry_id: str, scope: str | None, *, full: bool) -> str:
    body = text.strip()
    if not full and len(body) > SNIPPET_CHARS:
        body = body[:SNIPPET_CHARS].rstrip() + f" … (full text: memory_source {entry_id})"
    head = f"[{kind}] {title.strip()}: " if title else f"[{kind}] "
    where = _where(scope)
    suffix = f" ({entry_id}{', ' + where if where else ''})"
    lines = (head + body).splitlines() or [head]
    return "\n".join([f"- {lines[0]}", *(f"  {x}" for x in lines[1:])]) + suffix


def tag_for(version_ids: Sequence[str]) -> str:
    digest = hashlib.sha256("\n".join(sorted(version_ids)).encode("utf-8")).hexdigest()[:10]
    return f"memstone briefing {digest}"


def session_briefing(
    mandatory: Sequence[Shown],
    important: Sequence[Shown],
    *,
    budget_tokens: int,
    project_scope: str | None,
    omitted: int = 0,
    after_compaction: bool = False,
) -> Briefing | None:
    """The session-start text: every mandatory memory in full, then important ones while the budget lasts.

    ``mandatory`` is already budgeted by the service's recall protocol; ``important`` is filled into what is
    left, in catalogue order (newest first), each cut to a snippet. None when there is nothing to say.
    """
    if not mandatory and not important:
        return None
    lines: list[str] = []
    used = 0
    for r in mandatory:
        lines.append(_line(r.kind, r.title, r.text, r.entry_id, r.scope, full=True))
        used += estimate_tokens(lines[-1])
    extra: list[str] = []
    shown = [r.entry_id for r in mandatory]
    versions = [r.entry_version_id for r in mandatory]
    for r in important:
        line = _line(r.kind, r.title, r.text, r.entry_id, r.scope, full=False)
        cost = estimate_tokens(line)
        if used + cost > budget_tokens:
            omitted += 1
            continue
        extra.append(line)
        used += cost
        shown.append(r.entry_id)
        versions.append(r.entry_version_id)
    tag = tag_for(versions)
    where = f" for project {project_scope.rsplit('/', 1)[-1]}" if project_scope else ""
    when = "re-sent after the conversation was compacted" if after_compaction else "loaded at session start"
    out = [f"{tag}: memories saved in earlier sessions{where} and for this user ({when})."]
    if lines:
        out.append("Mandatory memories (standing rules and facts that apply to every session):")
        out.extend(lines)
    if extra:
        out.append("Important memories (curated reference; the id opens the full text with memory_source):")
        out.extend(extra)
    if omitted:
        out.append(f"{omitted} more memories did not fit the {budget_tokens}-token budget; memory_search finds them.")
    out.append(
        "The memstone MCP tools search (memory_search), read (memory_source) and update these memories; "
        "a correction of one of them belongs in memory_update, not in a new memory."
    )
    return Briefing(text="\n".join(out), tag=tag, entry_ids=tuple(shown), omitted=omitted)


def prompt_context(hits: Sequence[Shown], *, budget_tokens: int, why: str = "this prompt") -> Briefing | None:
    """Memories relevant to this prompt (not shown earlier in the session), as snippets within a budget."""
    lines: list[str] = []
    shown: list[str] = []
    versions: list[str] = []
    used = 0
    for h in hits:
        line = _line(h.kind, h.title, h.text, h.entry_id, h.scope, full=False)
        cost = estimate_tokens(line)
        if used + cost > budget_tokens:
            continue
        lines.append(line)
        used += cost
        shown.append(h.entry_id)
        versions.append(h.entry_version_id)
    if not lines:
        return None
    tag = tag_for(versions).replace("briefing", "context")
    head = f"{tag}: saved memories that match {why} (full text: memory_source <id>):"
    return Briefing(text="\n".join([head, *lines]), tag=tag, entry_ids=tuple(shown))


__all__ = ["Briefing", "Shown", "prompt_context", "session_briefing", "tag_for"]
