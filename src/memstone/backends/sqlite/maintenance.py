"""SQLite tables of governed maintenance (issue #14): the scope lease, the digest ledger, runs and proposals.

Kept apart from the store's core on purpose (the engine-neutral core is being restructured): the tables are
created by migration 3 and touched only here. Run and proposal records are JSON documents beside the columns
they are looked up by; every write is one ``BEGIN IMMEDIATE`` transaction, so the lease is exclusive across
processes sharing the file.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from typing import Protocol, TypeVar

from ...domain.ids import EntryId
from ...domain.maintenance import MaintenanceEvent, MaintenanceRun, Proposal, ProposalStatus
from .engine import SQLiteEngine
from .maintenance_schema import DDL

T = TypeVar("T")


class _Engine(Protocol):
    """What the mixin uses of ``SQLiteMemoryBackend``: its SQLite engine (a self-type; the mixin shadows nothing)."""

    @property
    def sqlite(self) -> SQLiteEngine: ...


class SQLiteMaintenanceMixin:
    """Mixed into ``SQLiteMemoryBackend``: implements :class:`memstone.ports.MaintenanceStore`."""

    async def lease_maintenance(self: _Engine, scope: str, run_id: str, holder: str, ttl_s: float) -> str | None:
        def run() -> str | None:
            with self.sqlite.write_txn():
                now = time.time()
                rows = self.sqlite.conn.q("SELECT run_id, expires_at FROM maintenance_lease WHERE scope = ?", (scope,))
                if rows and rows[0][0] != run_id and float(rows[0][1]) >= now:
                    return str(rows[0][0])
                self.sqlite.conn.q(
                    "INSERT INTO maintenance_lease (scope, run_id, holder, expires_at) VALUES (?, ?, ?, ?) "
                    "ON CONFLICT (scope) DO UPDATE SET run_id = excluded.run_id, holder = excluded.holder, "
                    "expires_at = excluded.expires_at",
                    (scope, run_id, holder, now + ttl_s),
                )
                return None

        return await self.sqlite.run(run)

    async def release_maintenance(self: _Engine, scope: str, run_id: str) -> None:
        def run() -> None:
            with self.sqlite.write_txn():
                self.sqlite.conn.q("DELETE FROM maintenance_lease WHERE scope = ? AND run_id = ?", (scope, run_id))

        await self.sqlite.run(run)

    async def maintenance_ledger(self: _Engine, scope: str) -> dict[EntryId, str]:
        def run() -> dict[EntryId, str]:
            with self.sqlite.read_txn():
                rows = self.sqlite.conn.q(
                    "SELECT entry_id, content_hash FROM maintenance_ledger WHERE scope = ?", (scope,)
                )
            return {EntryId(r[0]): str(r[1]) for r in rows}

        return await self.sqlite.run(run)

    async def save_maintenance(
        self: _Engine,
        run: MaintenanceRun,
        proposals: Sequence[Proposal] = (),
        *,
        seen: Mapping[EntryId, str] | None = None,
        unseen: Sequence[EntryId] = (),
    ) -> None:
        def save() -> None:
            with self.sqlite.write_txn():
                self.sqlite.conn.q(
                    "INSERT INTO maintenance_runs (run_id, scope, status, record) VALUES (?, ?, ?, ?) "
                    "ON CONFLICT (run_id) DO UPDATE SET status = excluded.status, record = excluded.record",
                    (run.run_id, run.scope, run.status, json.dumps(run.to_dict(), ensure_ascii=False)),
                )
                for p in proposals:
                    self.sqlite.conn.q(
                        "INSERT INTO maintenance_proposals (proposal_id, run_id, scope, status, record) "
                        "VALUES (?, ?, ?, ?, ?) ON CONFLICT (proposal_id) DO UPDATE SET status = excluded.status, "
                        "record = excluded.record",
                        (p.proposal_id, p.run_id, p.scope, p.status, json.dumps(p.to_dict(), ensure_ascii=False)),
                    )
                for entry_id, content_hash in (seen or {}).items():
                    self.sqlite.conn.q(
                        "INSERT INTO maintenance_ledger (scope, entry_id, content_hash) VALUES (?, ?, ?) "
                        "ON CONFLICT (scope, entry_id) DO UPDATE SET content_hash = excluded.content_hash",
                        (run.scope, entry_id, content_hash),
                    )
                for entry_id in unseen:
                    self.sqlite.conn.q(
                        "DELETE FROM maintenance_ledger WHERE scope = ? AND entry_id = ?", (run.scope, entry_id)
                    )

        await self.sqlite.run(save)

    async def maintenance_runs(
        self: _Engine, scope: str | None = None, run_id: str | None = None
    ) -> list[MaintenanceRun]:
        def run() -> list[MaintenanceRun]:
            where, args = _where(("scope", scope), ("run_id", run_id))
            with self.sqlite.read_txn():
                rows = self.sqlite.conn.q(f"SELECT record FROM maintenance_runs{where} ORDER BY rowid DESC", args)
            return [MaintenanceRun.from_dict(json.loads(r[0])) for r in rows]

        return await self.sqlite.run(run)

    async def maintenance_proposals(
        self: _Engine,
        *,
        scope: str | None = None,
        run_id: str | None = None,
        proposal_id: str | None = None,
        status: ProposalStatus | None = None,
    ) -> list[Proposal]:
        def run() -> list[Proposal]:
            where, args = _where(("scope", scope), ("run_id", run_id), ("proposal_id", proposal_id), ("status", status))
            with self.sqlite.read_txn():
                rows = self.sqlite.conn.q(f"SELECT record FROM maintenance_proposals{where} ORDER BY rowid", args)
            return [Proposal.from_dict(json.loads(r[0])) for r in rows]

        return await self.sqlite.run(run)

    async def record_maintenance_event(self: _Engine, event: MaintenanceEvent) -> None:
        def save() -> None:
            with self.sqlite.write_txn():
                self.sqlite.conn.q(
                    "INSERT OR IGNORE INTO maintenance_events (event_id, scope, record) VALUES (?, ?, ?)",
                    (event.event_id, event.scope, json.dumps(event.to_dict(), ensure_ascii=False)),
                )

        await self.sqlite.run(save)

    async def maintenance_events(self: _Engine, scope: str) -> list[MaintenanceEvent]:
        def run() -> list[MaintenanceEvent]:
            with self.sqlite.read_txn():
                rows = self.sqlite.conn.q(
                    "SELECT record FROM maintenance_events WHERE scope = ? ORDER BY rowid DESC", (scope,)
                )
            return [MaintenanceEvent.from_dict(json.loads(r[0])) for r in rows]

        return await self.sqlite.run(run)


def _where(*pairs: tuple[str, str | None]) -> tuple[str, list[object]]:
    used = [(column, value) for column, value in pairs if value is not None]
    if not used:
        return "", []
    return " WHERE " + " AND ".join(f"{column} = ?" for column, _ in used), [value for _, value in used]


__all__ = ["DDL", "SQLiteMaintenanceMixin"]
