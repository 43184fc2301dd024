"""What capture returns: one :class:`CaptureOutcome` per candidate or flag, summed up in a :class:`CaptureResult`;
and the :class:`Proposal` the pipeline makes for an event before dedup."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from ..domain.fields import plain_dict
from ..domain.ids import EntryId, EntryVersionId, MemoryId
from ..domain.model import Revision, Source
from ..domain.secrets import SecretFinding
from .admission import Admission
from .candidates import Candidate, ReviewFlag, Skip
from .extractor import TokenUsage
from .settings import CaptureMode

CaptureStatus = Literal["stored", "queued", "unchanged", "nothing", "refused", "off"]
OutcomeAction = Literal["added", "revised", "unchanged", "rejected", "queued", "flagged", "off"]


@dataclass(frozen=True, slots=True, kw_only=True)
class CaptureOutcome:
    """What happened to one candidate (or flag): added, revised, unchanged, rejected (with a reason), queued…"""

    action: OutcomeAction
    candidate: Candidate | None = None
    reason: str | None = None
    entry_id: EntryId | None = None
    entry_version_id: EntryVersionId | None = None
    memory_id: MemoryId | None = None
    queue_item: str | None = None
    flag: ReviewFlag | None = None
    score: float = 0.0
    detail: str = ""  # a rejection's explanation (e.g. the learned junk screen's probability and threshold)

    def to_dict(self) -> dict[str, object]:
        return {**plain_dict(self), "score": round(self.score, 3)}


@dataclass(frozen=True, slots=True, kw_only=True)
class CaptureResult:
    """The value :func:`capture` returns. ``status`` sums it up; ``outcomes`` has one row per candidate or flag.

    ``status``: ``stored`` (an entry was added or revised), ``queued`` (items wait in the review queue),
    ``unchanged`` (every candidate was already known), ``nothing`` (no candidate), ``refused`` (a secret: nothing
    at all was stored; ``reason`` says why without echoing it) or ``off`` (capture is off for the scope).
    """

    status: CaptureStatus
    mode: CaptureMode
    reason: str | None = None
    findings: tuple[SecretFinding, ...] = ()
    sources: tuple[Source, ...] = ()
    outcomes: tuple[CaptureOutcome, ...] = ()
    skipped: tuple[Skip, ...] = ()
    revisions: tuple[Revision, ...] = ()
    usage: TokenUsage = field(default_factory=TokenUsage)
    extractor_error: str | None = None

    def entries(self, *actions: OutcomeAction) -> tuple[EntryId, ...]:
        """Entry ids of the outcomes with these actions (default: added and revised)."""
        wanted = actions or ("added", "revised")
        return tuple(o.entry_id for o in self.outcomes if o.action in wanted and o.entry_id is not None)

    def to_dict(self) -> dict[str, object]:
        return {
            "status": self.status,
            "mode": self.mode,
            "reason": self.reason,
            "findings": [f.to_dict() for f in self.findings],
            "sources": [s.source_id for s in self.sources],
            "outcomes": [o.to_dict() for o in self.outcomes],
            "skipped": [s.to_dict() for s in self.skipped],
            "revisions": [str(r.ref) for r in self.revisions],
            "usage": self.usage.to_dict(),
            "extractor_error": self.extractor_error,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class Proposal:
    """Everything the pipeline proposes for one event, before dedup: admission decisions, flags, skips, cost."""

    admissions: tuple[Admission, ...] = ()
    flags: tuple[ReviewFlag, ...] = ()
    skipped: tuple[Skip, ...] = ()
    usage: TokenUsage = field(default_factory=TokenUsage)
    extractor_error: str | None = None
    vectors: dict[str, tuple[float, ...]] = field(default_factory=dict)  # the junk screen's, by semantic_key

    @property
    def admitted(self) -> tuple[Candidate, ...]:
        return tuple(a.candidate for a in self.admissions if a.admitted)


__all__ = ["CaptureOutcome", "CaptureResult", "CaptureStatus", "OutcomeAction", "Proposal"]
