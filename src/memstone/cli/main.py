"""``memstone`` CLI: one command per service verb, ``--json`` on every command. The CLI's composition root."""

from __future__ import annotations

import contextlib
import importlib
import json
import sys
from collections.abc import Callable, Coroutine, Iterator, Mapping, MutableMapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from .. import __version__
from .agents import AGENT_COMMANDS

if TYPE_CHECKING:
    from ..config import Config
    from ..domain.model import Revision
    from ..service import MemoryService

# At module level only click, the standard library and cli/agents.py: ``memstone hook`` (run on every agent
# prompt) and ``memstone --version`` must not pay for the service, the store or the other commands' modules.
# Each command imports what it needs when it runs; the commands of cli/records.py and cli/serve.py load on
# first lookup (LazyCommands).

T = TypeVar("T")
DEFAULT_SCOPE = "memstone://users/anonymous"  # outside any project (the home folder, /), with no user scope set


class _Unset:
    pass


_UNSET_EMBEDDING = _Unset()


class LazyCommands(MutableMapping[str, click.Command]):
    """The group's commands by name; a command of another module is imported the first time it is looked up.

    Listing the names (``--help``, "did you mean") imports nothing; ``cli.commands[name]`` and click's
    ``get_command`` return the real :class:`click.Command`.
    """

    def __init__(self, lazy: Mapping[str, tuple[str, str]]) -> None:
        self._lazy = dict(lazy)  # name -> (module relative to this package, attribute)
        self._commands: dict[str, click.Command] = {}
        self._order: list[str] = list(lazy)

    def __getitem__(self, name: str) -> click.Command:
        command = self._commands.get(name)
        if command is None:
            module, attr = self._lazy[name]  # KeyError for an unknown name, as a dict
            command = getattr(importlib.import_module(module, __package__), attr)
            assert isinstance(command, click.Command), (module, attr)
            self._commands[name] = command
        return command

    def __setitem__(self, name: str, command: click.Command) -> None:
        self._lazy.pop(name, None)
        if name not in self._order:
            self._order.append(name)
        self._commands[name] = command

    def __delitem__(self, name: str) -> None:
        if name not in self:
            raise KeyError(name)
        self._commands.pop(name, None)
        self._lazy.pop(name, None)
        self._order.remove(name)

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._order))

    def __len__(self) -> int:
        return len(self._order)

    def __contains__(self, name: object) -> bool:
        return name in self._commands or name in self._lazy


LAZY_COMMANDS: dict[str, tuple[str, str]] = {
    # The record commands (scopes, catalogues, slugs, relations, flags, recall, history, Markdown, citations).
    **{
        name: (".records", f"{name.replace('-', '_')}_command")
        for name in (
            "scopes",
            "resolve",
            "bind",
            "list",
            "important",
            "mandatory",
            "lookup",
            "flag",
            "rename",
            "relate",
            "diff",
            "blame",
            "revert",
            "recall",
            "export",
            "cite",
            "verify-citation",
        )
    },
    # Memories from elsewhere: the backup format or --from FORMAT, rule files written back, the sync folder.
    "import": (".imports", "import_command"),
    "render": (".imports", "render_command"),
    "sync": (".imports", "sync_command"),
    # The HTTP API with the Memory Explorer, and its access control.
    "serve": (".serve", "serve"),
    "token": (".serve", "token"),
    # Every setting with its source (memstone.config).
    "config": (".config", "config"),
    # The capture review queue (memstone.capture).
    "review": (".review", "review"),
}


