"""``memstone import`` (the backup format, or ``--from FORMAT``), ``memstone render`` and ``memstone sync``.

Thin front ends over :mod:`memstone.importers`; ``cli/main.py`` registers them. Shared helpers come from
``cli/main.py`` at call time, as in ``cli/records.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

import click

from .options import json_flag, json_option

if TYPE_CHECKING:
    from ..importers import ImportResult
    from ..importers.folder import SyncReport
    from ..service import MemoryService

FORMATS = ("claude-md", "agents-md", "gemini-md", "cursor", "copilot", "basic-memory", "mem0", "mcp-memory")
AGENTS = ("claude-code", "codex", "gemini", "cursor")


def _run(ctx: click.Context, as_json: bool, body: Callable[[MemoryService], Coroutine[Any, Any, None]]) -> None:
    from .main import run

    run(ctx, as_json, body)


def _emit(as_json: bool, payload: object, human: str) -> None:
    from .main import emit

    emit(as_json, payload, human)


def _import_lines(result: ImportResult) -> list[str]:
    lines = []
    for e in result.entries:
        d = e.draft
        flags = "mandatory" if d.mandatory else "important" if d.important else "normal"
        lines.append(
            f"{e.status:<9}  [{d.kind}] {flags:<9}  {d.title + ': ' if d.title else ''}{d.text.splitlines()[0][:70]}  "
            f"({d.path}:{d.lines[0]}-{d.lines[1]})"
        )
    lines.extend(f"unresolved link: {u}" for u in result.unresolved)
    lines.extend(f"no longer in the input (kept; `memstone forget` it if it should go): {s}" for s in result.stale)
    verb = "would add" if result.dry_run else "added"
    lines.append(
        f"{verb} {result.count('add')}, revised {result.count('revise')}, unchanged {result.count('unchanged')}, "
        f"forgotten (left alone) {result.count('forgotten')}; {len(result.revisions)} revisions written"
        + (" (dry run: nothing written)" if result.dry_run else "")
    )
    return lines


@click.command("import")
@click.argument("path", type=click.Path(exists=True))
@click.option(
    "--from",
    "fmt",
    type=click.Choice(FORMATS),
    help="Import a foreign format; without it PATH is a `memstone export` directory (the backup format).",
)
@click.option("--dry-run", is_flag=True, help="With --from: show what would be created; write nothing.")
@json_option
@click.pass_context
def import_command(ctx: click.Context, path: str, fmt: str | None, dry_run: bool, as_json: bool) -> None:
    """Import an export back (DIRECTORY), or memories from another tool (--from FORMAT PATH)."""
    if fmt is None:
        if dry_run:
            raise click.UsageError("--dry-run goes with --from FORMAT")
        from .records import import_command as backup_import

        ctx.invoke(backup_import, directory=path, as_json=as_json)
        return

    from ..importers import import_from

    def progress(done: int, total: int) -> None:
        if total >= 20 and not as_json:
            click.echo(f"\rrecording evidence: {done}/{total}", nl=False, err=True)
            if done == total:
                click.echo(err=True)

    async def body(svc: MemoryService) -> None:
        result = await import_from(svc, fmt, path, scope=ctx.obj.scope, dry_run=dry_run, progress=progress)
        _emit(as_json, result.to_dict(), "\n".join(_import_lines(result)))

    _run(ctx, as_json, body)


@click.command("render")
@click.option("--agent", required=True, type=click.Choice(AGENTS), help="Whose rule file to write.")
@click.option("--dir", "directory", default=".", show_default=True, help="The project directory.")
@click.option("--file", "path", help="Write this file instead of the agent's default (CLAUDE.md, AGENTS.md, ...).")
@click.option("--scope", "scopes", multiple=True, help="Scope to render (repeatable; default: --scope).")
@click.option("--check", is_flag=True, help="Write nothing; exit 1 when the file is out of date.")
@json_option
@click.pass_context
def render_command(
    ctx: click.Context,
    agent: str,
    directory: str,
    path: str | None,
    scopes: tuple[str, ...],
    check: bool,
    as_json: bool,
) -> None:
    """Write the mandatory and important memories into the agent's rule file, in a marked block."""
    import sys

    from ..importers.render import render

    stale = False

    async def body(svc: MemoryService) -> None:
        nonlocal stale
        result = await render(
            svc, agent, scopes=list(scopes) or [ctx.obj.scope], directory=directory, path=path, check=check
        )
        stale = check and result.changed
        state = ("out of date" if check else "updated") if result.changed else "up to date"
        _emit(
            as_json,
            result.to_dict(),
            f"{result.path}: {state} ({result.mandatory} mandatory, {result.important} important)",
        )

    _run(ctx, as_json, body)
    if stale:
        sys.exit(1)


def _sync_lines(report: SyncReport) -> list[str]:
    lines = [f"new version  {e}" for e in report.new_versions]
    lines += [f"new entry    {e}" for e in report.new_entries]
    lines += [f"forgotten    {e}" for e in report.forgotten]
    lines += [f"wrote        {p}" for p in report.files_written]
    lines += [f"removed      {p}" for p in report.files_removed]
    lines += [
        f"CONFLICT     {c.path}: {c.reason} (file from {c.base_version_id}, store at {c.current_version_id})"
        for c in report.conflicts
    ]
    lines.append(
        f"{len(report.new_versions)} new versions, {len(report.new_entries)} new entries, "
        f"{len(report.forgotten)} forgotten, {len(report.files_written)} files written, "
        f"{len(report.files_removed)} removed, {len(report.conflicts)} conflicts"
    )
    return lines


@click.command("sync")
@click.argument("directory", type=click.Path(file_okay=False))
@click.option("--scope", "scopes", multiple=True, help="Only this scope (repeatable; default: every scope).")
@click.option("--watch", is_flag=True, help="Keep syncing whenever a file or the store changes (Ctrl-C stops).")
@click.option("--interval", default=1.0, show_default=True, type=float, help="With --watch: seconds between checks.")
@json_flag("Print machine-readable JSON (one object per sync).")
@click.pass_context
def sync_command(
    ctx: click.Context, directory: str, scopes: tuple[str, ...], watch: bool, interval: float, as_json: bool
) -> None:
    """Keep a folder of editable Markdown (one file per entry) in step with the store, both ways."""
    import json
    import sys

    from ..importers.folder import sync_folder, watch_folder

    conflicted = False

    def show(report: SyncReport) -> None:
        nonlocal conflicted
        conflicted = bool(report.conflicts)
        if as_json:
            click.echo(json.dumps(report.to_dict(), ensure_ascii=False))
        else:
            click.echo("\n".join(_sync_lines(report)))

    async def body(svc: MemoryService) -> None:
        if watch:
            await watch_folder(svc, directory, scopes=scopes, interval=interval, on_sync=show)
        else:
            show(await sync_folder(svc, directory, scopes=scopes))

    try:
        _run(ctx, as_json, body)
    except KeyboardInterrupt:  # Ctrl-C ends --watch; every sync that ran has been written and saved
        return
    if conflicted and not watch:
        sys.exit(3)


__all__ = ["import_command", "render_command", "sync_command"]
