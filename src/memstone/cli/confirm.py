"""The purge's confirmation: a rule of the CLI, the same on a local store and against a team server."""

from __future__ import annotations

import sys

import click


def confirm_purge(entry: str, reason: str | None, versions: tuple[int, ...], yes: bool) -> str:
    """The purge's reason; refuse a purge without one, or unconfirmed (no --yes and no terminal, or the user said
    no): the same on a local store and against a team server (cli/remote_records.py)."""
    from ..domain.errors import InvalidInput

    if not reason or not reason.strip():
        raise InvalidInput("a purge needs a reason", hint='add --reason "why it must be erased"')
    if not yes:
        if not sys.stdin.isatty():
            raise InvalidInput("a purge cannot be undone and needs confirmation", hint="add --yes")
        what = f"version(s) {', '.join(map(str, versions))} of {entry}" if versions else f"every version of {entry}"
        if not click.confirm(f"Erase the content of {what}? This cannot be undone", err=True):
            raise InvalidInput("purge cancelled; nothing was erased")
    return reason


__all__ = ["confirm_purge"]
