"""The maintenance daemon (``memstone daemon``, and inside ``memstone serve``): a storage loop for the store, and
an embedding loop and a maintenance loop per non-empty scope (a project's, or a user's), each checking at once
and then on its interval (embedding every 2 minutes, storage and maintenance every 15 by default).

Each check is a due-time gate that decides what to do, and does only that:

- embedding, per scope: the scope's entries without a vector (the hooks write without a model) are embedded;
  nothing else. Only one embedding of a scope runs at a time across processes and machines: the check holds the
  scope's embedding lease in the store (the maintenance lease rows, keyed ``embedding:<scope>``; renewed while
  it works, released when done); a daemon that finds it held says ``held by …`` and leaves the backlog to it.
  One more loop, ``embedding (no scope)``, does the same for the Memories bound to no scope (lease
  ``embedding:``), so an entry written through the library without a scope gets its vector too;
- storage: at most once per ``upkeep_every_s`` (an hour), and only when something was written since the last
  upkeep of any daemon on this store, the engine's upkeep runs: FTS optimize, WAL checkpoint and, when a quarter
  of the file is free, VACUUM on SQLite; ``VACUUM (ANALYZE)`` on PostgreSQL (``backends/sql/upkeep.py``);
- maintenance, per scope: an empty scope is skipped; queued run requests (the persisted queue,
  :mod:`memstone.maintenance.queue`) are carried out, oldest first; when the scope's write counter crossed the
  threshold since its last run (the ``writes_threshold_reached`` event) a DRY_RUN is started, which proposes and
  writes nothing (its end revision resets the counter). Otherwise nothing is due;
- storage, when the engine has its own upkeep (LanceDB: ``storage_due`` / ``maintain_storage``): run when due
  (``storage.py``), on the maintenance interval.

Scopes are found at every maintenance interval; a scope with no live entry gets no loops (one that empties
later is skipped by its loops). A check that raises is recorded on its loop (its error and the count of
consecutive failures) and retried at the next interval; a loop that fails ``max_failures`` times in a row
cannot continue: the daemon stops and exits non-zero. Health is what the supervisor reads: the
JSON at ``GET /health`` (200 while every loop is healthy, 503 otherwise), and the same record kept in the store
itself (:class:`memstone.ports.DaemonHealthStore`: ``store_meta`` rows on every SQL engine), rewritten after
every check, which ``memstone doctor`` and ``memstone maintenance status`` read on any machine sharing the
store. A record whose heartbeat is older than its ``stale_after_s`` reads ``stale`` (the process died without
a word: ``kill -9``, power loss); a clean stop records ``stopped``. SIGTERM (or SIGINT) stops it cleanly after
the check in progress. A run killed mid-apply leaves each proposal applied as a whole Revision or not at all;
the next run records it FAILED and finishes its undecided proposals (``runner.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
import json
import os
import socket
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from ..domain.fields import FieldDict
from ..domain.ids import MemoryId
from ..ports import DaemonHealthStore
from .queue import carry_out, pending
from .runner import MaintenanceSettings, Progress, maintain, renew_lease, store_of, take_lease
from .storage import check_storage as check_engine_gate
from .storage import storage_upkeep
from .trigger import DEFAULT_THRESHOLD, scope_status

if TYPE_CHECKING:
    from ..service import MemoryService


@dataclass(frozen=True, slots=True, kw_only=True)
class DaemonSettings:
    embed_every_s: float = 120.0
    maintain_every_s: float = 900.0
    upkeep_every_s: float = 3600.0  # at most one storage upkeep per this many seconds (and only after writes)
    threshold: int = DEFAULT_THRESHOLD
    max_failures: int = 3  # consecutive failed checks after which a loop cannot continue
    record_health: bool = True  # keep the health record in the store (False: only the endpoint shows it)
    once: bool = False  # every check once, then exit (cron, tests)
    run: MaintenanceSettings = field(default_factory=MaintenanceSettings)


@dataclass(slots=True)
class LoopState(FieldDict):
    """One loop's record, as the health endpoint shows it (its fields)."""

    name: str
    scope: str | None
    checks: int = 0
    consecutive_failures: int = 0
    last_check_at: str | None = None
    last_ok_at: str | None = None
    last_action: str | None = None
    last_error: str | None = None


