"""The provenance a Revision carries from the plan that wrote it (and a copy or import carries from a Revision):
its sources, artifacts, author, surface and time, passed on unchanged as one value."""

from __future__ import annotations

from typing import Protocol, TypedDict

from .ids import SourceId
from .model import ArtifactRef, Surface


class Stamped(Protocol):
    """Anything that carries a Revision's provenance: a WritePlan, a Revision, a Revision's exported metadata."""

    @property
    def sources(self) -> tuple[SourceId, ...]: ...
    @property
    def artifacts(self) -> tuple[ArtifactRef, ...]: ...
    @property
    def author(self) -> str | None: ...
    @property
    def surface(self) -> Surface: ...
    @property
    def created_at(self) -> str: ...


class Stamp(TypedDict):
    sources: tuple[SourceId, ...]
    artifacts: tuple[ArtifactRef, ...]
    author: str | None
    surface: Surface
    created_at: str


def stamp_of(x: Stamped) -> Stamp:
    """``x``'s provenance, as keyword arguments for the Revision, WritePlan or metadata that carries it on."""
    return Stamp(sources=x.sources, artifacts=x.artifacts, author=x.author, surface=x.surface, created_at=x.created_at)


__all__ = ["Stamp", "Stamped", "stamp_of"]
