"""One governed maintenance run per scope: lease, queue, digest-gated listing, judged partitions, apply, record.

The scope comes from the caller's verified principal: an authenticated actor maintains its own user scope
unless it names one it holds ``write`` on (any other name is refused by the policy, so a caller cannot run
maintenance for another tenant). Only one run per scope is active at a time, across processes and machines:
the run holds the scope's lease in the store and renews it while it works; a second start while one runs is
recorded as ``QUEUED`` behind it and waits (or, with ``wait=False``, is refused with MaintenanceBusyError). A
failed step is retried up to twice; the whole run times out (30 minutes by default). The terminal status and
the totals are recorded; the totals are derived from the proposals.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from functools import partial
from typing import TYPE_CHECKING, TypeVar

from ..domain.errors import (
    CapabilityNotSupportedError,
    Forbidden,
    InvalidInput,
    MaintenanceBusyError,
    MemstoneError,
    NotFound,
)
from ..domain.fields import PlainDict
from ..domain.ids import EntryId, new_ulid
from ..domain.maintenance import (
    PROPOSAL_ORDER,
    MaintenanceMode,
    MaintenanceRun,
    Proposal,
    RunStatus,
    is_stale,
    parse_mode,
    totals,
)
from ..domain.model import EntryVersion
from ..domain.scopes import canonical_scope
from ..ports import ChatModel, EmbeddingModel, MaintenanceStore
from . import evidence, judges, model_judge
from .apply import apply_proposal

if TYPE_CHECKING:
    from ..service import MemoryService

T = TypeVar("T")
Progress = Callable[[str], None]


@dataclass(frozen=True, slots=True, kw_only=True)
class MaintenanceSettings:
    """How a run behaves. The defaults follow the seed: 30-minute timeout, a failed step retried up to twice."""

    timeout_s: float = 1800.0
    step_attempts: int = 3
    lease_ttl_s: float = 120.0
    poll_s: float = 0.25
    wait: bool = True  # a second start while a run holds the scope queues behind it (False: MaintenanceBusyError)
    judges: judges.JudgeSettings = field(default_factory=judges.JudgeSettings)
    chat: ChatModel | None = None  # the optional model judge (off by default); its proposals await a decision


@dataclass(frozen=True, slots=True, kw_only=True)
class RunReport(PlainDict):
    """A finished run and the proposals it recorded."""

    run: MaintenanceRun
    proposals: tuple[Proposal, ...]


class _StepFailed(Exception):
    def __init__(self, step: str, error: BaseException) -> None:
        super().__init__(f"step {step} failed 3 times: {error}")
        self.step = step
        self.error = error


def store_of(svc: MemoryService) -> MaintenanceStore:
    backend = svc.backend
    if not isinstance(backend, MaintenanceStore):
        raise CapabilityNotSupportedError(
            "maintenance", "this store keeps no maintenance ledger", hint="use a sqlite:/// store"
        )
    return backend


def repo_for(svc: MemoryService, repo: str | None) -> str | None:
    """The git work tree a run judges code evidence in, as a caller named it (HTTP, MCP): a path on the machine
    that runs memstone, so only a local caller (local mode: the machine's own user) may name one; a caller with a
    token is refused (Forbidden), as it could probe the server's directories. None: no code evidence."""
    if repo is None:
        return None
    access = svc.actor.access
    if access is not None and not access.local:
        raise Forbidden(
            "a repository path names a directory on the server; only a local caller may pass one",
            hint="run `memstone maintain --repo DIR` on the machine that holds the work tree",
        )
    top = evidence.work_tree(repo)
    if top is None:
        raise InvalidInput(f"{repo} is not in a git work tree", hint="pass the directory of a git checkout")
    return top


async def scope_for(svc: MemoryService, scope: str | None) -> str:
    """The scope a run may maintain: the one named (if the actor holds ``write`` on it), else its own user scope."""
    access = svc.actor.access
    if scope is None:
        if access is None or access.local:
            raise InvalidInput("name the scope to maintain", hint="pass scope='memstone://…' (CLI: --scope)")
        scope = access.principal.user_scope
    uri = canonical_scope(scope)
    await svc.policy.require_named(uri, "write")
    return uri


class _Run:
    """The state of one run while it works (the record is saved after every step)."""

    def __init__(
        self,
        svc: MemoryService,
        store: MaintenanceStore,
        run: MaintenanceRun,
        settings: MaintenanceSettings,
        model: EmbeddingModel | None,
        progress: Progress,
    ) -> None:
        self.svc, self.store, self.run, self.settings = svc, store, run, settings
        self.model, self.progress = model, progress
        self.proposals: list[Proposal] = []
        self.resume: list[tuple[MaintenanceRun, Proposal]] = []  # an abandoned APPLY run's undecided proposals

    def _now(self) -> str:
        from ..service import utc_now

        return utc_now()

    async def embed(self, texts: tuple[str, ...]) -> tuple[tuple[float, ...], ...]:
        assert self.model is not None
        if not texts:
            return ()
        try:
            result = await self.model.embed(texts)
        except Exception:
            self.run = replace(self.run, usage=self.run.usage.plus(1, 0, failed=1))  # a failed call is a call
            raise
        self.run = replace(self.run, usage=self.run.usage.plus(max(result.usage.calls, 1), result.usage.input_tokens))
        if len(result.vectors) != len(texts):
            raise InvalidInput(f"the model returned {len(result.vectors)} vectors for {len(texts)} texts")
        return result.vectors

    async def step(self, name: str, fn: Callable[[], Awaitable[T]]) -> T:
        """Run one step; a failure is retried up to ``step_attempts - 1`` times (twice by default)."""
        for attempt in range(1, self.settings.step_attempts + 1):
            try:
                return await fn()
            except (MemstoneError, OSError, ValueError, RuntimeError) as exc:
                if attempt == self.settings.step_attempts:
                    raise _StepFailed(name, exc) from exc
                self.run = replace(self.run, retries=self.run.retries + 1)
                self.progress(f"step {name} failed ({exc}); retrying ({attempt}/{self.settings.step_attempts - 1})")
        raise AssertionError("unreachable")

    async def finish_abandoned(self) -> None:
        """Apply what an abandoned APPLY run left undecided, recorded under that run (its totals re-derived)."""
        for owner, p in self.resume:
            decided, seen = await self.step(
                f"apply:{p.proposal_id}", partial(apply_proposal, self.svc, p, at=self._now(), resumed=True)
            )
            left = await self.store.maintenance_proposals(run_id=owner.run_id)
            mine = [decided if q.proposal_id == p.proposal_id else q for q in left]
            await self.step(
                "record", partial(record_decision, self.store, replace(owner, totals=totals(mine)), decided, seen)
            )
            self.progress(f"resumed {decided.kind} {decided.action} of run {owner.run_id}: {decided.status}")

    async def work(self) -> None:
        if self.resume:
            await self.finish_abandoned()
        head = await self.step("list", lambda: self.svc.resolve(self.run.scope))
        if head is None:
            self.progress(f"{self.run.scope} holds no memory; nothing to maintain")
            return
        live: list[EntryVersion] = await self.step("list", lambda: self.svc.entries(head))
        ledger = await self.step("list", lambda: self.store.maintenance_ledger(self.run.scope))
        changed = {v.entry_id for v in live if ledger.get(v.entry_id) != v.entry_content_hash}
        active = {v.entry_id for v in live}
        unseen = [e for e in ledger if e not in active]
        outdated = await self.step("evidence", lambda: self.evidence(live))
        listed = len(changed | set(outdated))
        self.run = replace(self.run, memory_id=head.memory_id, head_revision=head.revision, listed=listed)
        self.progress(f"listed {listed} changed of {len(live)} active entries (revision {head.revision})")
        if not changed and not unseen and not outdated:
            return  # the digest gate: nothing changed since the last pass; no judge runs, no model is called
        taken: set[EntryId] = set()
        drafts: list[judges.Draft] = []
        partitions = sorted({v.kind for v in live if v.entry_id in changed or v.entry_id in outdated})
        threshold = judges.semantic_threshold(self.model, self.settings.judges)
        embed = self.embed if self.model is not None else None
        cfg = self.settings.judges
        now = self._now()
        for kind in partitions:
            part = [v for v in live if v.kind == kind]

            async def judge(part: list[EntryVersion] = part, kind: str = kind) -> list[judges.Draft]:
                mine = set(taken)  # a retried step starts from what earlier partitions took
                out = await judges.duplicates(kind, part, changed, mine, embed, threshold, cfg.subject_share)
                out += judges.prune(kind, part, changed, mine, now, cfg)
                out += judges.slugs(kind, part, changed, mine)
                out += judges.stale(kind, part, outdated, mine)
                out += judges.empties(kind, part, changed, active)
                out += await self.model_judge(kind, part, changed, mine)
                taken.update(mine)
                return out

            found = await self.step(f"judge:{kind}", judge)
            drafts += found
            self.progress(f"partition {kind}: {len(part)} entries, {len(found)} proposals")
        drafts += judges.mandatory_audit(live, changed, taken, cfg)
        by_id = {v.entry_id: v for v in live}
        drafts.sort(key=lambda d: (PROPOSAL_ORDER.index(d.kind), d.partition))
        for d in drafts:
            self.proposals.append(
                Proposal(
                    proposal_id=new_ulid("mprop_"),
                    run_id=self.run.run_id,
                    scope=self.run.scope,
                    memory_id=head.memory_id,
                    kind=d.kind,
                    partition=d.partition,
                    action=d.action,
                    entries=d.entries,
                    hashes=tuple((e, by_id[e].entry_content_hash) for e in d.entries),
                    evidence=d.evidence,
                    text=d.text,
                    slug=d.slug,
                    status="INFORMATIONAL" if d.action == "inform" else "PROPOSED",
                    created_at=now,
                    judge=d.judge,
                )
            )
        # Trigger: a DRY_RUN. Why: a dry run changes nothing, the ledger included; were it to record what it saw,
        # the next APPLY run would list nothing and never apply what the dry run only proposed. Outcome: only an
        # APPLY run (or an accepted proposal) advances the ledger.
        apply = self.run.mode == "APPLY"
        seen = {v.entry_id: v.entry_content_hash for v in live if v.entry_id in changed} if apply else {}
        gone = unseen if apply else []
        # Proposals and the ledger land together: a crash after this keeps the judgements, stored and decidable.
        await self.step("record", lambda: self.store.save_maintenance(self.run, self.proposals, seen=seen, unseen=gone))
        if apply:
            await self.apply_all()

    async def model_judge(
        self, kind: str, part: list[EntryVersion], changed: set[EntryId], mine: set[EntryId]
    ) -> list[judges.Draft]:
        """The optional chat-model judge over one partition (only one with a changed entry); every call counted."""
        chat = self.settings.chat
        if chat is None:
            return []
        user = model_judge.prompt(kind, part, changed, mine)
        if user is None:
            return []
        try:
            result = await model_judge.ask(chat, user)
        except Exception:
            self.run = replace(self.run, usage=self.run.usage.plus(1, 0, failed=1))  # a failed call is a call
            raise
        self.run = replace(
            self.run,
            usage=self.run.usage.plus(max(result.usage.calls, 1), result.usage.input_tokens, result.output_tokens),
        )
        found, refused = model_judge.judge(result, kind, part, changed, mine, chat.name)
        for why in refused:
            self.progress(f"model judge, partition {kind}: refused {why}")
        return found

    async def evidence(self, live: list[EntryVersion]) -> dict[EntryId, str]:
        """Entries whose evidence changed (stale summaries; code-anchored entries, when a repository is set),
        less those already tagged stale or whose stale proposal was rejected on the same content hash."""
        todo = [v for v in live if not is_stale(v.content.tags)]
        if not todo:
            return {}
        found = evidence.summary_stale(live)
        if self.settings.judges.repo is not None:
            git = evidence.GitEvidence(self.settings.judges.repo)
            ids = sorted({s for v in todo for s in v.content.sources})
            sources = {s.source_id: s for s in await self.svc.sources(ids)} if ids else {}
            cited = [v for v in todo if any(s in sources and sources[s].uri for s in v.content.sources)]
            found.update(await asyncio.to_thread(evidence.code_stale, cited, sources, git))
        if not found:
            return {}
        judged = {
            (p.entries[0], p.hashes[0][1])
            for p in await self.store.maintenance_proposals(scope=self.run.scope)
            if p.kind == "stale" and p.status == "REJECTED" and p.hashes
        }
        return {
            v.entry_id: found[v.entry_id]
            for v in todo
            if v.entry_id in found and (v.entry_id, v.entry_content_hash) not in judged
        }

    async def apply_all(self) -> None:
        for i, p in enumerate(self.proposals):
            if p.status != "PROPOSED" or p.judge == "model":
                continue  # a model's candidate never decides anything by itself: it waits for a decision
            decided, seen = await self.step(f"apply:{p.proposal_id}", partial(self.apply_one, p))
            self.proposals[i] = decided
            await self.step("record", partial(self.record_decision, decided, seen))
            self.progress(f"{decided.kind} {decided.action} {' '.join(decided.entries)}: {decided.status}")

    async def apply_one(self, p: Proposal) -> tuple[Proposal, dict[EntryId, str]]:
        return await apply_proposal(self.svc, p, at=self._now())

    async def record_decision(self, decided: Proposal, seen: dict[EntryId, str]) -> None:
        await record_decision(self.store, self.run, decided, seen)


async def record_decision(
    store: MaintenanceStore, run: MaintenanceRun, decided: Proposal, seen: dict[EntryId, str]
) -> None:
    """Save a decided proposal; an applied one's entries are seen at their new hashes (absorbed ones dropped)."""
    gone = [e for e in decided.entries if e not in seen] if decided.status == "APPLIED" else []
    await store.save_maintenance(run, [decided], seen=seen, unseen=gone)


async def maintain(
    svc: MemoryService,
    *,
    scope: str | None = None,
    mode: MaintenanceMode | str = "DRY_RUN",
    settings: MaintenanceSettings | None = None,
    model: EmbeddingModel | bool | None = False,
    progress: Progress | None = None,
    request: MaintenanceRun | None = None,
) -> RunReport:
    """Run maintenance over one scope: ``DRY_RUN`` (default) records proposals, ``APPLY`` also writes them.

    The judges are deterministic and need no model. ``model`` adds capture's paraphrase rule (vectors of the
    changed entries' partitions): an embedding model, or True for the service's own; False/None (the default)
    none. A run over unchanged memory calls no model at all. ``request``: a queued run record
    (:func:`memstone.maintenance.queue.enqueue`) to carry out; its scope and mode replace ``scope``/``mode``, and
    its repository (the requester's work tree, when it named one) replaces ``settings.judges.repo``.

    >>> report = await maintain(svc, scope="memstone://orgs/acme/projects/web", mode="apply")   # doctest: +SKIP
    >>> report.run.status, report.run.totals["proposals"]                             # doctest: +SKIP
    ('COMPLETED', 3)
    """
    from ..service import utc_now

    cfg = settings or MaintenanceSettings()
    say = progress or (lambda _msg: None)
    run_mode = parse_mode(request.mode if request is not None else mode)
    store = store_of(svc)
    uri = await scope_for(svc, request.scope if request is not None else scope)
    holder = f"{socket.gethostname()}:{os.getpid()}"
    if request is not None and request.repo is not None:  # the requester's work tree, as its direct run used it
        cfg = replace(cfg, judges=replace(cfg.judges, repo=request.repo))
    if cfg.judges.repo is not None:
        try:
            evidence.GitEvidence(cfg.judges.repo)  # a repository that is not one is refused before the run starts
        except InvalidInput as exc:
            if request is None:
                raise
            # Trigger: a queued request whose work tree is not one where it is carried out (another machine, or
            # removed since). Why: a run without it would miss the stale evidence its caller asked for. Outcome:
            # the request is recorded FAILED with the reason (carry_out took its lease: released here).
            failed = replace(request, status="FAILED", holder=holder, finished_at=utc_now(), error=str(exc))
            await store.save_maintenance(failed)
            await store.release_maintenance(uri, request.run_id)
            return RunReport(run=failed, proposals=())
    judge_model: EmbeddingModel | None
    if isinstance(model, bool):
        judge_model = (svc.indexer.model if svc.indexer is not None else None) if model else None
    else:
        judge_model = model
    run = MaintenanceRun(
        run_id=new_ulid("mrun_"), scope=uri, mode=run_mode, status="QUEUED", created_at=utc_now(), holder=holder
    )
    if request is not None:
        run = replace(request, scope=uri, mode=run_mode, status="QUEUED", holder=holder)
    run = replace(run, repo=cfg.judges.repo)
    deadline = time.monotonic() + cfg.timeout_s
    other = await take_lease(store, uri, run.run_id, holder, cfg.lease_ttl_s)
    if other is not None:
        if not cfg.wait:
            raise MaintenanceBusyError(
                f"maintenance run {other} is active for {uri}", hint="wait for it to finish, or start without --no-wait"
            )
        run = replace(run, queued_behind=other)
        await store.save_maintenance(run)
        say(f"queued behind run {other}, which holds {uri}")
        while other is not None:
            if time.monotonic() > deadline:
                run = replace(run, status="TIMED_OUT", finished_at=utc_now(), error=f"still queued behind {other}")
                await store.save_maintenance(run)
                return RunReport(run=run, proposals=())
            await asyncio.sleep(cfg.poll_s)
            other = await take_lease(store, uri, run.run_id, holder, cfg.lease_ttl_s)
    resume: list[tuple[MaintenanceRun, Proposal]] = []
    for stale in await store.maintenance_runs(scope=uri):
        if stale.status == "RUNNING":
            # Trigger: a RUNNING record while this run holds the scope's lease. Why: only the lease holder runs,
            # so that run's process stopped (killed, or its lease ran out). Outcome: it is recorded FAILED; each
            # proposal it applied is a whole Revision; an APPLY run's undecided rules proposals are finished by
            # this run first (hash-checked, so one whose Revision committed before the kill is not written twice).
            left = await store.maintenance_proposals(run_id=stale.run_id)
            failed = replace(
                stale, status="FAILED", finished_at=utc_now(), error="abandoned: its process stopped",
                totals=totals(left),
            )  # fmt: skip
            await store.save_maintenance(failed)
            if stale.mode == "APPLY":
                resume += [(failed, p) for p in left if p.status == "PROPOSED" and p.judge != "model"]
    state = _Run(svc, store, replace(run, status="RUNNING", started_at=utc_now()), cfg, judge_model, say)
    state.resume = resume
    say(f"run {run.run_id} started on {uri} ({run_mode})")
    renew = asyncio.create_task(renew_lease(store, uri, run.run_id, holder, cfg.lease_ttl_s))
    try:
        await store.save_maintenance(state.run)
        try:
            async with asyncio.timeout(max(deadline - time.monotonic(), 0.0)):
                await state.work()
            status: RunStatus = "COMPLETED"
            error: str | None = None
        except TimeoutError:
            status, error = "TIMED_OUT", f"the run exceeded its timeout of {cfg.timeout_s:g} s"
        except _StepFailed as exc:
            status, error = "FAILED", str(exc)
        except NotFound as exc:
            status, error = "FAILED", str(exc)
        end = await svc.resolve(uri)
        final = replace(
            state.run,
            status=status,
            finished_at=utc_now(),
            error=error,
            totals=totals(state.proposals),
            end_revision=end.revision if end is not None else 0,
        )
        await store.save_maintenance(final)
        say(f"run {final.run_id} {status.lower()}: {final.totals.get('proposals', 0)} proposals")
        return RunReport(run=final, proposals=tuple(state.proposals))
    finally:
        renew.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await renew
        await store.release_maintenance(uri, run.run_id)


async def take_lease(store: MaintenanceStore, scope: str, run_id: str, holder: str, ttl_s: float) -> str | None:
    """Take the scope's lease (None: ours now), else the holding run's id. A lease held by a run of a process on
    this host that no longer exists (``kill -9``) is taken over at once instead of after its TTL."""
    other = await store.lease_maintenance(scope, run_id, holder, ttl_s)
    if other is None:
        return None
    found = await store.maintenance_runs(run_id=other)
    if found and _dead_here(found[0].holder):
        # Trigger: the lease's run belongs to a process of this host that is gone. Why: nobody renews it, and a
        # restarted daemon would otherwise wait out its TTL. Outcome: released (only if that run still holds it),
        # then taken like any free lease; the next step records the abandoned run FAILED and finishes it.
        await store.release_maintenance(scope, other)
        return await store.lease_maintenance(scope, run_id, holder, ttl_s)
    return other


def _dead_here(holder: str) -> bool:
    host, _, pid = holder.rpartition(":")
    if host != socket.gethostname() or not pid.isdigit() or int(pid) == os.getpid():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False  # it exists (another user's process)
    return False


async def renew_lease(store: MaintenanceStore, scope: str, run_id: str, holder: str, ttl_s: float) -> None:
    """Keep the lease while the run (or a daemon's embedding check) works; one that dies stops renewing, and its
    lease runs out."""
    while True:
        await asyncio.sleep(ttl_s / 3)
        await store.lease_maintenance(scope, run_id, holder, ttl_s)


__all__ = [
    "MaintenanceSettings",
    "Progress",
    "RunReport",
    "maintain",
    "renew_lease",
    "repo_for",
    "scope_for",
    "store_of",
    "take_lease",
]
