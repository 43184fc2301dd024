"""The record commands: scopes, catalogues, slugs and relations, flags, recall, history, Markdown, citations.

Each is a thin front end over one ``MemoryService`` method; ``cli/main.py`` registers them. Shared helpers
(store opening, error mapping, ``--json`` output) come from ``cli/main.py``.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from typing import Any

import click

from ..domain.errors import InvalidInput
from ..domain.ids import EntryId, EntryVersionId, MemoryId
from ..domain.model import ArtifactRef, Citation, Revision
from ..domain.records import Record
from ..domain.rules import parse_revision
from ..domain.scopes import canonical_scope
from ..service import MemoryService
from .main import emit, memory_of, rev_line, run, store_command
from .options import choice_option, entry_at_options, json_option


async def _write(svc: MemoryService, ctx: click.Context, entry: str, op: Callable[[Revision], Any]) -> Revision:
    """Apply ``op`` to the head of the entry's Memory, re-reading the head after a lost race."""

    async def once() -> Revision:
        base = await memory_of(svc, ctx.obj, None, entry)
        assert base is not None
        result: Revision = await op(base)
        return result

    return await svc.retrying(once)  # the service's one retry policy


def _selection(ctx: click.Context, scopes: Sequence[str], memories: Sequence[str]) -> tuple[list[str], list[str]]:
    """Explicit ``--scope``/``--memory`` values, else the group's read scopes (project and user, or --scope)."""
    if not scopes and not memories:
        return ctx.obj.read_scopes, []
    return list(scopes), list(memories)


def _record_line(r: Record) -> str:
    first = r.text.splitlines()[0][:80] if r.text else ""
    label = f"{r.title}: " if r.title else ""
    slug = f" {r.slug}" if r.slug else ""
    shadow = f"  (shadowed by {r.shadowed_by} in {r.shadowed_by_scope})" if r.shadowed_by else ""
    state = ("" if r.state == "active" else "  [inactive]") + ("  [stale]" if r.stale else "")
    return (
        f"{r.entry_id}  {r.category:<9}  [{r.kind}]{slug}  {label}{first}  ({r.scope or r.memory_ref}){shadow}{state}"
    )


def scope_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    fn = click.option("--memory", "memories", multiple=True, help="Memory id (repeatable).")(fn)
    return click.option(
        "--scope", "scopes", multiple=True, help="Scope URI (repeatable; default: the global --scope)."
    )(fn)


# ---------------------------------------------------------------------------------------------- scopes
@store_command("scopes")
@json_option
async def scopes_command(svc: MemoryService, ctx: click.Context, as_json: bool) -> None:
    """List every scope binding: scope URI, tier, Memory and its head."""
    rows = []
    for scope, memory_id in await svc.scopes():
        head = await svc.head(memory_id)
        rows.append({"scope": scope, "tier": scope.split("/")[-2][:-1], "memory": head.to_dict()})
    lines = [
        f"{r['scope']}  {r['tier']}  {head['memory_id']}  r{head['revision']}"
        for r in rows
        for head in [r["memory"]]
        if isinstance(head, dict)
    ]
    emit(as_json, {"scopes": rows}, "\n".join(lines) or "no scopes bound yet")


@store_command("resolve")
@click.argument("scope")
@json_option
async def resolve_command(svc: MemoryService, ctx: click.Context, scope: str, as_json: bool) -> None:
    """Show the Memory a scope URI is bound to (its canonical form, and 'unbound' when it has none yet)."""
    uri = canonical_scope(scope)
    head = await svc.resolve(uri)
    payload = {"scope": uri, "memory": head.to_dict() if head else None}
    emit(as_json, payload, f"{uri}  {rev_line(head) if head else 'unbound'}")


