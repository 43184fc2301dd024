"""Click options that several commands declare alike: one definition of each kind of value."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import click

F = TypeVar("F", bound=Callable[..., object])


def seconds_option(flag: str, default: float, help: str) -> Callable[[F], F]:
    """Seconds between a loop's checks (at least 0.05), its default shown in ``--help``."""
    return click.option(flag, type=click.FloatRange(min=0.05), default=default, show_default=True, help=help)


def count_option(flag: str, default: int, help: str) -> Callable[[F], F]:
    """A whole count of at least one, its default shown in ``--help``."""
    return click.option(flag, type=click.IntRange(min=1), default=default, show_default=True, help=help)


__all__ = ["count_option", "seconds_option"]
