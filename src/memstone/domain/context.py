"""Neighbour context (issue 15): entries written next to a strong hit carry its context ("yes, last Tuesday" is
found through the question it answers).

The rule, fitted on the benchmark's dev halves only (``bench/context_replay.py``): the first ``CONTEXT_KEEP``
hits keep their ranks; then come the entries written just before and just after each of them in the same Memory
(in the order of their anchors), then the rest of the ranking, cut at the limit. A hit's own text and citation
are unchanged; a neighbour is marked ``context`` in ``matched_by``, ``ranks["context"]`` is its anchor's rank and
``contributions["context"]`` its anchor's score.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from .ids import EntryId, MemoryId
from .model import MemoryHit

CONTEXT_KEEP = 7  # hits 1..7 keep their ranks; the neighbours of those seven come next


def _key(h: MemoryHit) -> tuple[MemoryId, EntryId]:
    return h.memory_ref.memory_id, h.entry_id


def context_anchors(hits: Sequence[MemoryHit], limit: int) -> list[MemoryHit]:
    """The hits whose neighbours are looked up: the first ``CONTEXT_KEEP`` current ones, when there is room."""
    if limit <= CONTEXT_KEEP:
        return []
    return [h for h in hits[:CONTEXT_KEEP] if not h.superseded]


def with_context(
    hits: Sequence[MemoryHit],
    neighbours: Sequence[tuple[EntryId, MemoryHit]],
    limit: int,
    *,
    drop: frozenset[EntryId] = frozenset(),
) -> list[MemoryHit]:
    """``hits`` (best first) with the neighbours of the first ``CONTEXT_KEEP`` placed after them, cut at ``limit``.

    ``neighbours`` are (anchor entry id, neighbour hit) in anchor order, as ``NeighboursQuery`` answers; a
    neighbour already among the first hits stays where it is, one ranked lower moves up (keeping its channels),
    entries in ``drop`` (shadowed by precedence) are skipped. Scores stay in descending order: the placed
    neighbours get evenly spaced scores between the last kept hit's and the next remaining hit's (never below
    their own).
    """
    top = list(hits[:CONTEXT_KEEP])
    if limit <= CONTEXT_KEEP or not top or not neighbours:
        return list(hits[:limit])
    rank_of = {h.entry_id: i for i, h in enumerate(top, 1)}
    anchor_of = {h.entry_id: h for h in top}
    seen = {_key(h) for h in top}
    own = {_key(h): h for h in hits[CONTEXT_KEEP:]}
    placed: list[tuple[MemoryHit, MemoryHit]] = []
    for anchor_id, n in neighbours:
        anchor = anchor_of.get(anchor_id)
        if anchor is None or _key(n) in seen or n.entry_id in drop:
            continue
        seen.add(_key(n))
        placed.append((anchor, own.get(_key(n), n)))
    room = limit - len(top)
    placed = placed[:room]
    rest = [h for h in hits[CONTEXT_KEEP:] if _key(h) not in seen][: room - len(placed)]
    high = top[-1].score
    low = rest[0].score if rest else 0.0
    out = list(top)
    last = high
    for j, (anchor, n) in enumerate(placed, 1):
        score = min(last, max(n.score, high - (high - low) * j / (len(placed) + 1)))
        last = score
        out.append(
            replace(
                n,
                score=score,
                scope=n.scope if n.scope is not None else anchor.scope,
                matched_by=(*n.matched_by, "context"),
                ranks={**n.ranks, "context": rank_of[anchor.entry_id]},
                contributions={**n.contributions, "context": anchor.score},
            )
        )
    return out + rest


__all__ = ["CONTEXT_KEEP", "context_anchors", "with_context"]
