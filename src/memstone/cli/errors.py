"""Error → exit code, the CLI's one mapping (by error class, never by message text)."""

from __future__ import annotations

import json
import sys
from typing import NoReturn

import click

from ..domain.errors import (
    AccessError,
    BackendError,
    CapabilityNotSupportedError,
    Conflict,
    IntegrityError,
    InvalidInput,
    MemstoneError,
    NotFound,
    by_class,
)

EXIT_CODES: tuple[tuple[type[MemstoneError], int], ...] = (
    (InvalidInput, 2),
    (Conflict, 3),
    (NotFound, 4),
    (CapabilityNotSupportedError, 5),
    (IntegrityError, 6),
    (BackendError, 1),
    (AccessError, 7),
)


def exit_code(exc: MemstoneError) -> int:
    return by_class(exc, EXIT_CODES, 1)


def fail(as_json: bool, exc: MemstoneError) -> NoReturn:
    """Print a memstone error (as ``{"error": …}`` with --json, else one line on stderr) and exit with its code."""
    if as_json:
        click.echo(json.dumps({"error": exc.to_dict()}, ensure_ascii=False, indent=2))
    else:
        click.echo(f"error: {exc}", err=True)
    sys.exit(exit_code(exc))