class Context:
    """The group's options, resolved by memstone.config on first use (so ``memstone hook`` never fails on them)."""

    def __init__(self, url: str | None, scope: str | None, embedding: str | None = None) -> None:
        self._arguments = {"url": url, "scope": scope, "embedding": embedding}
        self._config: Config | None = None
        self._embedding: str | _Unset | None = _UNSET_EMBEDDING

    @property
    def config(self) -> Config:
        if self._config is None:
            from ..config import Config

            self._config = Config.load(self._arguments)
        return self._config

    def config_at(self, cwd: Path) -> Config:
        """The same options resolved for another directory (``memstone mcp --project DIR``)."""
        from ..config import Config

        return Config.load(self._arguments, cwd=cwd)

    @property
    def url(self) -> str:
        return self.config.url

    @property
    def scope(self) -> str:
        """The default Memory's scope: ``--scope``, else the project of the working directory, else the user's."""
        return self.config.default_scope

    @property
    def read_scopes(self) -> list[str]:
        """What a read covers by default: ``--scope`` alone, else the project scope and the user scope."""
        return list(self.config.read_scopes)

    @property
    def embedding(self) -> str | None:
        return self.config.get("embedding") if isinstance(self._embedding, _Unset) else self._embedding

    @embedding.setter
    def embedding(self, value: str | None) -> None:
        self._embedding = value

    def model_option(self) -> Any:
        """The ``embedding=`` argument for open_service: the store's profile unless told otherwise."""
        if self.embedding is None:
            from ..service import UNSET

            return UNSET
        return None if self.embedding.lower() == "none" else self.embedding


def json_option(fn: Callable[..., Any]) -> Callable[..., Any]:
    return click.option("--json", "as_json", is_flag=True, help="Print machine-readable JSON.")(fn)


def emit(as_json: bool, payload: object, human: str) -> None:
    if as_json:
        click.echo(json.dumps(payload, ensure_ascii=False, indent=2))
    else:
        click.echo(human)


# Commands that only read: they never create a store (a typo'd --url is an error, not a new empty database).
READ_COMMANDS = frozenset(
    {
        "search",
        "show",
        "history",
        "changes",
        "memories",
        "verify",
        "scopes",
        "resolve",
        "list",
        "important",
        "mandatory",
        "lookup",
        "diff",
        "blame",
        "recall",
        "export",
        "cite",
        "verify-citation",
    }
)


def run(ctx: click.Context, as_json: bool, body: Callable[[MemoryService], Coroutine[Any, Any, None]]) -> None:
    """Open the store, run ``body``, close; map memstone errors to an exit code and a clear message.

    A command in READ_COMMANDS opens with ``create=False``: on a path with no store it fails with NotFound.
    """
    import asyncio

    from ..domain.errors import MemstoneError
    from ..service import open_service
    from .errors import exit_code

    obj: Context = ctx.obj

    async def main() -> None:
        async with open_service(
            obj.url,
            surface="human",
            author=obj.config.get("author"),
            embedding=obj.model_option(),
            create=ctx.info_name not in READ_COMMANDS,
        ) as svc:
            await body(svc)

    try:
        asyncio.run(main())
    except MemstoneError as exc:
        if as_json:
            click.echo(json.dumps({"error": exc.to_dict()}, ensure_ascii=False, indent=2))
        else:
            click.echo(f"error: {exc}", err=True)
        sys.exit(exit_code(exc))


def rev_line(rev: Revision | None) -> str:
    if rev is None:
        return "nothing to save"
    return f"{rev.memory_id} revision {rev.revision} ({rev.active_count} active of {rev.entry_count} entries)"


async def memory_of(svc: MemoryService, obj: Context, memory: str | None, entry: str | None = None) -> Revision | None:
    if memory:
        return await svc.head(memory)
    if entry:
        return await svc.head((await svc.get(entry)).memory_id)
    return await svc.resolve(obj.scope)


def show_version(ctx: click.Context, value: bool) -> None:
    """``--version``: memstone's version, then the store's schema version (read with the stdlib, never opened)."""
    if not value or ctx.resilient_parsing:
        return
    from ..agents.settings import store_path
    from ..config import Config
    from ..domain.errors import MemstoneError
    from .agents import _schema_version

    url: str | None = ctx.params.get("url")
    with contextlib.suppress(MemstoneError):  # a bad setting elsewhere must not hide the version
        url = Config.load({"url": url}, derive=False).url  # --url, else MEMSTONE_URL, else the default
    path = store_path(url)
    click.echo(f"memstone, version {__version__}\nstore: {path} (schema version: {_schema_version(path)})")
    ctx.exit()


