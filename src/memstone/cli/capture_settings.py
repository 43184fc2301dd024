"""``memstone capture-settings show|set``: capture's per-scope modes and options, kept in the store itself.

They used to be a JSON file beside a SQLite database, edited by hand; now they live in the store (any engine), so
every hook and server on that store reads the same settings. ``set --from-file`` takes that old JSON form.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from .options import json_option

if TYPE_CHECKING:
    from ..service import MemoryService


def _run(ctx: click.Context, as_json: bool, body: Callable[[MemoryService], Coroutine[Any, Any, None]]) -> None:
    """Run ``body`` on the store (:func:`cli.main.run`, opened without the embedding model; ``show`` never creates
    a store, ``set`` creates it if missing)."""
    from .main import run

    run(ctx, as_json, body, model=False)


def _show(data: dict[str, object], as_json: bool) -> None:
    if as_json:
        click.echo(json.dumps({"settings": data}, ensure_ascii=False, indent=2))
        return
    modes = data.get("modes") or {}
    assert isinstance(modes, dict)
    lines = [f"default mode   {data['default_mode']}"]
    lines += [f"  {scope}  {mode}" for scope, mode in modes.items()]
    lines += [f"record sources {data['record_sources']}", f"working notes  {data['working_notes']}"]
    lines += [f"user scope     {data['user_scope']}", f"extractor      {data['extractor'] or 'none'}"]
    click.echo("\n".join(lines))


@click.group("capture-settings")
def capture_settings() -> None:
    """Capture's settings in the store: the mode per scope (auto, review, off) and its options."""


@capture_settings.command("show")
@json_option
@click.pass_context
def show(ctx: click.Context, as_json: bool) -> None:
    """Print the capture settings kept in the store (the defaults when none were set)."""

    async def body(svc: MemoryService) -> None:
        from ..capture import load_capture_settings

        _show((await load_capture_settings(svc)).to_dict(), as_json)

    _run(ctx, as_json, body)


@capture_settings.command("set")
@click.option("--default-mode", type=click.Choice(["auto", "review", "off"]), help="The mode of every other scope.")
@click.option("--mode", "modes", multiple=True, metavar="SCOPE=MODE", help="One scope's mode (repeatable).")
@click.option(
    "--from-file", "from_file", type=click.Path(dir_okay=False, path_type=Path), help="Start from a JSON file."
)
@json_option
@click.pass_context
def set_(
    ctx: click.Context, default_mode: str | None, modes: tuple[str, ...], from_file: Path | None, as_json: bool
) -> None:
    """Change the capture settings kept in the store (every hook and server on it uses them from the next event)."""

    async def body(svc: MemoryService) -> None:
        from ..capture import CaptureSettings, load_capture_settings, save_capture_settings
        from ..domain.errors import InvalidInput
        from ..domain.scopes import canonical_scope

        if from_file is not None and not from_file.exists():
            raise InvalidInput(f"no file {from_file}", hint="name a JSON file of capture settings")
        settings = CaptureSettings.load(from_file) if from_file else await load_capture_settings(svc)
        if default_mode:
            settings = settings.with_mode(None, default_mode)  # type: ignore[arg-type]
        for pair in modes:
            scope, sep, mode = pair.rpartition("=")
            if not sep or not scope:
                raise InvalidInput(f"invalid --mode {pair!r}", hint="write SCOPE=MODE, e.g. memstone://orgs/a=review")
            settings = settings.with_mode(canonical_scope(scope), mode)  # type: ignore[arg-type]
        await save_capture_settings(svc, settings)
        _show(settings.to_dict(), as_json)

    _run(ctx, as_json, body)


__all__ = ["capture_settings"]