@store_command("bind")
@click.argument("scope")
@click.argument("memory")
@json_option
async def bind_command(svc: MemoryService, ctx: click.Context, scope: str, memory: str, as_json: bool) -> None:
    """Bind an unbound scope to an existing, unbound Memory (bindings are permanent)."""
    head = await svc.bind(scope, memory)
    uri = canonical_scope(scope)
    emit(as_json, {"scope": uri, "memory": head.to_dict()}, f"{uri} -> {head.memory_id}")


# ---------------------------------------------------------------------------------------------- catalogues
def _catalogue_command(name: str, doc: str) -> click.Command:
    @click.command(name=name, help=doc)
    @scope_options
    @click.option("--revision", type=int, help="Read one --memory as of this Revision (point in time).")
    @click.option("--kind", "kinds", multiple=True, help="Only this kind (repeatable).")
    @click.option("--tag", "tags", multiple=True, help="Only records with this tag (repeatable, all must match).")
    @click.option("--important/--not-important", "important", default=None, help="Filter on the important flag.")
    @click.option("--mandatory/--not-mandatory", "mandatory", default=None, help="Filter on the mandatory flag.")
    @click.option("--limit", type=int, help="At most this many records.")
    @click.option("--inactive", is_flag=True, help="Include inactive (forgotten) entries too.")
    @click.option("--no-precedence", is_flag=True, help="Do not mark records shadowed by a more specific scope.")
    @json_option
    @click.pass_context
    def command(
        ctx: click.Context,
        scopes: tuple[str, ...],
        memories: tuple[str, ...],
        revision: int | None,
        kinds: tuple[str, ...],
        tags: tuple[str, ...],
        limit: int | None,
        inactive: bool,
        no_precedence: bool,
        as_json: bool,
        important: bool | None = None,
        mandatory: bool | None = None,
    ) -> None:
        if name == "important":
            important = True
        if name == "mandatory":
            mandatory = True

        async def body(svc: MemoryService) -> None:
            sel_scopes, sel_memories = _selection(ctx, scopes, memories)
            chosen: list[Any] = list(sel_memories)
            if revision is not None:
                if len(memories) != 1 or scopes:
                    raise InvalidInput("--revision reads exactly one --memory at a point in time")
                chosen = [await svc.revision(memories[0], revision)]
            records = await svc.list(
                scopes=sel_scopes if revision is None else [],
                memories=chosen,
                kinds=kinds,
                tags=tags,
                important=important,
                mandatory=mandatory,
                limit=limit,
                include_inactive=inactive,
                precedence=not no_precedence,
            )
            if name == "mandatory" and not as_json:
                blocks = [f"{_record_line(r)}\n{r.text}" for r in records]
                emit(False, {}, "\n\n".join(blocks) or "no mandatory memories")
                return
            lines = [_record_line(r) for r in records]
            emit(as_json, {"records": [r.to_dict() for r in records]}, "\n".join(lines) or "no records")

        run(ctx, as_json, body)

    # `important` and `mandatory` are those filters already.
    command.params = [p for p in command.params if p.name != name]
    return command


list_command = _catalogue_command(
    "list", "List live records: mandatory, then important, then normal, newest first within each."
)
important_command = _catalogue_command("important", "List live important records (curated reference material).")
mandatory_command = _catalogue_command(
    "mandatory", "Print every live mandatory record in full: what an agent loads at every session start."
)


@store_command("lookup")
@click.argument("kind")
@click.argument("slug")
@click.option("--memory", help="Look in this Memory instead of the global --scope.")
@click.option("--inactive", is_flag=True, help="Also find an inactive entry.")
@json_option
async def lookup_command(
    svc: MemoryService, ctx: click.Context, kind: str, slug: str, memory: str | None, inactive: bool, as_json: bool
) -> None:
    """Find the entry a (scope, kind, slug) names; an old slug redirects to the renamed entry."""
    record = await svc.lookup(memory or ctx.obj.scope, kind=kind, slug=slug, include_inactive=inactive)
    markdown = await svc.source(record.entry_version_id)
    redirected = record.slug != slug
    payload = {"record": record.to_dict(), "redirected_from": slug if redirected else None, "markdown": markdown}
    note = f"(redirected from old slug {slug!r})\n" if redirected else ""
    emit(as_json, payload, note + markdown.rstrip("\n"))


