"""The records of governed maintenance (issue #14) in every engine: the scope lease, the digest ledger, runs,
proposals and events (:class:`memstone.ports.MaintenanceStore`).

Written once against the engine parts; each engine's migrations create the tables (``maintenance_*``). Run,
proposal and event records are JSON documents beside the columns they are looked up by, and ``seq`` (the
engine's generated key) keeps the order they were first written in. Every write is one transaction; the lease
takes the isolation contract's ``meta:maintenance:<scope>`` lock, so it is exclusive across processes and
machines sharing the store.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from typing import TypeVar

from ...domain.ids import EntryId
from ...domain.maintenance import MaintenanceEvent, MaintenanceRun, Proposal, ProposalStatus
from .jobs import EngineJobs

T = TypeVar("T")


class MaintenanceRecords(EngineJobs):
    """The maintenance tables of one store, over its engine."""

    async def lease(self, scope: str, run_id: str, holder: str, ttl_s: float) -> str | None:
        def take() -> str | None:
            now = time.time()
            rows = self._q("SELECT run_id, expires_at FROM maintenance_lease WHERE scope = ?", (scope,))
            if rows and rows[0][0] != run_id and float(rows[0][1]) >= now:
                return str(rows[0][0])
            self.engine.conn.x(
                self.engine.dialect.upsert(
                    "maintenance_lease", ("scope", "run_id", "holder", "expires_at"), ("scope",),
                    ("run_id", "holder", "expires_at"),
                ),
                (scope, run_id, holder, now + ttl_s),
            )  # fmt: skip
            return None

        return await self._write(take, f"meta:maintenance:{scope}")

    async def release(self, scope: str, run_id: str) -> None:
        def drop() -> None:
            self.engine.conn.x("DELETE FROM maintenance_lease WHERE scope = ? AND run_id = ?", (scope, run_id))

        await self._write(drop, f"meta:maintenance:{scope}")

    async def ledger(self, scope: str) -> dict[EntryId, str]:
        def read() -> dict[EntryId, str]:
            rows = self._q("SELECT entry_id, content_hash FROM maintenance_ledger WHERE scope = ?", (scope,))
            return {EntryId(str(r[0])): str(r[1]) for r in rows}

        return await self._read(read)

    async def save(
        self,
        run: MaintenanceRun,
        proposals: Sequence[Proposal] = (),
        *,
        seen: Mapping[EntryId, str] | None = None,
        unseen: Sequence[EntryId] = (),
    ) -> None:
        dialect = self.engine.dialect

        def save() -> None:
            conn = self.engine.conn
            conn.x(
                dialect.upsert(
                    "maintenance_runs", ("run_id", "scope", "status", "record"), ("run_id",), ("status", "record")
                ),
                (run.run_id, run.scope, run.status, _json(run.to_dict())),
            )
            for p in proposals:
                conn.x(
                    dialect.upsert(
                        "maintenance_proposals", ("proposal_id", "run_id", "scope", "status", "record"),
                        ("proposal_id",), ("status", "record"),
                    ),
                    (p.proposal_id, p.run_id, p.scope, p.status, _json(p.to_dict())),
                )  # fmt: skip
            for entry_id, content_hash in (seen or {}).items():
                conn.x(
                    dialect.upsert(
                        "maintenance_ledger", ("scope", "entry_id", "content_hash"), ("scope", "entry_id"),
                        ("content_hash",),
                    ),
                    (run.scope, entry_id, content_hash),
                )  # fmt: skip
            for entry_id in unseen:
                conn.x("DELETE FROM maintenance_ledger WHERE scope = ? AND entry_id = ?", (run.scope, entry_id))

        await self._write(save)

    async def runs(self, scope: str | None = None, run_id: str | None = None) -> list[MaintenanceRun]:
        def read() -> list[MaintenanceRun]:
            where, args = _where(("scope", scope), ("run_id", run_id))
            rows = self._q(f"SELECT record FROM maintenance_runs{where} ORDER BY seq DESC", args)
            return [MaintenanceRun.from_dict(json.loads(r[0])) for r in rows]

        return await self._read(read)

    async def proposals(
        self,
        *,
        scope: str | None = None,
        run_id: str | None = None,
        proposal_id: str | None = None,
        status: ProposalStatus | None = None,
    ) -> list[Proposal]:
        def read() -> list[Proposal]:
            where, args = _where(("scope", scope), ("run_id", run_id), ("proposal_id", proposal_id), ("status", status))
            rows = self._q(f"SELECT record FROM maintenance_proposals{where} ORDER BY seq", args)
            return [Proposal.from_dict(json.loads(r[0])) for r in rows]

        return await self._read(read)

    async def record_event(self, event: MaintenanceEvent) -> None:
        def save() -> None:
            self.engine.conn.x(
                self.engine.dialect.insert_ignore("maintenance_events", ("event_id", "scope", "record"), ("event_id",)),
                (event.event_id, event.scope, _json(event.to_dict())),
            )

        await self._write(save)

    async def events(self, scope: str) -> list[MaintenanceEvent]:
        def read() -> list[MaintenanceEvent]:
            rows = self._q("SELECT record FROM maintenance_events WHERE scope = ? ORDER BY seq DESC", (scope,))
            return [MaintenanceEvent.from_dict(json.loads(r[0])) for r in rows]

        return await self._read(read)

    async def save_daemon(self, daemon_id: str, health: Mapping[str, object] | None) -> None:
        """Upsert (or, with None, drop) one daemon's health record: a ``daemon:<id>`` row of ``store_meta``."""
        key = f"{DAEMON_KEY}{daemon_id}"

        def save() -> None:
            conn = self.engine.conn
            if health is None:
                conn.x("DELETE FROM store_meta WHERE key = ?", (key,))
                return
            conn.x(
                self.engine.dialect.upsert("store_meta", ("key", "value"), ("key",), ("value",)), (key, _json(health))
            )

        await self._write(save, f"meta:{key}")

    async def daemons(self) -> list[dict[str, object]]:
        """Every daemon health record, by key."""

        def read() -> list[dict[str, object]]:
            rows = self._q("SELECT key, value FROM store_meta WHERE key LIKE ? ORDER BY key", (f"{DAEMON_KEY}%",))
            out = []
            for key, value in rows:
                data = json.loads(value)
                if isinstance(data, dict):
                    out.append({"daemon_id": str(key)[len(DAEMON_KEY) :], **data})
            return out

        return await self._read(read)


DAEMON_KEY = "daemon:"  # + the daemon's id (at most 57 characters: OceanBase's key column holds 64)


def _json(data: object) -> str:
    return json.dumps(data, ensure_ascii=False)


def _where(*pairs: tuple[str, str | None]) -> tuple[str, list[object]]:
    used = [(column, value) for column, value in pairs if value is not None]
    if not used:
        return "", []
    return " WHERE " + " AND ".join(f"{column} = ?" for column, _ in used), [value for _, value in used]


__all__ = ["DAEMON_KEY", "MaintenanceRecords"]
