"""The write commands: remember (and --revise), forget, reactivate, organize. ``cli/main.py`` registers them."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from .main import emit, json_option, memory_of, rev_line, run, store_command

if TYPE_CHECKING:
    from ..domain.model import RememberOutcome, Revision
    from ..service import MemoryService


@click.command()
@click.option("--kind", help="fact, preference, decision, constraint, convention, lesson, ... (required for a new one)")
@click.option("--text", help="The memory's Markdown text ('-' reads stdin; required for a new one).")
@click.option("--title", help="A short title ('' clears it on --revise).")
@click.option("--tag", "tags", multiple=True, help="A tag (repeatable; on --revise, replaces the tags).")
@click.option("--slug", help="A lowercase kebab-case name, unique per kind in a scope.")
@click.option("--important/--not-important", default=None, help="Mark (or unmark) as curated reference material.")
@click.option(
    "--mandatory/--not-mandatory", default=None, help="Load (or stop loading) in full at every session start."
)
@click.option("--revise", "revise", metavar="ENTRY", help="Revise this entry: options you omit keep their value.")
@click.option("--expected-version", type=int, help="With --revise: refuse if the entry changed since this version.")
@click.option("--memory", help="Memory id (default: the scope's Memory).")
@click.option("--reason", help="Why (a short code or sentence).")
@json_option
@click.pass_context
def remember(
    ctx: click.Context,
    kind: str | None,
    text: str | None,
    title: str | None,
    tags: tuple[str, ...],
    slug: str | None,
    important: bool | None,
    mandatory: bool | None,
    revise: str | None,
    expected_version: int | None,
    memory: str | None,
    reason: str | None,
    as_json: bool,
) -> None:
    """Add a memory, or revise one (--revise ENTRY keeps what you do not change)."""
    from ..domain.errors import InvalidInput
    from ..domain.model import EntryInput, EntryPatch

    body_text = sys.stdin.read() if text == "-" else text

    async def body(svc: MemoryService) -> None:
        if revise:
            patch = EntryPatch(
                kind=kind,
                text=body_text,
                title=title,
                tags=tags or None,
                slug=slug,
                important=important,
                mandatory=mandatory,
                reason=reason,
            )
            done = await svc.update(revise, patch, expected_version=expected_version)
            line = f"{done.status} {done.current.entry_id} (version {done.current.version}); {rev_line(done.revision)}"
            emit(
                as_json,
                {"status": done.status, "entries": [done.current.entry_id], "revision": done.revision.to_dict()},
                line,
            )
            return
        if kind is None or body_text is None:
            raise InvalidInput("a new memory needs --kind and --text", hint="or pass --revise ENTRY to change one")
        if expected_version is not None:
            raise InvalidInput("--expected-version goes with --revise ENTRY")
        item = EntryInput(
            kind=kind,
            text=body_text,
            title=title,
            tags=tags,
            slug=slug,
            important=bool(important),
            mandatory=bool(mandatory),
            reason=reason,
        )

        async def once() -> RememberOutcome:
            base = await memory_of(svc, ctx.obj, memory)
            if base is None:
                return await svc.remember_outcome(None, entries=[item], scope=ctx.obj.scope)
            return await svc.remember_outcome(base, entries=[item])

        outcome = await svc.retrying(once)
        rev = outcome.revision
        line = rev_line(rev)
        if outcome.added:
            line = f"{line}; added {', '.join(outcome.added)}"
        elif outcome.existing:
            line = f"unchanged: already stored as {', '.join(outcome.existing)}; {line}"
        payload = {
            "status": "created" if outcome.added else "unchanged",
            "entries": list(outcome.added),
            "existing": list(outcome.existing),
            "revision": rev.to_dict() if rev else None,
        }
        emit(as_json, payload, line)

    run(ctx, as_json, body)


def _state_command(name: str, doc: str) -> click.Command:
    @click.command(name=name, help=doc)
    @click.argument("entries", nargs=-1, required=True)
    @click.option("--memory", help="Memory id (default: the entries' Memory).")
    @click.option("--reason", help="Why (a short code or sentence).")
    @json_option
    @click.pass_context
    def command(
        ctx: click.Context, entries: tuple[str, ...], memory: str | None, reason: str | None, as_json: bool
    ) -> None:
        async def body(svc: MemoryService) -> None:
            async def once() -> Revision:
                base = await memory_of(svc, ctx.obj, memory, entries[0])
                assert base is not None
                op = svc.forget if name == "forget" else svc.reactivate
                return await op(base, entries=list(entries), reason=reason)

            rev = await svc.retrying(once)
            emit(as_json, {"revision": rev.to_dict()}, rev_line(rev))

        run(ctx, as_json, body)

    return command


forget = _state_command("forget", "Mark entries inactive (history is kept; reactivate restores them).")
reactivate = _state_command("reactivate", "Make inactive entries active again, at the same version.")


@store_command()
@click.option("--memory", help="Memory id (default: the scope's Memory).")
@click.option("--no-dedupe", is_flag=True, help="Skip exact deduplication.")
@click.option("--no-normalize", is_flag=True, help="Skip reference normalization.")
@json_option
async def organize(
    svc: MemoryService, ctx: click.Context, memory: str | None, no_dedupe: bool, no_normalize: bool, as_json: bool
) -> None:
    """Deduplicate exact copies and normalize references, in one Revision."""
    from ..domain.errors import InvalidInput

    async def once() -> Revision:
        head = await memory_of(svc, ctx.obj, memory)
        if head is None:
            raise InvalidInput(f"scope {ctx.obj.scope} has no Memory yet")
        return await svc.organize(head, dedupe=not no_dedupe, normalize=not no_normalize)

    rev = await svc.retrying(once)
    emit(as_json, {"revision": rev.to_dict()}, rev_line(rev))


__all__ = ["forget", "organize", "reactivate", "remember"]