@click.group(context_settings={"help_option_names": ["-h", "--help"]}, commands=LazyCommands(LAZY_COMMANDS))
@click.option(
    "--url",
    is_eager=True,  # so that `memstone --url X --version` reports X's schema version
    help="Store URL (default ~/.memstone/memstone.db; env MEMSTONE_URL).",
)
@click.option(
    "--scope",
    help="Scope of the default Memory (default: the project of the working directory, else the user scope; env "
    "MEMSTONE_SCOPE). Reads without it cover the project and the user scope.",
)
@click.option(
    "--embedding",
    help="Embedding model profile (default: the store's own, or minilm-l6-int8 for a new store; 'none' = FTS only; "
    "env MEMSTONE_EMBEDDING).",
)
@click.option(
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=lambda ctx, _param, value: show_version(ctx, value),
    help="Print the version and the store's schema version, and exit.",
)
@click.pass_context
def cli(ctx: click.Context, url: str | None, scope: str | None, embedding: str | None) -> None:
    """memstone: durable, versioned, searchable memory for AI agents."""
    ctx.obj = Context(url, scope, embedding)


@cli.command()
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

        bases: list[int] = []

        async def once() -> Revision | None:
            base = await memory_of(svc, ctx.obj, memory)
            bases.append(base.revision if base is not None else 0)
            if base is None:
                return await svc.remember(None, entries=[item], scope=ctx.obj.scope)
            return await svc.remember(base, entries=[item])

        rev = await svc.retrying(once)
        # Trigger: a text identical to a live entry returns the head unchanged. Why: its changes are an older
        # write's, not this one's. Outcome: status unchanged and no entry ids.
        written = rev is not None and rev.revision != bases[-1]
        added = [c.entry_id for c in rev.changes if c.op == "add"] if rev and written else []
        line = f"{rev_line(rev)}; added {', '.join(added)}" if added else rev_line(rev)
        emit(
            as_json,
            {
                "status": "created" if added else "unchanged",
                "entries": added,
                "revision": rev.to_dict() if rev else None,
            },
            line,
        )

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


cli.add_command(_state_command("forget", "Mark entries inactive (history is kept; reactivate restores them)."))
cli.add_command(_state_command("reactivate", "Make inactive entries active again, at the same version."))


@cli.command()
@click.argument("query")
@click.option("--memory", "memories", multiple=True, help="Memory id to search (repeatable).")
@click.option("--all", "all_memories", is_flag=True, help="Search every Memory in the store.")
@click.option("--limit", default=8, show_default=True, type=int, help="How many distinct memories to return.")
@click.option(
    "--mode",
    type=click.Choice(["auto", "fts", "vector", "hybrid"]),
    default="auto",
    show_default=True,
    help="auto = hybrid when vectors are complete, else full-text (the mode used is reported).",
)
@click.option("--kind", "kinds", multiple=True, help="Only this kind (repeatable).")
@click.option("--tag", "tags", multiple=True, help="Only entries with this tag (repeatable, all must match).")
@click.option("--scope", "in_scopes", multiple=True, help="Search this scope's Memory (repeatable; tiers combine).")
@click.option(
    "--order",
    type=click.Choice(["relevance", "priority"]),
    default="relevance",
    show_default=True,
    help="priority = mandatory, important, normal, then newest (Graphit); a score never outranks that.",
)
@click.option("--important/--not-important", "important", default=None, help="Filter on the important flag.")
@click.option("--mandatory/--not-mandatory", "mandatory", default=None, help="Filter on the mandatory flag.")
@click.option("--exclude-mandatory", is_flag=True, help="Leave out mandatory memories (already loaded in full).")
@click.option("--include-superseded", is_flag=True, help="Also match archived versions (marked superseded).")
@click.option("--no-precedence", is_flag=True, help="Keep entries a more specific scope shadows.")
@json_option
@click.pass_context
def search(
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
    as_json: bool,
) -> None:
    """Search memories (default: the scope's Memory)."""

    async def body(svc: MemoryService) -> None:
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
        )
        lines = [f"mode: {result.mode}" + (f" ({result.fallback_reason})" if result.fallback_reason else "")]
        for h in result.hits:
            head = f"[{h.kind}] {h.title + ': ' if h.title else ''}"
            note = f"  (superseded; current {h.current_entry_version_id})" if h.superseded else ""
            lines.append(f"{h.entry_id}  {h.score:.4f}  {head}{h.text.splitlines()[0][:100]}{note}")
        lines.extend(
            f"shadowed: {s.entry_id} ({s.scope}) by {s.shadowed_by} ({s.shadowed_by_scope})" for s in result.shadowed
        )
        if not result.hits:
            lines.append("no matches")
        emit(as_json, result.to_dict(), "\n".join(lines))

    run(ctx, as_json, body)