# ---------------------------------------------------------------------------------------------- flags, slugs, relations
@store_command("flag")
@click.argument("entry")
@click.option("--important/--no-important", "important", default=None, help="Set or clear the important flag.")
@click.option("--mandatory/--no-mandatory", "mandatory", default=None, help="Set or clear the mandatory flag.")
@json_option
async def flag_command(
    svc: MemoryService, ctx: click.Context, entry: str, important: bool | None, mandatory: bool | None, as_json: bool
) -> None:
    """Set or clear important/mandatory on an entry (a new version with reason 'flag')."""
    rev = await _write(svc, ctx, entry, lambda base: svc.flag(base, entry, important=important, mandatory=mandatory))
    emit(as_json, {"revision": rev.to_dict()}, rev_line(rev))


@click.command("rename")
@click.argument("entry")
@click.argument("slug", required=False)
@click.option("--clear", is_flag=True, help="Remove the slug instead of setting one.")
@json_option
@click.pass_context
def rename_command(ctx: click.Context, entry: str, slug: str | None, clear: bool, as_json: bool) -> None:
    """Give an entry a new slug; reads of the old slug redirect to it (history keeps the alias)."""
    if (slug is None) == (not clear):
        raise click.UsageError("give a new SLUG, or --clear")

    async def body(svc: MemoryService) -> None:
        rev = await _write(svc, ctx, entry, lambda base: svc.rename(base, entry, None if clear else slug))
        emit(as_json, {"revision": rev.to_dict()}, rev_line(rev))

    run(ctx, as_json, body)


@store_command("relate")
@click.argument("source")
@click.argument("target")
@click.option("--kind", default="relates-to", show_default=True, help="supersedes, clarifies, relates-to, ...")
@click.option("--deactivate-target", is_flag=True, help="With --kind supersedes: forget the target, same Revision.")
@click.option("--remove", is_flag=True, help="Remove this relation instead of adding it.")
@json_option
async def relate_command(
    svc: MemoryService,
    ctx: click.Context,
    source: str,
    target: str,
    kind: str,
    deactivate_target: bool,
    remove: bool,
    as_json: bool,
) -> None:
    """Link SOURCE to TARGET with a relation kind (a new version of SOURCE)."""
    if remove:
        rev = await _write(svc, ctx, source, lambda base: svc.unrelate(base, source, target, kind))
    else:
        rev = await _write(
            svc,
            ctx,
            source,
            lambda base: svc.relate(base, source, target, kind, deactivate_target=deactivate_target),
        )
    emit(as_json, {"revision": rev.to_dict()}, rev_line(rev))


# ---------------------------------------------------------------------------------------------- history
@store_command("diff")
@click.argument("first")
@click.argument("second", required=False)
@json_option
async def diff_command(svc: MemoryService, ctx: click.Context, first: str, second: str | None, as_json: bool) -> None:
    """Compare two versions of an entry (ver_…, ent_… for its current version, or ent_…@N for version N)."""
    d = await svc.diff(first, second)
    lines = [
        f"{d.from_version.entry_version_id} (v{d.from_version.version}) -> "
        f"{d.to_version.entry_version_id} (v{d.to_version.version})"
    ]
    for c in d.changes:
        if c.field == "text":
            continue
        lines.append(f"{c.field}: {json.dumps(c.old, ensure_ascii=False)} -> {json.dumps(c.new, ensure_ascii=False)}")
    lines.extend(d.text_diff)
    if d.identical:
        lines.append("identical")
    emit(as_json, d.to_dict(), "\n".join(lines))


