"""The read query behind neighbour context (issue 15, ``domain/context.py``), beside the ports it extends.

It is a port like those in ``ports.py`` (which stays within the 600-line bound): every SQL engine answers it in
``backends/sql/search.py``.
"""

from __future__ import annotations

from dataclasses import dataclass

from .domain.filters import EntryFilter
from .domain.ids import EntryId
from .domain.model import ArtifactRef, MemoryHit
from .ports import Query


@dataclass(frozen=True, slots=True, kw_only=True)
class NeighboursQuery(Query[list[tuple[EntryId, MemoryHit]]]):
    """(anchor, hit) for the active entries written just before and just after each anchor in its Memory.

    Write order is entry-id order (entry ids are ULIDs minted in creation order). Each neighbour is verified
    against the head's manifest like a search hit and must pass ``filters``; an
    anchor whose Revision is no longer its Memory's head gets none (a neighbour is cited at that Revision).
    Anchors in their order, each one's previous entry before its next one; score 0, no channel yet.
    """

    anchors: tuple[tuple[ArtifactRef, EntryId], ...]
    filters: EntryFilter


__all__ = ["NeighboursQuery"]