@cli.command()
@click.argument("entry")
@click.option("--memory", help="Read the entry as of this Memory's head (default: its own Memory).")
@click.option("--revision", type=int, help="Read the entry as of this Revision (point in time).")
@json_option
@click.pass_context
def show(ctx: click.Context, entry: str, memory: str | None, revision: int | None, as_json: bool) -> None:
    """Show an entry (or an exact version ver_…) as Markdown with YAML frontmatter."""

    async def body(svc: MemoryService) -> None:
        at: Any = None
        if revision is not None:
            mid = memory or (await svc.get(entry)).memory_id
            at = await svc.revision(mid, revision)
        elif memory:
            at = memory
        version = await svc.get(entry, memory=at)
        markdown = await svc.source(version.entry_version_id)
        emit(as_json, {"version": version.to_dict(), "markdown": markdown}, markdown.rstrip("\n"))

    run(ctx, as_json, body)


@cli.command()
@click.argument("entry")
@json_option
@click.pass_context
def history(ctx: click.Context, entry: str, as_json: bool) -> None:
    """Walk an entry's revision chain, oldest first."""

    async def body(svc: MemoryService) -> None:
        items = await svc.history(entry)
        lines = [
            f"v{h.version.version}  {h.version.entry_version_id}  {h.status:<10}  {h.version.provenance.created_at}  "
            f"{h.version.provenance.author or '-'}  {h.version.entry_content_hash[:12]}  {h.version.text[:60]!r}"
            for h in items
        ]
        emit(as_json, {"history": [h.to_dict() for h in items]}, "\n".join(lines))

    run(ctx, as_json, body)


@cli.command()
@click.option("--memory", help="Memory id (default: the scope's Memory).")
@click.option("--since", "since", type=int, help="Exclusive lower bound (0 = whole history).")
@json_option
@click.pass_context
def changes(ctx: click.Context, memory: str | None, since: int | None, as_json: bool) -> None:
    """List what each Revision changed (compact: op, entry, versions, reason)."""
    from ..domain.errors import InvalidInput

    async def body(svc: MemoryService) -> None:
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

    run(ctx, as_json, body)


@cli.command()
@click.option("--memory", help="Memory id (default: the scope's Memory).")
@click.option("--no-dedupe", is_flag=True, help="Skip exact deduplication.")
@click.option("--no-normalize", is_flag=True, help="Skip reference normalization.")
@json_option
@click.pass_context
def organize(ctx: click.Context, memory: str | None, no_dedupe: bool, no_normalize: bool, as_json: bool) -> None:
    """Deduplicate exact copies and normalize references, in one Revision."""
    from ..domain.errors import InvalidInput

    async def body(svc: MemoryService) -> None:
        async def once() -> Revision:
            head = await memory_of(svc, ctx.obj, memory)
            if head is None:
                raise InvalidInput(f"scope {ctx.obj.scope} has no Memory yet")
            return await svc.organize(head, dedupe=not no_dedupe, normalize=not no_normalize)

        rev = await svc.retrying(once)
        emit(as_json, {"revision": rev.to_dict()}, rev_line(rev))

    run(ctx, as_json, body)


@cli.command()
@json_option
@click.pass_context
def memories(ctx: click.Context, as_json: bool) -> None:
    """List every Memory in the store with its head and scope."""

    async def body(svc: MemoryService) -> None:
        heads = await svc.memories()
        scopes = {m: s for s, m in await svc.scopes()}
        lines = [
            f"{h.memory_id}  r{h.revision}  {h.active_count}/{h.entry_count} active  {scopes.get(h.memory_id, '')}"
            for h in heads
        ]
        payload = {"memories": [{**h.to_dict(), "scope": scopes.get(h.memory_id)} for h in heads]}
        emit(as_json, payload, "\n".join(lines) or "no memories yet")

    run(ctx, as_json, body)