@store_command("blame")
@click.argument("entry")
@json_option
async def blame_command(svc: MemoryService, ctx: click.Context, entry: str, as_json: bool) -> None:
    """Per field, which version and author last changed it (ENTRY may be ver_… or ent_…@N)."""
    fields = await svc.blame(entry)
    lines = [
        f"{b.field:<10} v{b.version}  r{b.revision}  {b.created_at}  {b.author or '-'}  "
        f"{json.dumps(b.value, ensure_ascii=False)[:60]}"
        for b in fields
    ]
    emit(as_json, {"blame": [b.to_dict() for b in fields]}, "\n".join(lines))


@store_command("revert")
@click.argument("entry")
@click.argument("version")
@json_option
async def revert_command(svc: MemoryService, ctx: click.Context, entry: str, version: str, as_json: bool) -> None:
    """Restore VERSION (a number, ver_… or ent_…@N) of ENTRY as a new version; history only grows."""
    to: str | int = parse_revision(version, "version") if version.isdigit() else version
    rev = await _write(svc, ctx, entry, lambda base: svc.revert(base, entry, to))
    emit(as_json, {"revision": rev.to_dict()}, rev_line(rev))


# ---------------------------------------------------------------------------------------------- recall
@store_command("recall")
@click.argument("context", required=False)
@scope_options
@click.option("--budget-tokens", type=int, help="Spend at most this many (estimated) tokens.")
@click.option("--budget-chars", type=int, help="Spend at most this many characters.")
@click.option("--limit", default=8, show_default=True, type=int, help="Contextual memories to search for.")
@choice_option("--mode", ["auto", "fts", "vector", "hybrid"], "auto")
@choice_option("--order", ["priority", "relevance"], "priority")
@json_option
async def recall_command(
    svc: MemoryService,
    ctx: click.Context,
    context: str | None,
    scopes: tuple[str, ...],
    memories: tuple[str, ...],
    budget_tokens: int | None,
    budget_chars: int | None,
    limit: int,
    mode: str,
    order: str,
    as_json: bool,
) -> None:
    """Session start: every mandatory memory in full, then CONTEXT's search (mandatory excluded), in a budget."""
    sel_scopes, sel_memories = _selection(ctx, scopes, memories)
    bundle = await svc.recall(
        context,
        scopes=sel_scopes,
        memories=sel_memories,
        budget_tokens=budget_tokens,
        budget_chars=budget_chars,
        limit=limit,
        mode=mode,  # type: ignore[arg-type]
        order=order,  # type: ignore[arg-type]
    )
    lines = ["# Mandatory"]
    stale = {True: " (stale: its evidence changed)", False: ""}
    lines.extend(
        f"\n### [{r.kind}] {r.title or r.slug or r.entry_id}{stale[r.stale]}\n{r.text}" for r in bundle.mandatory
    )
    lines.append("\n# Contextual")
    lines.extend(
        f"\n### [{h.kind}] {h.title or h.slug or h.entry_id}{stale[h.stale]}\n{h.text}" for h in bundle.contextual
    )
    if bundle.links:
        lines.append("\n# Links")
        lines.extend(f"- {x.source} {x.kind} {x.target} ({x.direction})" for x in bundle.links)
    lines.append(f"\n{bundle.note}")
    emit(as_json, bundle.to_dict(), "\n".join(lines))


# ---------------------------------------------------------------------------------------------- Markdown
@store_command("export")
@click.argument("directory", type=click.Path(file_okay=False))
@click.option("--scope", "scopes", multiple=True, help="Only this scope's Memory (repeatable; default: every Memory).")
@click.option("--memory", "memories", multiple=True, help="Only this Memory (repeatable).")
@json_option
async def export_command(
    svc: MemoryService,
    ctx: click.Context,
    directory: str,
    scopes: tuple[str, ...],
    memories: tuple[str, ...],
    as_json: bool,
) -> None:
    """Write Memories to DIRECTORY as Xema ledgers: <scope>/memories/<tier>/<kind>/<slug>.md, newest first."""
    report = await svc.export_markdown(directory, scopes=scopes, memories=memories)
    emit(
        as_json,
        report.to_dict(),
        f"exported {report.memories} memories, {report.entries} entries, {report.versions} versions, "
        f"{report.revisions} revisions, {report.sources} sources to {report.directory}",
    )


