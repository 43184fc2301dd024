"""Embedding runs in a server: ``reembed`` and ``embed --backfill`` of one organization (or of the store), started
over HTTP (``POST /api/embedding/runs``) and carried out by the server process while the caller follows them
(``GET /api/embedding/runs/{run_id}``), so no request stays open for the minutes a migration takes and no
laptop needs the database's credentials.

- The work and its refusals are the service's own (``Vectors.reembed`` and ``backfill``: an unknown profile, a
  dimension the engine cannot index, vectors of a profile that is not the org's, an engine without per-org
  tables); a refusal that comes before the first batch is stored is the start's own answer, with the library's
  error code, and leaves no run behind. Who may start one is the policy's (``Policy.require_org_admin``).
- One run per org (or the store) at a time across server processes and machines: a run holds the embedding lease
  ``embedding:memstone://orgs/<org>`` (``embedding:*`` for the store), in the lease rows the daemon's embedding
  loops take (``daemon.py``), renewed while it works. A start while another run holds it is refused with
  MaintenanceBusyError (409 ``maintenance_busy``) naming the holding run, which the caller can follow instead.
- The run's record (state, done/total, error) is a named setting of the store (``embedding-run:<run_id>``),
  written at the start, about once a second while the run works, and at its end, so every process sharing the
  store answers for it. A ``running`` record whose heartbeat is older than ``STALE_S`` was left by a server that
  stopped: it reads ``failed`` (a rerun resumes a backfill; an interrupted migration left the old profile).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
from collections.abc import Mapping
from dataclasses import asdict, dataclass, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Literal, get_args

from ..capture.store import capture_store_of
from ..domain.errors import Forbidden, InvalidInput, MaintenanceBusyError, MemstoneError, NotFound
from ..domain.ids import check_id, new_ulid
from ..service.routes import canonical_org
from .runner import renew_lease, store_of, take_lease

if TYPE_CHECKING:
    from ..service import MemoryService

Kind = Literal["reembed", "backfill"]
State = Literal["running", "completed", "failed"]
KINDS: tuple[Kind, ...] = get_args(Kind)
RUN_PREFIX = "erun_"
RECORD = "embedding-run:"  # the store setting that keeps a run's record
LEASE_TTL_S = 120.0
TICK_S = 1.0  # how often a running run's record is rewritten (progress and heartbeat)
STALE_S = 30.0  # a running record not rewritten for this long was left by a server that stopped
_BACKGROUND: set[asyncio.Task[None]] = set()  # runs in flight in this process (held so they are not collected)


@dataclass(frozen=True, slots=True, kw_only=True)
class EmbeddingRun:
    """One run's record: what it does, how far it is, and how it ended (``error``: the error's ``to_dict``)."""

    run_id: str
    kind: Kind
    org: str | None
    profile: str | None
    state: State
    holder: str
    started_at: str
    updated_at: str
    finished_at: str | None = None
    done: int = 0
    total: int | None = None
    error: Mapping[str, object] | None = None

    def to_dict(self) -> dict[str, object]:
        return asdict(self) | {"error": dict(self.error) if self.error is not None else None}

    @classmethod
    def from_dict(cls, data: Mapping[str, object]) -> EmbeddingRun:
        names = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in data.items() if k in names})  # type: ignore[arg-type]


def lease_key(org: str | None) -> str:
    """The embedding lease a run of ``org`` (None: the store) holds; the daemon's loops use ``embedding:<scope>``."""
    return "embedding:" + (f"memstone://orgs/{org}" if org is not None else "*")


def _now() -> str:
    from ..service import utc_now

    return utc_now()


async def _save(svc: MemoryService, run: EmbeddingRun) -> None:
    await capture_store_of(svc.backend).put_setting(RECORD + run.run_id, run.to_dict(), run.updated_at)