@cli.command()
@json_option
@click.pass_context
def verify(ctx: click.Context, as_json: bool) -> None:
    """Recheck every hash, manifest and projection; exit 6 on damage (nothing is repaired)."""

    async def body(svc: MemoryService) -> None:
        report = await svc.verify()
        lines = [
            f"revisions {report.revisions_checked}, versions {report.versions_checked}, manifest nodes "
            f"{report.nodes_checked}, projection rows {report.projections_checked}",
            *(f"AUTHORITY DAMAGE: {d}" for d in report.authority_damage),
            *(f"projection damage: {d}" for d in report.projection_damage),
        ]
        if report.projection_damage and not report.authority_damage:
            lines.append("projections can be rebuilt: memstone rebuild-projections")
        lines.append("ok" if report.ok else "damaged")
        emit(as_json, report.to_dict(), "\n".join(lines))
        if not report.ok:
            sys.exit(6)

    run(ctx, as_json, body)


@cli.command()
@json_option
@click.pass_context
def migrate(ctx: click.Context, as_json: bool) -> None:
    """Create the store if needed and bring its schema to this release's version (opening does it too)."""

    async def body(svc: MemoryService) -> None:
        state = svc.backend.state
        applied = ", ".join(str(v) for v in state.applied_migrations) or "none (already current)"
        emit(
            as_json,
            {"schema_version": state.schema_version, "applied": list(state.applied_migrations)},
            f"schema version {state.schema_version}; migrations applied: {applied}",
        )

    run(ctx, as_json, body)


@cli.command("rebuild-projections")
@json_option
@click.pass_context
def rebuild_projections(ctx: click.Context, as_json: bool) -> None:
    """Rebuild head rows and the full-text index from authority (refused if authority is damaged)."""

    async def body(svc: MemoryService) -> None:
        report = await svc.rebuild_projections()
        emit(
            as_json,
            report.to_dict(),
            f"rebuilt {report.projections_checked} projection rows; " + ("ok" if report.ok else "still damaged"),
        )
        if not report.ok:
            sys.exit(6)

    run(ctx, as_json, body)


def _progress(label: str) -> Callable[[int, int], None]:
    def show(done: int, total: int) -> None:
        click.echo(f"\r{label}: {done}/{total}", nl=False, err=True)

    return show


@cli.command()
@click.option("--backfill", is_flag=True, required=True, help="Embed every active entry that has no vector yet.")
@click.option("--batch", default=64, show_default=True, type=int, help="Entries embedded per model call.")
@json_option
@click.pass_context
def embed(ctx: click.Context, backfill: bool, batch: int, as_json: bool) -> None:
    """Fill the vector projection (resumable: a rerun after a kill picks up what is missing)."""

    async def body(svc: MemoryService) -> None:
        done = await svc.backfill(batch=batch, progress=None if as_json else _progress("embedded"))
        if not as_json:
            click.echo(err=True)
        profile = svc.indexer.profile.profile_id if svc.indexer else None
        emit(as_json, {"embedded": done, "profile": profile}, f"embedded {done} entries with {profile}")

    run(ctx, as_json, body)


@cli.command()
@click.option(
    "--profile", "profile", required=True, help="The embedding profile to migrate to, e.g. use-multilingual-v3."
)
@click.option("--batch", default=64, show_default=True, type=int, help="Entries embedded per model call.")
@json_option
@click.pass_context
def reembed(ctx: click.Context, profile: str, batch: int, as_json: bool) -> None:
    """Migrate the store to another embedding model; writes pause until every entry is re-embedded."""
    from ..embedding import load_model

    ctx.obj.embedding = ctx.obj.embedding or "none"

    async def body(svc: MemoryService) -> None:
        model = load_model(profile)
        done = await svc.reembed(model, batch=batch, progress=None if as_json else _progress("re-embedded"))
        if not as_json:
            click.echo(err=True)
        emit(as_json, {"embedded": done, "profile": profile}, f"migrated to {profile}: {done} entries embedded")

    run(ctx, as_json, body)


for _command in AGENT_COMMANDS:  # mcp, hook, install, doctor (cli/agents.py)
    cli.add_command(_command)


def main() -> None:
    cli(prog_name="memstone")


if __name__ == "__main__":
    main()
