"""The read commands: search, show, history, changes, memories. ``cli/main.py`` registers them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from .main import emit, json_option, memory_of, store_command
from .options import choice_option, entry_at_options

if TYPE_CHECKING:
    from ..service import MemoryService


@store_command()
@click.argument("query")
@click.option("--memory", "memories", multiple=True, help="Memory id to search (repeatable).")
@click.option("--all", "all_memories", is_flag=True, help="Search every Memory in the store.")
@click.option("--limit", default=8, show_default=True, type=int, help="How many distinct memories to return.")
@choice_option(
    "--mode",
    ["auto", "fts", "vector", "hybrid"],
    "auto",
    "auto = hybrid when vectors are complete, else full-text (the mode used is reported).",
)
@click.option("--kind", "kinds", multiple=True, help="Only this kind (repeatable).")
@click.option("--tag", "tags", multiple=True, help="Only entries with this tag (repeatable, all must match).")
@click.option("--scope", "in_scopes", multiple=True, help="Search this scope's Memory (repeatable; tiers combine).")
@choice_option(
    "--order",
    ["relevance", "priority"],
    "relevance",
    "priority = mandatory, important, normal, then newest (Graphit); a score never outranks that.",
)
@click.option("--important/--not-important", "important", default=None, help="Filter on the important flag.")
@click.option("--mandatory/--not-mandatory", "mandatory", default=None, help="Filter on the mandatory flag.")
@click.option("--exclude-mandatory", is_flag=True, help="Leave out mandatory memories (already loaded in full).")
@click.option("--include-superseded", is_flag=True, help="Also match archived versions (marked superseded).")
@click.option("--no-precedence", is_flag=True, help="Keep entries a more specific scope shadows.")
@click.option(
    "--context", is_flag=True, help="After the first 7 hits, add the entries written next to them (limit > 7)."
)
@json_option
async def search(
    svc: MemoryService,
    ctx: click.Context,
    query: str,
    memories: tuple[str, ...],
    all_memories: bool,
    limit: int,
    mode: str,
    kinds: tuple[str, ...],
    tags: tuple[str, ...],
    in_scopes: tuple[str, ...],
    order: str,
    important: bool | None,
    mandatory: bool | None,
    exclude_mandatory: bool,
    include_superseded: bool,
    no_precedence: bool,
    context: bool,
    as_json: bool,
) -> None:
    """Search memories (default: the scope's Memory)."""
    refs: list[Any] = list(memories)
    scopes: list[str] = list(in_scopes)
    if all_memories:
        refs = [r.ref for r in await svc.memories()]
        if not refs:
            emit(as_json, {"mode": mode, "requested_mode": mode, "fallback_reason": None, "hits": []}, "no matches")
            return
    elif not refs and not scopes:
        scopes = ctx.obj.read_scopes
    result = await svc.search(
        query,
        memories=refs,
        scopes=scopes,
        limit=limit,
        mode=mode,  # type: ignore[arg-type]
        kinds=kinds,
        tags=tags,
        important=important,
        mandatory=mandatory,
        order=order,  # type: ignore[arg-type]
        exclude_mandatory=exclude_mandatory,
        include_superseded=include_superseded,
        precedence=not no_precedence,
        context=context,
    )
    lines = [f"mode: {result.mode}" + (f" ({result.fallback_reason})" if result.fallback_reason else "")]
    for h in result.hits:
        head = f"[{h.kind}] {h.title + ': ' if h.title else ''}"
        note = f"  (superseded; current {h.current_entry_version_id})" if h.superseded else ""
        note += "  [stale]" if h.stale else ""
        lines.append(f"{h.entry_id}  {h.score:.4f}  {head}{h.text.splitlines()[0][:100]}{note}")
    lines.extend(
        f"shadowed: {s.entry_id} ({s.scope}) by {s.shadowed_by} ({s.shadowed_by_scope})" for s in result.shadowed
    )
    if not result.hits:
        lines.append("no matches")
    emit(as_json, result.to_dict(), "\n".join(lines))


@store_command()
@entry_at_options("Read")
@json_option
async def show(
    svc: MemoryService, ctx: click.Context, entry: str, memory: str | None, revision: int | None, as_json: bool
) -> None:
    """Show an entry (or an exact version ver_…) as Markdown with YAML frontmatter."""
    at: Any = None
    if revision is not None:
        mid = memory or (await svc.get(entry)).memory_id
        at = await svc.revision(mid, revision)
    elif memory:
        at = memory
    version = await svc.get(entry, memory=at)
    markdown = await svc.source(version.entry_version_id)
    emit(as_json, {"version": version.to_dict(), "markdown": markdown}, markdown.rstrip("\n"))


@store_command()
@click.argument("entry")
@json_option
async def history(svc: MemoryService, ctx: click.Context, entry: str, as_json: bool) -> None:
    """Walk an entry's revision chain, oldest first."""
    items = await svc.history(entry, reasons=True)
    # A purged version shows its tombstone: when, by whom and why it was erased (issue 12).
    lines = [
        f"v{h.version.version}  {h.version.entry_version_id}  {h.status:<10}  {h.version.provenance.created_at}  "
        f"{h.version.provenance.author or '-'}  {h.version.entry_content_hash[:12]}  {h.version.text[:60]!r}"
        + (f"  reason: {h.reason}" if h.reason else "")
        + (f"  purged {t.purged_at} by {t.author or '-'}: {t.reason}" if (t := h.purge) else "")
        for h in items
    ]
    out = [h.to_dict() for h in items]
    emit(as_json, {"history": out}, "\n".join(lines))


@store_command()
@click.option("--memory", help="Memory id (default: the scope's Memory).")
@click.option("--since", "since", type=int, help="Exclusive lower bound (0 = whole history).")
@json_option
async def changes(svc: MemoryService, ctx: click.Context, memory: str | None, since: int | None, as_json: bool) -> None:
    """List what each Revision changed (compact: op, entry, versions, reason)."""
    from ..domain.errors import InvalidInput

    head = await memory_of(svc, ctx.obj, memory)
    if head is None:
        raise InvalidInput(f"scope {ctx.obj.scope} has no Memory yet", hint="remember something first")
    deltas = await svc.changes(head, since_revision=since)
    lines = []
    for d in deltas:
        for c in d.changes:
            lines.append(
                f"r{d.memory_ref.revision}  {c.op:<10}  {c.entry_id}  {c.from_entry_version_id or '-'} -> "
                f"{c.to_entry_version_id or '-'}  {c.reason or ''}"
            )
    emit(as_json, {"changes": [d.to_dict() for d in deltas]}, "\n".join(lines) or "no changes")


@store_command()
@json_option
async def memories(svc: MemoryService, ctx: click.Context, as_json: bool) -> None:
    """List every Memory in the store with its head and scope."""
    heads = await svc.memories()
    scopes = {m: s for s, m in await svc.scopes()}
    lines = [
        f"{h.memory_id}  r{h.revision}  {h.active_count}/{h.entry_count} active  {scopes.get(h.memory_id, '')}"
        for h in heads
    ]
    payload = {"memories": [{**h.to_dict(), "scope": scopes.get(h.memory_id)} for h in heads]}
    emit(as_json, payload, "\n".join(lines) or "no memories yet")


__all__ = ["changes", "history", "memories", "search", "show"]
