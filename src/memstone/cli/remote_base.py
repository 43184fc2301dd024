"""What the remote commands share (cli/remote.py, cli/remote_records.py): their types and small helpers."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Protocol

import click

from ..domain.errors import InvalidInput
from ..remote.client import RemoteClient


class Options(Protocol):
    """What a remote command reads of the group's options (``cli.main.Context``)."""

    @property
    def url(self) -> str: ...

    @property
    def scope(self) -> str: ...

    @property
    def read_scopes(self) -> Sequence[str]: ...

    def token(self) -> str | None: ...


Payload = tuple[object, str]
Handler = Callable[[click.Context, RemoteClient], Awaitable[Payload]]


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _no_memory_option(params: Mapping[str, Any]) -> None:
    if params.get("memory") or params.get("memories") or params.get("all_memories"):
        raise InvalidInput(
            "a team server addresses Memories by scope, not by Memory id", hint="use --scope SCOPE instead of --memory"
        )


__all__ = ["Handler", "Options", "Payload", "_dict", "_no_memory_option"]