class Daemon:
    """The loops of one store. ``await Daemon(svc, settings).run(stop)`` returns the exit code (0 or 1)."""

    def __init__(self, svc: MemoryService, settings: DaemonSettings, progress: Progress | None = None) -> None:
        from ..service import utc_now

        self.svc, self.settings = svc, settings
        self.say = progress or (lambda _msg: None)
        self.loops: dict[str, LoopState] = {}
        self.fatal: str | None = None
        self.started_at = utc_now()
        self.host = socket.gethostname()
        self.daemon_id = hashlib.sha256(f"{self.host}:{os.getpid()}:{self.started_at}".encode()).hexdigest()[:24]
        self.holder = f"{self.host}:{os.getpid()}"
        self.stopped = False
        self.upkeep: dict[str, object] | None = None  # the last storage upkeep this store saw (any daemon's)
        self._tasks: dict[str, asyncio.Task[None]] = {}

    # ---------------------------------------------------------------------------------- health
    def health(self) -> dict[str, object]:
        from ..service import utc_now

        failing = self.fatal is not None or any(s.consecutive_failures for s in self.loops.values())
        status = "failing" if failing else "ok"
        if self.stopped:
            status = "failed" if self.fatal is not None else "stopped"
        cfg = self.settings
        return {
            "status": status,
            "host": self.host,
            "pid": os.getpid(),
            "started_at": self.started_at,
            "heartbeat_at": utc_now(),
            "stale_after_s": 3 * min(cfg.embed_every_s, cfg.maintain_every_s) + 60,
            "fatal": self.fatal,
            "upkeep": self.upkeep,
            "loops": [s.to_dict() for s in self.loops.values()],
        }

    async def write_health(self) -> None:
        """Record the health in the store (best effort: a store that refuses it must not stop the loops)."""
        backend = self.svc.backend
        if not self.settings.record_health or not isinstance(backend, DaemonHealthStore):
            return
        try:
            await backend.save_daemon_health(self.daemon_id, self.health())
        except Exception as exc:  # reported on stderr; the endpoint still shows the loops
            self.say(f"could not record health in the store: {type(exc).__name__}: {exc}")

    # ---------------------------------------------------------------------------------- checks
    async def check_embedding(self, scope: str) -> str:
        if self.svc.indexer is None:
            return "no embedding model: nothing to embed"
        head = await self.svc.resolve(scope)
        if head is None or head.active_count == 0:
            return "empty scope: skipped"
        return await self._embed(f"embedding:{scope}", [head.memory_id], "this scope")

    async def check_unbound_embedding(self) -> str:
        """The Memories bound to no scope (written through the library without one) get their vectors too."""
        if self.svc.indexer is None:
            return "no embedding model: nothing to embed"
        bound = {memory for _, memory in await self.svc.scopes()}
        unbound = [h.memory_id for h in await self.svc.memories() if h.active_count and h.memory_id not in bound]
        if not unbound:
            return "no Memory outside a scope"
        return await self._embed("embedding:", unbound, "the Memories outside a scope")

    async def _embed(self, key: str, memories: list[MemoryId], what: str) -> str:
        """Backfill these Memories (each on its route: its org's own profile) under the lease ``key``, so two
        daemons on one store never embed the same entries at once."""
        if not sum([await self.svc.vector_backlog(memory=m) for m in memories]):
            return "every entry has its vector"
        store, ttl = store_of(self.svc), self.settings.run.lease_ttl_s
        lease = f"embed_{self.daemon_id}"  # the lease row's holder id
        other = await take_lease(store, key, lease, self.holder, ttl)
        if other is not None:
            return f"held by {other}: its daemon embeds {what}"
        renew = asyncio.create_task(renew_lease(store, key, lease, self.holder, ttl))
        try:
            backlog = sum([await self.svc.vector_backlog(memory=m) for m in memories])  # left now the lease is ours
            done = sum([await self.svc.backfill(memory=m) for m in memories]) if backlog else 0
        finally:
            renew.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await renew
            await store.release_maintenance(key, lease)
        return f"embedded {done} of {backlog} entries without a vector"

    async def check_storage(self) -> str:
        from ..service import utc_now

        backend = self.svc.backend
        if (own := storage_upkeep(backend)) is not None:  # an engine with its own due-time gate (LanceDB)
            return await check_engine_gate(own)
        if not isinstance(backend, DaemonHealthStore):
            return "this store offers no storage upkeep"
        if self.upkeep is None:  # the newest upkeep any daemon of this store recorded
            found: list[dict[str, object]] = []
            for record in await backend.daemon_health():
                upkeep = record.get("upkeep")
                if isinstance(upkeep, dict):
                    found.append(upkeep)
            self.upkeep = max(found, key=lambda u: str(u.get("at")), default=None)
        marker = sum(head.revision for head in await self.svc.memories())
        last = self.upkeep
        if last is not None and last.get("marker") == marker:
            return "nothing written since the last upkeep"
        if last is not None:
            age = datetime.now().astimezone() - datetime.fromisoformat(str(last["at"]).replace("Z", "+00:00"))
            if age.total_seconds() < self.settings.upkeep_every_s:
                return f"upkeep due in {self.settings.upkeep_every_s - age.total_seconds():.0f} s"
        started = time.monotonic()
        done = await backend.storage_upkeep()
        self.upkeep = {"at": utc_now(), "marker": marker, "done": done, "s": round(time.monotonic() - started, 3)}
        return f"storage upkeep in {self.upkeep['s']} s: {json.dumps(done)}"

    async def check_scope(self, scope: str) -> str:
        head = await self.svc.resolve(scope)
        if head is None or head.active_count == 0:
            return "empty scope: skipped"
        said: list[str] = []
        for request in await pending(self.svc, scope=scope):
            report = await carry_out(self.svc, request, settings=self.settings.run)
            if report is not None:
                said.append(f"queued run {request.run_id} {report.run.status}")
        status = await scope_status(self.svc, scope, threshold=self.settings.threshold)
        if status.event is not None:
            report = await maintain(self.svc, scope=scope, mode="DRY_RUN", settings=self.settings.run)
            said.append(
                f"{status.writes_since_run} writes since the last run: dry run {report.run.run_id} "
                f"{report.run.status} ({report.run.totals.get('proposals', 0)} proposals)"
            )
        return "; ".join(said) or "nothing due"

    async def _check(self, state: LoopState, fn: Callable[[], Awaitable[str]]) -> None:
        from ..service import utc_now

        state.checks += 1
        state.last_check_at = utc_now()
        try:
            state.last_action = await fn()
        except Exception as exc:  # recorded for the supervisor; the loop decides whether it can go on
            state.consecutive_failures += 1
            state.last_error = f"{type(exc).__name__}: {exc}"
            self.say(
                f"{state.name} failed ({state.consecutive_failures}/{self.settings.max_failures}): {state.last_error}"
            )
            if state.consecutive_failures >= self.settings.max_failures:
                self.fatal = f"{state.name} failed {state.consecutive_failures} times in a row: {state.last_error}"
        else:
            state.consecutive_failures, state.last_error, state.last_ok_at = 0, None, state.last_check_at
            self.say(f"{state.name}: {state.last_action}")
        await self.write_health()

    async def _loop(
        self, state: LoopState, every: float, fn: Callable[[], Awaitable[str]], stop: asyncio.Event
    ) -> None:
        while not stop.is_set():
            await self._check(state, fn)
            if self.fatal is not None or self.settings.once:
                if self.fatal is not None:
                    stop.set()
                return
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), timeout=every)

    def _start(
        self, name: str, scope: str | None, every: float, fn: Callable[[], Awaitable[str]], stop: asyncio.Event
    ) -> None:
        state = self.loops.setdefault(name, LoopState(name=name, scope=scope))
        self._tasks[name] = asyncio.create_task(self._loop(state, every, fn, stop), name=name)

    async def _scopes(self) -> list[str]:
        """The scopes bound to a Memory with at least one live entry (an empty scope gets no loops)."""
        live = {head.memory_id for head in await self.svc.memories() if head.active_count}
        return sorted({scope for scope, memory in await self.svc.scopes() if memory in live})

    async def run(self, stop: asyncio.Event) -> int:
        cfg = self.settings
        self._start("storage", None, cfg.maintain_every_s, self.check_storage, stop)
        self._start("embedding (no scope)", None, cfg.embed_every_s, self.check_unbound_embedding, stop)
        while not stop.is_set():
            for scope in await self._scopes():
                if f"maintenance {scope}" in self._tasks:
                    continue
                embed = functools.partial(self.check_embedding, scope)
                self._start(f"embedding {scope}", scope, cfg.embed_every_s, embed, stop)
                check = functools.partial(self.check_scope, scope)
                self._start(f"maintenance {scope}", scope, cfg.maintain_every_s, check, stop)
            if cfg.once:
                break
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), timeout=cfg.maintain_every_s)
        started = time.monotonic()
        await asyncio.gather(*self._tasks.values(), return_exceptions=True)
        self.say(f"stopped after {time.monotonic() - started:.1f} s of wind-down" if not cfg.once else "done")
        self.stopped = True
        await self.write_health()
        return 1 if self.fatal is not None else 0


