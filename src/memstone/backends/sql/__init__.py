"""The engine-neutral SQL store core: every row-level statement and rule written once, over engine parts.

``StoreCore(engine)`` is the ``MemoryBackend``; :mod:`memstone.backends.sql.engine` documents the parts an engine
supplies (DDL and migrations, transactions and locks, a full-text dialect, a vector codec) and the isolation
contract it must meet.
"""

from . import engine
from .core import StoreCore
from .engine import *  # noqa: F403  (the engine contract: every name of engine.__all__)
from .projection import HeadRow, pack_vector, unpack_vector
from .vectors import VectorCandidate

__all__ = ["HeadRow", "StoreCore", "VectorCandidate", "pack_vector", "unpack_vector"]
__all__ += engine.__all__
