"""Governed maintenance, as values: runs, proposals and the per-entry digest ledger (issue #14).

A maintenance run works on one scope. It lists only the entries whose content hash differs from the hash the
ledger recorded when a pass last saw them (digest gating: a run over unchanged memory lists nothing, writes
nothing and calls no model), judges them per (scope, kind) partition in a fixed order, and records a
:class:`Proposal` for each judgement, with the content hashes it was made on. In ``APPLY`` mode the surviving
proposals are written through the service's normal write path; a proposal whose entries changed since it was
made is ``SKIPPED_HASH_MISMATCH`` (final for that proposal; the next run sees the entries again). The run's
totals are derived from its proposals (:func:`totals`), never counted separately.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Literal, get_args

from .errors import InvalidInput, shown
from .fields import FieldDict, field_dict, plain_dict
from .ids import EntryId, MemoryId
from .model import STALE_TAG

MaintenanceMode = Literal["DRY_RUN", "APPLY"]
RunStatus = Literal["QUEUED", "RUNNING", "COMPLETED", "FAILED", "TIMED_OUT"]
# The partition order of the seed (Xema "The maintenance workflow"), then the mandatory-tier audit.
# ``summary``: a new entry that summarizes live ones (only the optional model judge writes summaries).
ProposalKind = Literal["duplicate", "prune", "slug", "stale", "summary", "empty", "mandatory"]
PROPOSAL_ORDER: tuple[ProposalKind, ...] = get_args(ProposalKind)
ProposalAction = Literal["merge", "retire", "rename", "flag_stale", "summarize", "demote", "inform"]
JudgeName = Literal["rules", "model"]  # who made a proposal: the deterministic judges or the optional model judge
ProposalStatus = Literal["PROPOSED", "APPLIED", "REJECTED", "SKIPPED_HASH_MISMATCH", "FAILED", "INFORMATIONAL"]
ACTIONS: tuple[ProposalAction, ...] = get_args(ProposalAction)
STATUSES: tuple[ProposalStatus, ...] = get_args(ProposalStatus)
MODES: tuple[MaintenanceMode, ...] = get_args(MaintenanceMode)
RUN_STATUSES: tuple[RunStatus, ...] = get_args(RunStatus)
TERMINAL_RUN: frozenset[str] = frozenset({"COMPLETED", "FAILED", "TIMED_OUT"})
DECIDED: frozenset[str] = frozenset({"APPLIED", "REJECTED", "SKIPPED_HASH_MISMATCH"})


def is_stale(tags: Iterable[str]) -> bool:
    """Whether an entry with these tags is flagged stale."""
    return STALE_TAG in tags


def parse_mode(value: str) -> MaintenanceMode:
    """``dry-run``/``DRY_RUN``/``apply``/``APPLY`` → the mode; anything else is InvalidInput."""
    norm = str(value).strip().upper().replace("-", "_")
    if norm == "DRY_RUN":
        return "DRY_RUN"
    if norm == "APPLY":
        return "APPLY"
    raise InvalidInput(f"unknown maintenance mode {shown(value)}", hint="use dry-run (the default) or apply")


@dataclass(frozen=True, slots=True, kw_only=True)
class Proposal:
    """One judgement of a run: what to do with which entries, on which content hashes, and why.

    ``entries`` lists the entries it is about; for a merge the first is the survivor and the rest are absorbed.
    ``hashes`` holds each entry's content hash when the proposal was made (what apply re-checks). ``text`` is
    a merge's survivor text (None keeps it) or a summary's text (a ``summarize`` writes it as a new entry that
    ``summarizes`` each of ``entries``), ``slug`` a rename's new slug.
    """

    proposal_id: str
    run_id: str
    scope: str
    memory_id: MemoryId
    kind: ProposalKind
    partition: str
    action: ProposalAction
    entries: tuple[EntryId, ...]
    hashes: tuple[tuple[EntryId, str], ...]
    evidence: str
    text: str | None = None
    slug: str | None = None
    status: ProposalStatus = "PROPOSED"
    result: str | None = None  # the Revision it was applied in, or why it was not
    created_at: str = ""
    decided_at: str | None = None
    judge: JudgeName = "rules"  # "model": an untrusted candidate; an APPLY run leaves it for a decision

    @property
    def informational(self) -> bool:
        return self.action == "inform"

    def hash_of(self, entry: EntryId) -> str | None:
        return dict(self.hashes).get(entry)

    def decided(self, status: ProposalStatus, *, result: str | None, at: str) -> Proposal:
        return replace(self, status=status, result=result, decided_at=at)

    def to_dict(self) -> dict[str, object]:
        return {**plain_dict(self), "hashes": dict(self.hashes)}

    @classmethod
    def from_dict(cls, data: Mapping[str, object]) -> Proposal:
        hashes = data.get("hashes") or {}
        entries = data.get("entries") or []
        assert isinstance(hashes, dict) and isinstance(entries, list)
        kind, action, status = str(data["kind"]), str(data["action"]), str(data["status"])
        assert kind in PROPOSAL_ORDER and action in ACTIONS and status in STATUSES
        return cls(
            proposal_id=str(data["proposal_id"]),
            run_id=str(data["run_id"]),
            scope=str(data["scope"]),
            memory_id=MemoryId(str(data["memory_id"])),
            kind=kind,
            partition=str(data["partition"]),
            action=action,
            entries=tuple(EntryId(str(e)) for e in entries),
            hashes=tuple((EntryId(str(e)), str(h)) for e, h in hashes.items()),
            evidence=str(data.get("evidence") or ""),
            text=_opt(data.get("text")),
            slug=_opt(data.get("slug")),
            status=status,
            result=_opt(data.get("result")),
            created_at=str(data.get("created_at") or ""),
            decided_at=_opt(data.get("decided_at")),
            judge="model" if data.get("judge") == "model" else "rules",
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class Usage:
    """What a run spent on models: calls and input tokens (both 0 on unchanged memory). A call that failed (an
    error answer, a timeout, a broken connection) is a call too: it is in ``model_calls`` and in ``failed_calls``."""

    model_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0  # a chat model's completion tokens (the model judge)
    failed_calls: int = 0

    def plus(self, calls: int, tokens: int, output: int = 0, *, failed: int = 0) -> Usage:
        return Usage(
            model_calls=self.model_calls + calls,
            input_tokens=self.input_tokens + tokens,
            output_tokens=self.output_tokens + output,
            failed_calls=self.failed_calls + failed,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class MaintenanceRun:
    """One run's record: scope, mode, status, what it listed and spent, and totals derived from its proposals."""

    run_id: str
    scope: str
    mode: MaintenanceMode
    status: RunStatus
    created_at: str
    holder: str
    memory_id: MemoryId | None = None
    started_at: str | None = None
    finished_at: str | None = None
    queued_behind: str | None = None  # the run that held the lease when this one was started
    repo: str | None = None  # the git work tree code evidence is checked in (a queued request carries its caller's)
    head_revision: int = 0  # the scope's head when the run listed it
    end_revision: int = 0  # the scope's head when the run ended (after its own writes): writes are counted from it
    listed: int = 0  # entries whose content changed since the ledger last saw them
    retries: int = 0  # failed step attempts that were retried
    usage: Usage = field(default_factory=Usage)
    totals: Mapping[str, int] = field(default_factory=dict)
    error: str | None = None

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL_RUN

    def to_dict(self) -> dict[str, object]:
        plain = {k: v for k, v in field_dict(self).items() if k not in ("usage", "totals", "error")}
        return {
            **plain,  # run_id … retries, as declared
            "model_calls": self.usage.model_calls,
            "input_tokens": self.usage.input_tokens,
            "output_tokens": self.usage.output_tokens,
            "failed_model_calls": self.usage.failed_calls,
            "totals": dict(self.totals),
            "error": self.error,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, object]) -> MaintenanceRun:
        totals = data.get("totals") or {}
        assert isinstance(totals, dict)
        mode, status = str(data["mode"]), str(data["status"])
        assert mode in MODES and status in RUN_STATUSES
        memory = _opt(data.get("memory_id"))
        return cls(
            run_id=str(data["run_id"]),
            scope=str(data["scope"]),
            mode=mode,
            status=status,
            created_at=str(data.get("created_at") or ""),
            holder=str(data.get("holder") or ""),
            memory_id=MemoryId(memory) if memory is not None else None,
            started_at=_opt(data.get("started_at")),
            finished_at=_opt(data.get("finished_at")),
            queued_behind=_opt(data.get("queued_behind")),
            repo=_opt(data.get("repo")),
            head_revision=_int(data.get("head_revision")),
            end_revision=_int(data.get("end_revision")),
            listed=_int(data.get("listed")),
            retries=_int(data.get("retries")),
            usage=Usage(
                model_calls=_int(data.get("model_calls")),
                input_tokens=_int(data.get("input_tokens")),
                output_tokens=_int(data.get("output_tokens")),
                failed_calls=_int(data.get("failed_model_calls")),
            ),
            totals={str(k): _int(v) for k, v in totals.items()},
            error=_opt(data.get("error")),
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class MaintenanceEvent(FieldDict):
    """A signal for whoever watches maintenance (a daemon, an operator): it starts no run by itself.

    ``writes_threshold_reached``: the scope's Memory received ``writes`` Revisions since the last run ended,
    at least ``threshold`` (Xema ``memory.maintenance.writes_threshold_reached``).
    """

    event_id: str
    scope: str
    kind: Literal["writes_threshold_reached"]
    at: str
    writes: int
    threshold: int
    head_revision: int

    @classmethod
    def from_dict(cls, data: Mapping[str, object]) -> MaintenanceEvent:
        assert data.get("kind") == "writes_threshold_reached"
        return cls(
            event_id=str(data["event_id"]),
            scope=str(data["scope"]),
            kind="writes_threshold_reached",
            at=str(data.get("at") or ""),
            writes=_int(data.get("writes")),
            threshold=_int(data.get("threshold")),
            head_revision=_int(data.get("head_revision")),
        )


def totals(proposals: Iterable[Proposal]) -> dict[str, int]:
    """A run's totals, derived from its proposals: ``proposals``, one count per kind and one per status."""
    out: dict[str, int] = {"proposals": 0}
    for p in proposals:
        out["proposals"] += 1
        out[f"kind:{p.kind}"] = out.get(f"kind:{p.kind}", 0) + 1
        out[f"status:{p.status}"] = out.get(f"status:{p.status}", 0) + 1
    return out


def _opt(value: object) -> str | None:
    return None if value is None else str(value)


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


__all__ = [
    "DECIDED",
    "PROPOSAL_ORDER",
    "STALE_TAG",
    "JudgeName",
    "MaintenanceEvent",
    "MaintenanceMode",
    "MaintenanceRun",
    "Proposal",
    "ProposalAction",
    "ProposalKind",
    "ProposalStatus",
    "RunStatus",
    "Usage",
    "is_stale",
    "parse_mode",
    "totals",
]
