"""Click options that several commands declare alike: one definition of each kind of value."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

import click

F = TypeVar("F", bound=Callable[..., object])


def seconds_option(flag: str, default: float, help: str) -> Callable[[F], F]:
    """Seconds between a loop's checks (at least 0.05), its default shown in ``--help``."""
    return click.option(flag, type=click.FloatRange(min=0.05), default=default, show_default=True, help=help)


def count_option(flag: str, default: int, help: str) -> Callable[[F], F]:
    """A whole count of at least one, its default shown in ``--help``."""
    return click.option(flag, type=click.IntRange(min=1), default=default, show_default=True, help=help)


def choice_option(flag: str, choices: Sequence[str], default: str, help: str | None = None) -> Callable[[F], F]:
    """One of fixed ``choices``, ``default`` when not given, shown in ``--help``."""
    return click.option(flag, type=click.Choice(choices), default=default, show_default=True, help=help)


JSON_HELP = "Print machine-readable JSON."


def json_flag(help: str = JSON_HELP) -> Callable[[F], F]:
    """``--json`` (the ``as_json`` parameter): print JSON instead of text; ``help`` says what it prints."""
    return click.option("--json", "as_json", is_flag=True, help=help)


def json_option(fn: F) -> F:
    """``--json``: print machine-readable JSON (every command has it)."""
    return json_flag()(fn)


def entry_at_options(verb: str) -> Callable[[F], F]:
    """``ENTRY`` with ``--memory`` and ``--revision``: the entry as of a Memory's head or of a Revision of it;
    ``verb`` is what the command does with it ("Read", "Cite")."""

    def apply(fn: F) -> F:
        fn = click.option("--revision", type=int, help=f"{verb} the entry as of this Revision (point in time).")(fn)
        fn = click.option("--memory", help=f"{verb} the entry as of this Memory's head (default: its own Memory).")(fn)
        return click.argument("entry")(fn)

    return apply


def quiet_option(fn: F) -> F:
    """``--quiet``: no progress lines on stderr (the long-running commands)."""
    return click.option("--quiet", is_flag=True, help="No progress lines on stderr.")(fn)


__all__ = [
    "JSON_HELP",
    "choice_option",
    "count_option",
    "entry_at_options",
    "json_flag",
    "json_option",
    "quiet_option",
    "seconds_option",
]