async def start_run(
    svc: MemoryService,
    kind: str,
    *,
    org: str | None = None,
    profile: str | None = None,
    batch: int = 64,
    worker: MemoryService | None = None,
) -> EmbeddingRun:
    """Start a run of ``kind`` (``reembed`` to ``profile``, or ``backfill``) over ``org``'s Memories (None: the
    store's), acting as ``svc``'s actor; answer once its first batch is stored (or it ended): ``running`` or
    ``completed``. ``worker`` carries the work out (default ``svc``): a server passes its own service, so a store
    migration changes the model the server writes with."""
    if kind not in KINDS:
        raise InvalidInput(f"unknown embedding run kind {kind!r}", hint="reembed or backfill")
    if kind == "reembed" and not profile:
        raise InvalidInput("a reembed names the profile to migrate to", hint="e.g. profile use-multilingual-v3")
    if kind == "backfill" and profile is not None:
        raise InvalidInput("a backfill embeds with its route's own model", hint="name no profile; reembed migrates")
    if not 1 <= batch <= 1024:
        raise InvalidInput(f"batch must be between 1 and 1024, got {batch}")
    org = canonical_org(org) if org is not None else None
    svc.policy.require_org_admin(org)
    doer = worker or svc
    from ..embedding import load_model

    model = load_model(profile) if kind == "reembed" and profile else None  # unknown: InvalidInput, by name
    store, lease = store_of(svc), lease_key(org)
    run_id, holder = new_ulid(RUN_PREFIX), f"{socket.gethostname()}:{os.getpid()}"
    other = await take_lease(store, lease, run_id, holder, LEASE_TTL_S)
    if other is not None:
        raise MaintenanceBusyError(
            f"embedding run {other} is active for {f'organization {org}' if org else 'the store'}",
            hint=f"follow it (GET /api/embedding/runs/{other}), or start again once it ends",
        )
    now = _now()
    run = EmbeddingRun(
        run_id=run_id, kind=kind, org=org, profile=profile, state="running", holder=holder,
        started_at=now, updated_at=now,
    )  # fmt: skip
    seen: list[tuple[int, int]] = []
    first = asyncio.Event()

    def progress(done: int, total: int) -> None:
        seen.append((done, total))
        first.set()

    async def work() -> int:
        if model is not None:
            return await doer.reembed(model, batch=batch, progress=progress, org=org)
        return await doer.backfill(batch=batch, progress=progress, org=org)

    job = asyncio.create_task(work())
    try:
        waiter = asyncio.create_task(first.wait())
        await asyncio.wait({job, waiter}, return_when=asyncio.FIRST_COMPLETED)
        waiter.cancel()
        if job.done():  # refused before anything was stored (the error is the start's answer), or done already
            done = job.result()
            return await _finish(doer, run, done, None, seen)
    except BaseException:
        job.cancel()
        await store.release_maintenance(lease, run_id)
        raise
    run = _advanced(run, seen)
    await _save(svc, run)
    keep = asyncio.create_task(_carry(doer, run, job, seen))
    _BACKGROUND.add(keep)
    keep.add_done_callback(_BACKGROUND.discard)
    return run


def _advanced(run: EmbeddingRun, seen: list[tuple[int, int]]) -> EmbeddingRun:
    done, total = seen[-1] if seen else (run.done, run.total)
    return replace(run, done=done, total=total, updated_at=_now())


async def _finish(
    svc: MemoryService, run: EmbeddingRun, done: int | None, error: BaseException | None, seen: list[tuple[int, int]]
) -> EmbeddingRun:
    """Record the run's end and release its lease."""
    try:
        run = _advanced(run, seen)
        if error is None:
            assert done is not None
            name = run.profile
            if run.kind == "backfill":
                used = await svc.backfill_profile(run.org)
                name = used.profile_id if used is not None else None
            total = max(run.total or 0, done)
            run = replace(run, state="completed", done=done, total=total, profile=name, finished_at=run.updated_at)
        else:
            failure = error if isinstance(error, MemstoneError) else MemstoneError(f"the run failed: {error}")
            run = replace(run, state="failed", error=failure.to_dict(), finished_at=run.updated_at)
        await _save(svc, run)
        return run
    finally:
        await store_of(svc).release_maintenance(lease_key(run.org), run.run_id)


async def _carry(svc: MemoryService, run: EmbeddingRun, job: asyncio.Task[int], seen: list[tuple[int, int]]) -> None:
    """Follow a started run to its end: its record rewritten every TICK_S, its lease renewed, its end recorded."""
    renew = asyncio.create_task(renew_lease(store_of(svc), lease_key(run.org), run.run_id, run.holder, LEASE_TTL_S))
    try:
        while not job.done():
            await asyncio.wait({job}, timeout=TICK_S)
            if not job.done():
                with contextlib.suppress(MemstoneError):  # a missed heartbeat is retried at the next tick
                    await _save(svc, _advanced(run, seen))
    finally:
        renew.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await renew
    error = job.exception() if not job.cancelled() else asyncio.CancelledError("the server stopped")
    try:
        await _finish(svc, run, None if error else job.result(), error, seen)
    except Exception as exc:  # the store closed under it (the server stopping): the record reads failed when stale
        logging.getLogger("memstone.maintenance").warning("embedding run %s: its end not recorded: %s", run.run_id, exc)


async def run_record(svc: MemoryService, run_id: str) -> EmbeddingRun:
    """A run's record as it is now (a ``running`` one whose server stopped reads ``failed``); NotFound for no such
    run or for one the actor may not administer (its org's admins, or the local user, see it)."""
    check_id(run_id, what="embedding run", prefix=RUN_PREFIX)
    data = await capture_store_of(svc.backend).setting(RECORD + run_id)
    if data is None:
        raise NotFound(f"no embedding run {run_id}", hint="start one: POST /api/embedding/runs")
    run = EmbeddingRun.from_dict(data)
    try:
        svc.policy.require_org_admin(run.org)
    except Forbidden:
        raise NotFound(f"no embedding run {run_id}", hint="an org's runs are shown to its admins") from None
    age = (datetime.now(UTC) - datetime.fromisoformat(run.updated_at.replace("Z", "+00:00"))).total_seconds()
    if run.state == "running" and age > STALE_S:
        from ..domain.errors import BackendUnavailable

        stopped = BackendUnavailable(
            f"the server carrying out embedding run {run_id} ({run.holder}) stopped {int(age)} s ago",
            hint="start the run again: a backfill resumes, an interrupted reembed left the old profile",
        )
        run = replace(run, state="failed", error=stopped.to_dict())
    return run


__all__ = ["KINDS", "EmbeddingRun", "lease_key", "run_record", "start_run"]
