"""What the SQLite engine's parts read of the engine: its connection and its file's path."""

from __future__ import annotations

from typing import Protocol

import apsw


class SQLiteFile(Protocol):
    """The open file of an ``engine.SQLiteEngine`` (a Protocol, so a part needs no import of the engine)."""

    @property
    def raw(self) -> apsw.Connection: ...
    @property
    def path(self) -> str: ...


__all__ = ["SQLiteFile"]
