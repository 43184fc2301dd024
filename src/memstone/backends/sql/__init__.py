"""The engine-neutral SQL store core: every row-level statement and rule written once, over engine parts.

``StoreCore(engine)`` is the ``MemoryBackend``; :mod:`memstone.backends.sql.engine` documents the parts an engine
supplies (DDL and migrations, transactions and locks, a full-text dialect, a vector codec) and the isolation
contract it must meet.
"""

from .core import StoreCore
from .engine import (
    ArchiveRow,
    Candidates,
    Conn,
    Dialect,
    Engine,
    FtsRow,
    FullText,
    Migrator,
    Nearest,
    VectorCodec,
    VectorMeta,
)
from .projection import HeadRow, pack_vector, unpack_vector
from .vectors import VectorCandidate

__all__ = [
    "ArchiveRow",
    "Candidates",
    "Conn",
    "Dialect",
    "Engine",
    "FtsRow",
    "FullText",
    "HeadRow",
    "Migrator",
    "Nearest",
    "StoreCore",
    "VectorCandidate",
    "VectorCodec",
    "VectorMeta",
    "pack_vector",
    "unpack_vector",
]
