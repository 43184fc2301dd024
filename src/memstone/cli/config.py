"""``memstone config show``: every setting, its value and where it came from (memstone.config)."""

from __future__ import annotations

import json

import click

from .options import json_option


@click.group("config")
def config() -> None:
    """Show memstone's settings (argument > environment > file > derived > default)."""


@config.command("show")
@json_option
@click.pass_context
def show(ctx: click.Context, as_json: bool) -> None:
    """Print each setting with its value and its source; the global options count as arguments."""
    from ..domain.errors import MemstoneError
    from .errors import fail

    try:
        resolved = ctx.find_root().obj.config
    except MemstoneError as exc:
        fail(as_json, exc)
    rows = resolved.show()
    if as_json:
        payload = {"file": str(resolved.file), "cwd": str(resolved.cwd), "settings": rows}
        click.echo(json.dumps(payload, ensure_ascii=False, indent=2))
        return
    lines = [f"{'setting':<19} {'value':<50} source"]
    for row in rows:
        value = "-" if row["value"] is None else str(row["value"])
        where = row["source"] if row["source"] in ("argument", "default") else f"{row['source']} ({row['from']})"
        lines.append(f"{row['name']:<19} {value:<50} {where}")
    lines.append(f"settings file: {resolved.file}" + ("" if resolved.file.exists() else " (none)"))
    click.echo("\n".join(lines))


__all__ = ["config"]
