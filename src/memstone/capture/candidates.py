"""The values that flow through capture: candidates, skipped statements, review flags and planned writes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from ..domain.fields import FieldDict, PlainDict
from ..domain.ids import EntryId, EntryVersionId
from .events import Scope

__all__ = ["Candidate", "CandidateOrigin", "Plan", "PlanAction", "ReviewFlag", "Skip"]

CandidateOrigin = Literal["statement", "correction", "build_file", "working_note", "submitted", "model"]
PlanAction = Literal["add", "revise", "unchanged"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Candidate(PlainDict):
    """An untrusted proposal for one entry. It becomes an entry only after admission and dedup.

    ``evidence`` names the Sources that support it by draft key (``event``, ``file:pyproject.toml``).
    ``slug`` is a stable subject key (``build-test-command``, ``project-lifecycle``) that makes a later
    candidate on the same subject revise the entry instead of adding a second one. ``replaces`` holds the
    terms a correction says are wrong ("use X instead of **Y**"), used to find the entry it corrects. ``resets``:
    admitted only because it sets a stored subject to another value (resets.py); the planner takes that entry.
    """

    kind: str
    text: str
    origin: CandidateOrigin
    scope: Scope = "project"
    title: str | None = None
    tags: tuple[str, ...] = ()
    slug: str | None = None
    important: bool = False
    mandatory: bool = False
    evidence: tuple[str, ...] = ("event",)
    replaces: tuple[str, ...] = ()
    stage: str | None = None  # the lifecycle stage a lifecycle fact names (development, production, beta, ...)
    resets: bool = False

    @classmethod
    def from_dict(cls, data: dict[str, object]) -> Candidate:
        def strs(key: str) -> tuple[str, ...]:
            value = data.get(key) or []
            assert isinstance(value, list)
            return tuple(str(v) for v in value)

        scope = data.get("scope", "project")
        origin = data.get("origin", "model")
        assert scope in ("project", "user")
        assert origin in ("statement", "correction", "build_file", "working_note", "submitted", "model")
        title, slug, stage = data.get("title"), data.get("slug"), data.get("stage")
        return cls(
            kind=str(data["kind"]),
            text=str(data["text"]),
            origin=origin,
            scope=scope,
            title=title if isinstance(title, str) else None,
            tags=strs("tags"),
            slug=slug if isinstance(slug, str) else None,
            important=bool(data.get("important", False)),
            mandatory=bool(data.get("mandatory", False)),
            evidence=strs("evidence") or ("event",),
            replaces=strs("replaces"),
            stage=stage if isinstance(stage, str) else None,
            resets=bool(data.get("resets", False)),
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class Skip(FieldDict):
    """A piece of an event that produced no candidate, and why (``question``, ``one_off``, ``speculation``, …)."""

    excerpt: str
    reason: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ReviewFlag(PlainDict):
    """A live entry whose evidence a Git change touched: a person or agent should re-check it.

    A flag never carries new content; it is not a write. Capture puts it in the review queue.
    """

    entry_id: EntryId
    entry_version_id: EntryVersionId
    entry_excerpt: str
    paths: tuple[str, ...]
    base_commit: str
    head_commit: str
    reason: str = "evidence_changed"


@dataclass(frozen=True, slots=True, kw_only=True)
class Plan:
    """What dedup decided for one admitted candidate against the live entries of its target Memory.

    ``add`` makes a new entry; ``revise`` writes ``text`` as a new version of ``entry_id``; ``unchanged`` means
    a near-duplicate live entry already says it (a no-op). ``score`` is the similarity that decided it.
    """

    candidate: Candidate
    action: PlanAction
    text: str
    entry_id: EntryId | None = None
    entry_version_id: EntryVersionId | None = None
    score: float = 0.0
    why: str = ""
    tags: tuple[str, ...] = field(default=())

    def to_dict(self) -> dict[str, object]:
        return {
            "candidate": self.candidate.to_dict(),
            "action": self.action,
            "text": self.text,
            "entry_id": self.entry_id,
            "entry_version_id": self.entry_version_id,
            "score": round(self.score, 3),
            "why": self.why,
        }