async def serve_health(daemon: Daemon, host: str, port: int) -> asyncio.Server:
    """``GET /health`` → the daemon's health JSON (200 ok, 503 failing); anything else 404."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            line = await asyncio.wait_for(reader.readline(), timeout=5)
            while (await asyncio.wait_for(reader.readline(), timeout=5)) not in (b"\r\n", b"\n", b""):
                pass
            parts = line.decode("latin-1").split()
            health = daemon.health()
            if len(parts) >= 2 and parts[0] == "GET" and parts[1].split("?")[0] == "/health":
                code, body = (200 if health["status"] == "ok" else 503), json.dumps(health).encode()
            else:
                code, body = 404, b'{"error": "not found: GET /health"}'
            reason = {200: "OK", 503: "Service Unavailable", 404: "Not Found"}[code]
            head = f"HTTP/1.1 {code} {reason}\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n"
            writer.write((head + "Connection: close\r\n\r\n").encode() + body)
            await writer.drain()
        except (TimeoutError, OSError, UnicodeError):
            pass
        finally:
            writer.close()

    return await asyncio.start_server(handle, host, port)


async def daemon_records(svc: MemoryService, *, now: datetime | None = None) -> list[dict[str, object]]:
    """Every daemon's health record in the store, newest heartbeat first; a record still ``ok``/``failing`` whose
    heartbeat is older than its ``stale_after_s`` is reported ``stale`` (that process stopped without a word).
    An empty list: no daemon has run against this store (or the store keeps no such records)."""
    backend = svc.backend
    if not isinstance(backend, DaemonHealthStore):
        return []
    at = now or datetime.now().astimezone()
    out = []
    for record in await backend.daemon_health():
        beat = record.get("heartbeat_at")
        limit = record.get("stale_after_s")
        try:
            age = (at - datetime.fromisoformat(str(beat).replace("Z", "+00:00"))).total_seconds()
        except ValueError:
            age = None
        live = record.get("status") in ("ok", "failing")
        if live and age is not None and isinstance(limit, (int, float)) and age > limit:
            record = {**record, "status": "stale", "last_status": record.get("status")}
        out.append({**record, "heartbeat_age_s": round(age, 1) if age is not None else None})
    out.sort(key=lambda r: str(r.get("heartbeat_at") or ""), reverse=True)
    return out


async def status_report(svc: MemoryService, scope: str, *, threshold: int) -> dict[str, object]:
    """A scope's maintenance status (writes since its last run, the threshold event) and every daemon's health
    record: what ``memstone maintenance status`` prints and ``GET /api/maintenance/status`` answers."""
    from .trigger import scope_status

    st = await scope_status(svc, scope, threshold=threshold)
    return {**st.to_dict(), "daemons": await daemon_records(svc)}


def status_text(st: Mapping[str, object]) -> str:
    """The human form of a :func:`status_report` (``memstone maintenance status``, locally and remotely)."""
    last_run, event, daemons = st.get("last_run"), st.get("event"), st.get("daemons")
    last = last_run.get("run_id") if isinstance(last_run, dict) else "never"
    human = (
        f"{st['scope']}  revision {st['head_revision']}, {st['writes_since_run']} writes since the last run ({last})"
    )
    if isinstance(event, dict):
        human += f"\nwrites_threshold_reached at {event.get('at')} ({event.get('writes')} >= {st['threshold']})"
    for d in daemons if isinstance(daemons, list) else []:
        human += (
            f"\ndaemon {d.get('daemon_id')}: {d.get('status')} (pid {d.get('pid')} on {d.get('host')}, "
            f"heartbeat {d.get('heartbeat_at')}{', ' + str(d.get('fatal')) if d.get('fatal') else ''})"
        )
    if not daemons:
        human += "\nno maintenance daemon has run against this store (memstone daemon, or memstone serve)"
    return human


__all__ = ["Daemon", "DaemonSettings", "LoopState", "daemon_records", "serve_health", "status_report", "status_text"]
