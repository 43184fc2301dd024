"""Storage upkeep (issue #14, the daemon's due-time gate): the engine part that keeps a long-lived store fast and
small without changing what it holds: merge the full-text index's segments, checkpoint the log, and reclaim free
space. Unlike a purge's compaction (``purge.py``) it never blocks writers for long and never rewrites rows.

An engine offers it as ``engine.upkeep`` (an :class:`UpkeepCodec`); an engine without one (OceanBase merges its
own storage) reports that there is nothing to do. The core runs it on the engine's worker
(:meth:`StoreCore.storage_upkeep <memstone.backends.sql.core.StoreCore.storage_upkeep>`).
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from .engine import Engine


@runtime_checkable
class UpkeepCodec(Protocol):
    """The engine part of storage upkeep (``engine.upkeep``)."""

    def upkeep(self, engine: Engine) -> dict[str, object]:
        """Optimize the full-text index, checkpoint, vacuum; returns what was done (each step by name)."""
        ...


def codec_of(engine: Engine) -> UpkeepCodec | None:
    part = getattr(engine, "upkeep", None)
    return part if isinstance(part, UpkeepCodec) else None


def run_upkeep(engine: Engine) -> dict[str, object]:
    """One upkeep pass (on the engine's worker thread); ``{"skipped": why}`` when the engine has no part."""
    codec = codec_of(engine)
    if codec is None:
        return {"skipped": f"the {engine.dialect.name} engine keeps its own storage"}
    return codec.upkeep(engine)


__all__ = ["UpkeepCodec", "codec_of", "run_upkeep"]
