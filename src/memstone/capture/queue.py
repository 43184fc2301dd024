"""The review queue: candidates and flags that wait for a person or an agent to accept or reject them.

In ``review`` mode capture records the event's Sources (after secret scanning) and queues each admitted
candidate here instead of writing it. :func:`~memstone.capture.accept` re-plans the candidate against the
*current* head (a queued "revise" may have gone stale) and writes it; :func:`~memstone.capture.reject` closes it.
Git-change :class:`~memstone.capture.ReviewFlag` values are queued in every mode; a flag is closed, never written.

Storage: a JSON file beside the database (``<db>.capture-queue.json``), rewritten atomically under an
exclusive lock on ``<file>.lock``, so concurrent hooks do not lose items. ``ReviewQueue(None)`` keeps the queue
in memory (tests, ``:memory:`` stores). Decided items stay in the file as an audit trail, and a statement that
was rejected once is not queued again. Why not in the SQLite file: the service cannot list Sources by kind,
and the backend schema is being changed by others; the lead may move the queue into a table later.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal, cast

from ..domain.errors import InvalidInput, NotFound
from ..domain.ids import EntryId, EntryVersionId, MemoryId, SourceId
from .candidates import Candidate, PlanAction, ReviewFlag
from .settings import write_json_atomic

__all__ = ["QueueItem", "QueueStatus", "ReviewQueue"]

QueueStatus = Literal["pending", "accepted", "rejected"]
ItemType = Literal["candidate", "flag"]
QUEUE_VERSION = 1


@dataclass(frozen=True, slots=True, kw_only=True)
class QueueItem:
    """One queued candidate (``item_type="candidate"``) or review flag (``"flag"``) and its decision."""

    item_id: str
    item_type: ItemType
    scope: str | None
    memory_id: MemoryId | None
    created_at: str
    candidate: Candidate | None = None
    action: PlanAction | None = None  # what dedup planned when it was queued (re-planned on accept)
    target_entry: EntryId | None = None
    evidence: tuple[tuple[str, SourceId], ...] = ()  # candidate evidence key -> recorded Source id
    flag: ReviewFlag | None = None
    status: QueueStatus = "pending"
    decided_at: str | None = None
    decided_by: str | None = None
    note: str | None = None
    result_entry: EntryId | None = None

    @property
    def source_ids(self) -> tuple[SourceId, ...]:
        return tuple(sid for _, sid in self.evidence)

    def to_dict(self) -> dict[str, object]:
        return {
            "item_id": self.item_id,
            "item_type": self.item_type,
            "scope": self.scope,
            "memory_id": self.memory_id,
            "created_at": self.created_at,
            "candidate": self.candidate.to_dict() if self.candidate else None,
            "action": self.action,
            "target_entry": self.target_entry,
            "evidence": [[k, v] for k, v in self.evidence],
            "flag": self.flag.to_dict() if self.flag else None,
            "status": self.status,
            "decided_at": self.decided_at,
            "decided_by": self.decided_by,
            "note": self.note,
            "result_entry": self.result_entry,
        }

    @classmethod
    def from_dict(cls, data: dict[str, object]) -> QueueItem:
        cand = data.get("candidate")
        flag = data.get("flag")
        evidence = data.get("evidence") or []
        assert isinstance(evidence, list)
        flag_obj = None
        if isinstance(flag, dict):
            paths = flag.get("paths") or []
            assert isinstance(paths, list)
            flag_obj = ReviewFlag(
                entry_id=EntryId(str(flag["entry_id"])),
                entry_version_id=EntryVersionId(str(flag["entry_version_id"])),
                entry_excerpt=str(flag.get("entry_excerpt", "")),
                paths=tuple(str(p) for p in paths),
                base_commit=str(flag.get("base_commit", "")),
                head_commit=str(flag.get("head_commit", "")),
                reason=str(flag.get("reason", "evidence_changed")),
            )

        def opt(key: str) -> str | None:
            value = data.get(key)
            return value if isinstance(value, str) else None

        return cls(
            item_id=str(data["item_id"]),
            item_type=cast(ItemType, data["item_type"]),
            scope=opt("scope"),
            memory_id=MemoryId(m) if (m := opt("memory_id")) else None,
            created_at=str(data.get("created_at", "")),
            candidate=Candidate.from_dict(cand) if isinstance(cand, dict) else None,
            action=cast(PlanAction, data["action"]) if data.get("action") else None,
            target_entry=EntryId(t) if (t := opt("target_entry")) else None,
            evidence=tuple((str(k), SourceId(str(v))) for k, v in evidence),
            flag=flag_obj,
            status=cast(QueueStatus, data.get("status", "pending")),
            decided_at=opt("decided_at"),
            decided_by=opt("decided_by"),
            note=opt("note"),
            result_entry=EntryId(r) if (r := opt("result_entry")) else None,
        )


def _text_key(item: QueueItem) -> str | None:
    if item.candidate is None:
        return None
    return f"{item.scope}\0{' '.join(item.candidate.text.casefold().split())}"


class ReviewQueue:
    """A durable queue in a JSON file (``path``), or an in-memory one (``path=None``).

    >>> q = ReviewQueue(None)
    >>> q.pending()
    ()
    """

    def __init__(self, path: str | os.PathLike[str] | None) -> None:
        self.path = Path(path) if path is not None else None
        self._memory: list[QueueItem] = []

    def __repr__(self) -> str:
        return f"ReviewQueue({str(self.path) if self.path else None!r})"

    # ---- storage
    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        if self.path is None:
            yield
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        lock_path = self.path.with_name(self.path.name + ".lock")
        with open(lock_path, "a+b") as lock:
            _lock(lock.fileno())
            try:
                yield
            finally:
                _unlock(lock.fileno())

    def _read(self) -> list[QueueItem]:
        if self.path is None:
            return list(self._memory)
        try:
            raw = self.path.read_text("utf-8")
        except FileNotFoundError:
            return []
        try:
            data = json.loads(raw)
        except ValueError as exc:
            raise InvalidInput(f"{self.path} is not valid JSON: {exc}", hint="fix or move the file aside") from exc
        items = data.get("items") if isinstance(data, dict) else None
        if not isinstance(items, list):
            raise InvalidInput(f"{self.path} holds no 'items' list")
        return [QueueItem.from_dict(i) for i in items if isinstance(i, dict)]

    def _write(self, items: list[QueueItem]) -> None:
        if self.path is None:
            self._memory = list(items)
            return
        write_json_atomic(self.path, {"version": QUEUE_VERSION, "items": [i.to_dict() for i in items]})

    # ---- operations
    def add(self, items: Sequence[QueueItem]) -> tuple[QueueItem, ...]:
        """Queue items; a candidate whose text is already pending or was rejected for that scope is skipped.

        Returns the items actually queued.
        """
        with self._locked():
            current = self._read()
            seen = {_text_key(i) for i in current if i.status in ("pending", "rejected")}
            flags = {(i.flag.entry_version_id, i.flag.head_commit) for i in current if i.flag and i.status == "pending"}
            added = []
            for item in items:
                key = _text_key(item)
                if key is not None and key in seen:
                    continue
                if item.flag is not None and (item.flag.entry_version_id, item.flag.head_commit) in flags:
                    continue
                seen.add(key)
                current.append(item)
                added.append(item)
            if added:
                self._write(current)
            return tuple(added)

    def items(self, *, status: QueueStatus | None = None, scope: str | None = None) -> tuple[QueueItem, ...]:
        """Every item (optionally only one status or one scope), oldest first."""
        with self._locked():
            found = self._read()
        return tuple(i for i in found if (status is None or i.status == status) and (scope is None or i.scope == scope))

    def pending(self, scope: str | None = None) -> tuple[QueueItem, ...]:
        """The items that wait for a decision."""
        return self.items(status="pending", scope=scope)

    def get(self, item_id: str) -> QueueItem:
        """One item by id (NotFound when there is none)."""
        for item in self.items():
            if item.item_id == item_id:
                return item
        raise NotFound(f"no queued capture item {item_id}", hint="list the pending items of the review queue")

    def decide(
        self,
        item_id: str,
        status: Literal["accepted", "rejected"],
        *,
        decided_at: str,
        decided_by: str | None = None,
        note: str | None = None,
        result_entry: EntryId | None = None,
    ) -> QueueItem:
        """Close a pending item; deciding an already decided item is refused."""
        with self._locked():
            current = self._read()
            for index, item in enumerate(current):
                if item.item_id != item_id:
                    continue
                if item.status != "pending":
                    raise InvalidInput(f"capture item {item_id} is already {item.status}")
                done = replace(
                    item,
                    status=status,
                    decided_at=decided_at,
                    decided_by=decided_by,
                    note=note,
                    result_entry=result_entry,
                )
                current[index] = done
                self._write(current)
                return done
        raise NotFound(f"no queued capture item {item_id}")


if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
    import msvcrt

    def _lock(fd: int) -> None:
        msvcrt.locking(fd, msvcrt.LK_LOCK, 1)

    def _unlock(fd: int) -> None:
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)

else:
    import fcntl

    def _lock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_EX)

    def _unlock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)