@store_command("import")
@click.argument("directory", type=click.Path(file_okay=False, exists=True))
@json_option
async def import_command(svc: MemoryService, ctx: click.Context, directory: str, as_json: bool) -> None:
    """Read an export back, replaying every Revision exactly; idempotent; refuses a tampered file by name."""
    report = await svc.import_markdown(directory)
    emit(
        as_json,
        report.to_dict(),
        f"imported {report.memories} memories: {report.revisions_written} revisions written, "
        f"{report.revisions_present} already present, {report.sources_written} sources",
    )


# ---------------------------------------------------------------------------------------------- citations
@store_command("cite")
@entry_at_options("Cite")
@json_option
async def cite_command(
    svc: MemoryService, ctx: click.Context, entry: str, memory: str | None, revision: int | None, as_json: bool
) -> None:
    """Print the exact Handoff citation of an entry: memory ref + entry id + entry version id (+ hash)."""
    version = await svc.get(entry)
    if entry.startswith("ver_") and memory is None and revision is None:
        revision_at: int | None = version.created_in_revision  # the Revision that wrote this exact version
    else:
        revision_at = revision
    rev = await svc.revision(memory or version.memory_id, revision_at)
    (record,) = await svc.records([version.entry_id], memory=rev)
    citation = svc.cite_record(record)
    await svc.verify_citation(citation)
    c = citation
    human = f"{c.memory_ref} {c.entry_id} {c.entry_version_id} {c.entry_content_hash}"
    emit(as_json, {"citation": c.to_dict()}, human)


def _citation(data: object) -> Citation:
    if not isinstance(data, dict):
        raise InvalidInput("a citation is a JSON object with memory_ref, entry_id and entry_version_id")
    data = data.get("citation", data)
    ref = data.get("memory_ref") if isinstance(data, dict) else None
    if not isinstance(data, dict) or not isinstance(ref, dict):
        raise InvalidInput("a citation needs memory_ref: {memory_id, revision}")
    revision = ref.get("revision")
    if isinstance(revision, bool) or not isinstance(revision, int):
        raise InvalidInput("memory_ref.revision must be an integer")
    return Citation(
        memory_ref=ArtifactRef(memory_id=MemoryId(str(ref.get("memory_id"))), revision=revision),
        entry_id=EntryId(str(data.get("entry_id"))),
        entry_version_id=EntryVersionId(str(data.get("entry_version_id"))),
        entry_content_hash=data.get("entry_content_hash") if isinstance(data.get("entry_content_hash"), str) else None,
    )


@click.command("verify-citation")
@click.argument("citation", default="-")
@json_option
@click.pass_context
def verify_citation_command(ctx: click.Context, citation: str, as_json: bool) -> None:
    """Check a citation (JSON, as `memstone cite --json` prints it; '-' reads stdin) against canonical bytes."""
    raw = sys.stdin.read() if citation == "-" else citation

    async def body(svc: MemoryService) -> None:
        try:
            data = json.loads(raw)
        except (ValueError, RecursionError) as exc:
            raise InvalidInput(f"the citation is not valid JSON: {exc!s:.200}") from exc
        c = _citation(data)
        version = await svc.verify_citation(c)
        emit(
            as_json,
            {"valid": True, "citation": c.to_dict(), "version": version.to_dict()},
            f"valid: {c.memory_ref} {c.entry_id} {c.entry_version_id}",
        )

    run(ctx, as_json, body)


__all__ = [
    "bind_command",
    "blame_command",
    "cite_command",
    "diff_command",
    "export_command",
    "flag_command",
    "import_command",
    "important_command",
    "list_command",
    "lookup_command",
    "mandatory_command",
    "recall_command",
    "relate_command",
    "rename_command",
    "resolve_command",
    "revert_command",
    "scopes_command",
    "verify_citation_command",
]
