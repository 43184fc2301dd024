"""``memstone`` CLI: one command per service verb, ``--json`` on every command. The CLI's composition root."""

from __future__ import annotations

import contextlib
import functools
import importlib
import json
from collections.abc import Callable, Coroutine, Iterator, Mapping, MutableMapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from .. import __version__
from .agents import AGENT_COMMANDS
from .options import json_option as json_option  # re-exported: the command modules import it from here

if TYPE_CHECKING:
    from ..config import Config
    from ..domain.model import Revision
    from ..service import MemoryService

# At module level only click, the standard library and cli/agents.py: ``memstone hook`` (run on every agent
# prompt) and ``memstone --version`` must not pay for the service, the store or the other commands' modules.
# Each command imports what it needs when it runs; the commands of the other cli/ modules (writes, reads,
# maintenance, records, imports, serve, config, review) load on first lookup (LazyCommands).

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
    # The core verbs (cli/writes.py, cli/reads.py) and store maintenance (cli/maintenance.py).
    **{name: (".writes", name) for name in ("remember", "forget", "reactivate", "organize")},
    **{name: (".reads", name) for name in ("search", "show", "history", "changes", "memories")},
    **{name: (".maintenance", name.replace("-", "_")) for name in ("verify", "migrate", "rebuild-projections")},
    **{name: (".maintenance", name) for name in ("embed", "reembed")},
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
    "capture-settings": (".capture_settings", "capture_settings"),
    # Governed maintenance (memstone.maintenance): start a run; its runs and proposals.
    "maintain": (".maintain", "maintain_command"),
    "maintenance": (".maintain", "maintenance_group"),
    "daemon": (".daemon", "daemon_command"),
    # Real erasure of an entry's content (tombstones kept).
    "purge": (".purge", "purge"),
    # A whole store to another engine, history exact.
    "copy": (".copy", "copy_command"),
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

    def token(self) -> str | None:
        """The API token for a team server (``MEMSTONE_TOKEN``)."""
        return self.config.get("token")

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


def emit(as_json: bool, payload: object, human: str) -> None:
    if as_json:
        click.echo(json.dumps(payload, ensure_ascii=False, indent=2))
    else:
        click.echo(human)


# Commands that only read, by their path under ``memstone``: they never create a store (a typo'd --url is an
# error, not a new empty database). Keyed by the whole path, so ``maintenance show`` is not ``show``.
READ_COMMANDS = frozenset(
    {
        "maintenance runs",
        "maintenance proposals",
        "maintenance show",
        "maintenance status",
        "capture-settings show",
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


def command_path(ctx: click.Context) -> str:
    """The command's path under ``memstone``: ``"search"``, ``"maintenance runs"``."""
    names: list[str] = []
    while ctx.parent is not None:
        names.append(ctx.info_name or "")
        ctx = ctx.parent
    return " ".join(reversed(names))


def run(
    ctx: click.Context,
    as_json: bool,
    body: Callable[[MemoryService], Coroutine[Any, Any, None]],
    *,
    create: bool | None = None,
    model: bool = True,
) -> None:
    """Open the store, run ``body``, close; map memstone errors to an exit code and a clear message.

    A command in READ_COMMANDS (or run with ``create=False``) opens with ``create=False``: on a path with no store
    it fails with NotFound. ``model=False`` opens the store without its embedding model.
    """
    import asyncio

    from ..domain.errors import MemstoneError
    from ..service import open_service
    from .errors import fail

    obj: Context = ctx.obj
    from ..remote import is_remote

    if is_remote(obj.url):  # a team server: the command is a few /api calls (cli/remote.py)
        from .remote import run_remote_command

        return run_remote_command(ctx, as_json)

    async def main() -> None:
        async with open_service(
            obj.url,
            surface="human",
            author=obj.config.get("author"),
            embedding=obj.model_option() if model else None,
            create=command_path(ctx) not in READ_COMMANDS if create is None else create,
        ) as svc:
            await body(svc)

    try:
        asyncio.run(main())
    except MemstoneError as exc:
        fail(as_json, exc)


StoreBody = Callable[..., Coroutine[Any, Any, None]]


def store_command(name: str | None = None, *, group: click.Group | None = None) -> Callable[[StoreBody], click.Command]:
    """``async def f(svc, ctx, **params)`` as the command ``name`` (of ``group``, if given): its options, ``--json``
    among them, decorate ``f`` below this, its docstring is the help, and :func:`run` opens the store for it (or
    sends it to a team server) and turns a memstone error into its exit code."""

    def decorate(body: StoreBody) -> click.Command:
        @functools.wraps(body)  # the help text and the options declared on ``body``
        def command(ctx: click.Context, /, **params: Any) -> None:
            run(ctx, params["as_json"], lambda svc: body(svc, ctx, **params))

        make = click.command if group is None else group.command
        return make(name)(click.pass_context(command))

    return decorate


def rev_line(rev: Revision | None) -> str:
    if rev is None:
        return "nothing to save"
    return f"{rev.memory_id} revision {rev.revision} ({rev.active_count} active of {rev.entry_count} entries)"


async def memory_of(svc: MemoryService, obj: Context, memory: str | None, entry: str | None = None) -> Revision | None:
    if memory is not None:  # an empty --memory or entry is refused as an id, not read as "none given" (tests/fuzz)
        return await svc.head(memory)
    if entry is not None:
        return await svc.head((await svc.get(entry)).memory_id)
    return await svc.resolve(obj.scope)


def show_version(ctx: click.Context, value: bool) -> None:
    """``--version``: memstone's version, then the store's schema version (read with the stdlib, never opened)."""
    if not value or ctx.resilient_parsing:
        return
    from ..backends.peek import peek_schema_version
    from ..backends.url import store_location
    from ..config import DEFAULT_URL, Config
    from ..domain.errors import MemstoneError

    url: str | None = ctx.params.get("url")
    with contextlib.suppress(MemstoneError):  # a bad setting elsewhere must not hide the version
        url = Config.load({"url": url}, derive=False).url  # --url, else MEMSTONE_URL, else the default
    try:
        path = store_location(url or DEFAULT_URL)
        schema = f"schema version: {peek_schema_version(url or DEFAULT_URL)}"
    except MemstoneError as exc:  # a malformed URL: say so, and still print the version
        path, schema = str(url), exc.message
    click.echo(f"memstone, version {__version__}\nstore: {path} ({schema})")
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


for _command in AGENT_COMMANDS:  # mcp, hook, install, doctor (cli/agents.py)
    cli.add_command(_command)


def main() -> None:
    cli(prog_name="memstone")


if __name__ == "__main__":
    main()
