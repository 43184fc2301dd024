"""Maintenance runs through the library, on a real store and the real service (issue #14, items 1-4).

Each test names the rule it checks. Model calls are counted at the process edge (a fake OpenAI-compatible
server, tests/maintenance/maintenance_support.py) and in the run record.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from maintenance_support import DIM, fake_model_server

from memstone import EntryInput, MemoryService
from memstone.auth.model import Access, Grant, Permission, Principal
from memstone.domain.errors import Forbidden, InvalidInput, MaintenanceBusyError
from memstone.domain.model import EntryPatch
from memstone.embedding import OpenAICompatibleEmbedder
from memstone.maintenance import JudgeSettings, MaintenanceSettings, decide, maintain, proposals, runs
from memstone.service.policy import Actor

WEB = "memstone://orgs/acme/projects/web"
CLOSE = JudgeSettings(near_cosine=0.99)  # the paraphrase rule on, so the fake model is called


async def seed(svc: MemoryService, *entries: EntryInput, scope: str = WEB) -> list[str]:
    rev = await svc.remember(scope=scope, entries=list(entries))
    assert rev is not None
    return [v.entry_id for v in await svc.entries(rev)]


def conv(text: str, **fields: object) -> EntryInput:
    return EntryInput(kind="convention", text=text, **fields)  # type: ignore[arg-type]


RESTATED = (
    conv("Always run make test before pushing.", important=True),
    conv("Run make test before you push, always.", mandatory=True, tags=("ci",)),
    conv("Use ruff check for linting."),
    conv("Use ruff format for formatting."),
)


@pytest.mark.oceanbase
async def test_a_dry_run_records_proposals_with_their_hashes_and_writes_nothing(svc: MemoryService) -> None:
    await seed(svc, *RESTATED)
    head = await svc.resolve(WEB)
    report = await maintain(svc, scope=WEB)
    assert report.run.mode == "DRY_RUN" and report.run.status == "COMPLETED" and report.run.listed == 4
    (dup,) = report.proposals
    assert dup.kind == "duplicate" and dup.action == "merge" and dup.status == "PROPOSED"
    live = {v.entry_id: v.entry_content_hash for v in await svc.entries(head)}  # type: ignore[arg-type]
    assert dict(dup.hashes) == {e: live[e] for e in dup.entries}
    assert (await svc.resolve(WEB)) == head  # nothing written
    assert [p.proposal_id for p in await proposals(svc, scope=WEB)] == [dup.proposal_id]
    assert report.run.totals == {"proposals": 1, "kind:duplicate": 1, "status:PROPOSED": 1}
    (stored,) = await runs(svc, scope=WEB)
    assert stored == report.run


async def test_two_different_rules_are_not_merged(svc: MemoryService) -> None:
    await seed(svc, conv("Use ruff check for linting."), conv("Use ruff format for formatting."))
    report = await maintain(svc, scope=WEB, mode="apply")
    assert report.proposals == () and report.run.status == "COMPLETED"


AREA = tuple(
    conv(f"Module {a} must call {b} before {c}.")
    for a, b, c in (
        ("kalomi", "nupera", "sitoka"),
        ("lorami", "fuzaha", "sikefu"),
        ("voboju", "perake", "voraka"),
        ("keloli", "fugivo", "hazami"),
        ("tumimi", "rabogi", "sidinu"),
        ("xegidi", "dinuvo", "tuzabo"),
    )
)


async def test_two_rules_of_one_area_a_model_finds_close_are_not_merged_and_a_restatement_is(
    svc: MemoryService,
) -> None:
    # The fake model's vectors put any two of AREA at cosine 4/7 (module, must, call, before): above the
    # paraphrase threshold set here, and they share subject tokens (module, call). What they are about (the
    # modules and calls they name) differs, so the duplicate judge must keep them apart.
    restated = "Before sitoka, the kalomi module has to call nupera."
    await seed(svc, *AREA, conv(restated))
    close = MaintenanceSettings(judges=JudgeSettings(near_cosine=0.5))
    for model_on in (False, True):
        with fake_model_server() as fake:
            model = OpenAICompatibleEmbedder(fake.url, "fake", DIM) if model_on else None
            report = await maintain(svc, scope=WEB, model=model, settings=close)
        assert fake.requests == (1 if model_on else 0)
        head = await svc.resolve(WEB)
        assert head is not None
        text = {v.entry_id: v.text for v in await svc.entries(head)}
        merged = [{text[e] for e in p.entries} for p in report.proposals if p.action == "merge"]
        assert merged == [{AREA[0].text, restated}], merged


async def test_two_rules_naming_different_commands_are_not_merged_however_close_their_words(
    svc: MemoryService,
) -> None:
    await seed(
        svc,
        conv("Before a release, run `make bundle` to build the installer."),
        conv("Before a release, run `npm run package` to produce the installer."),
    )
    with fake_model_server() as fake:
        model = OpenAICompatibleEmbedder(fake.url, "fake", DIM)
        report = await maintain(
            svc, scope=WEB, model=model, settings=MaintenanceSettings(judges=JudgeSettings(near_cosine=0.5))
        )
    assert fake.requests == 1 and report.proposals == ()


@pytest.mark.oceanbase
async def test_apply_merges_a_restatement_keeping_both_flags_tags_and_every_word_in_history(
    svc: MemoryService,
) -> None:
    ids = await seed(svc, *RESTATED)
    report = await maintain(svc, scope=WEB, mode="APPLY")
    (dup,) = report.proposals
    assert dup.status == "APPLIED"
    survivor, absorbed = dup.entries
    head = await svc.resolve(WEB)
    assert head is not None and head.revision == 2  # one Revision for the proposal
    kept = await svc.get(survivor)
    assert kept.content.important and kept.content.mandatory and "ci" in kept.content.tags
    assert {r.target for r in kept.content.relations} == {absorbed}
    active = {v.entry_id for v in await svc.entries(head)}
    assert absorbed not in active and survivor in active and len(active) == len(ids) - 1
    (gone,) = await svc.history(absorbed)
    assert gone.status == "deleted" and gone.version.text in {e.text for e in RESTATED}
    assert report.run.totals["status:APPLIED"] == 1


async def test_a_run_over_unchanged_memory_lists_nothing_writes_nothing_and_calls_no_model(
    svc: MemoryService,
) -> None:
    await seed(svc, *RESTATED, conv("Deploy with uv."), conv("Pin every dependency exactly."))
    with fake_model_server() as fake:
        model = OpenAICompatibleEmbedder(fake.url, "fake", DIM)
        settings = MaintenanceSettings(judges=CLOSE)
        first = await maintain(svc, scope=WEB, mode="apply", model=model, settings=settings)
        assert fake.requests > 0 and first.run.usage.model_calls == fake.requests
        assert first.run.usage.input_tokens == 5 * fake.texts
        head = await svc.resolve(WEB)
        calls = fake.requests
        second = await maintain(svc, scope=WEB, mode="apply", model=model, settings=settings)
        assert fake.requests == calls  # zero model calls, counted at the server
    assert second.run.listed == 0 and second.proposals == ()
    assert second.run.usage.model_calls == 0 and second.run.usage.input_tokens == 0
    assert await svc.resolve(WEB) == head  # zero writes


async def test_a_dry_run_changes_nothing_not_even_the_ledger(svc: MemoryService) -> None:
    await seed(svc, *RESTATED)
    first = await maintain(svc, scope=WEB)
    assert await svc.backend.maintenance_ledger(WEB) == {}  # type: ignore[attr-defined]
    second = await maintain(svc, scope=WEB)
    assert first.run.listed == second.run.listed == 4 and len(second.proposals) == 1
    applied = await maintain(svc, scope=WEB, mode="apply")  # what the dry runs only proposed is applied now
    assert applied.run.listed == 4 and applied.proposals[0].status == "APPLIED"
    assert (await maintain(svc, scope=WEB, mode="apply")).run.listed == 0


async def test_only_entries_changed_since_the_last_pass_are_listed(svc: MemoryService) -> None:
    ids = await seed(svc, conv("Deploy with uv."), conv("Pin every dependency exactly."))
    await maintain(svc, scope=WEB, mode="apply")
    await svc.update(ids[0], EntryPatch(text="Deploy with uv, never pip."))
    again = await maintain(svc, scope=WEB)
    assert again.run.listed == 1


async def test_a_change_between_proposal_and_apply_is_skipped_hash_mismatch_and_seen_again(
    svc: MemoryService,
) -> None:
    await seed(svc, *RESTATED)
    (dup,) = (await maintain(svc, scope=WEB)).proposals
    await svc.update(dup.entries[1], EntryPatch(text="Run make test and make lint before you push."))
    head = await svc.resolve(WEB)
    done = await decide(svc, dup.proposal_id, accept=True)
    assert done.status == "SKIPPED_HASH_MISMATCH" and "changed" in (done.result or "")
    assert await svc.resolve(WEB) == head  # nothing written
    with pytest.raises(InvalidInput, match="SKIPPED_HASH_MISMATCH"):
        await decide(svc, dup.proposal_id, accept=True)  # final for that proposal
    again = await maintain(svc, scope=WEB, mode="apply")
    assert again.run.listed == 4  # the next run sees the changed entry again (nothing else was seen either)


async def test_an_agent_write_while_an_apply_run_judges_makes_its_proposal_skipped_hash_mismatch(
    svc: MemoryService, db_url: str
) -> None:
    import asyncio

    import memstone

    await seed(svc, *RESTATED)
    head = await svc.resolve(WEB)
    assert head is not None
    by_text = {v.text: v.entry_id for v in await svc.entries(head)}
    changed = "Run make test and make lint before you push."
    # An agent's own connection (another process's view of the store) writes while the run is inside its judge
    # step: after the run listed the entries, before it applies what it proposes on them.
    async with memstone.open_service(db_url, embedding=None) as agent:
        with fake_model_server(hold=True) as fake:
            model = OpenAICompatibleEmbedder(fake.url, "fake", DIM)
            cfg = MaintenanceSettings(judges=CLOSE)
            run = asyncio.create_task(maintain(svc, scope=WEB, mode="apply", model=model, settings=cfg))
            while fake.requests == 0:
                await asyncio.sleep(0.02)
            await agent.update(by_text[RESTATED[1].text], EntryPatch(text=changed))
            written = await agent.resolve(WEB)
            fake.release.set()
            report = await run
    (dup,) = report.proposals
    assert set(dup.entries) == {by_text[RESTATED[0].text], by_text[RESTATED[1].text]}
    assert dup.status == "SKIPPED_HASH_MISMATCH" and report.run.status == "COMPLETED"
    assert report.run.totals["status:SKIPPED_HASH_MISMATCH"] == 1
    assert await svc.resolve(WEB) == written  # the run wrote nothing over the agent's write
    assert (await svc.get(by_text[RESTATED[1].text])).text == changed
    again = await maintain(svc, scope=WEB)
    assert again.run.listed == 1  # the next run sees the changed entry again


async def test_a_rejected_proposal_writes_nothing_and_counts_in_its_run(svc: MemoryService) -> None:
    await seed(svc, *RESTATED)
    report = await maintain(svc, scope=WEB)
    head = await svc.resolve(WEB)
    done = await decide(svc, report.proposals[0].proposal_id, accept=False)
    assert done.status == "REJECTED" and await svc.resolve(WEB) == head
    (run,) = await runs(svc, scope=WEB)
    assert run.totals["status:REJECTED"] == 1 and "status:PROPOSED" not in run.totals
    again = await maintain(svc, scope=WEB, mode="apply")  # the rejected merge is not made again, nor applied
    assert again.proposals == () and await svc.resolve(WEB) == head


async def test_a_failed_step_is_retried_up_to_twice(svc: MemoryService) -> None:
    await seed(svc, *RESTATED)
    with fake_model_server(fail_first=2) as fake:
        model = OpenAICompatibleEmbedder(fake.url, "fake", DIM)
        report = await maintain(svc, scope=WEB, model=model, settings=MaintenanceSettings(judges=CLOSE))
    assert report.run.status == "COMPLETED" and report.run.retries == 2 and fake.requests == 3
    assert len(report.proposals) == 1
    assert report.run.usage.failed_calls == 2 and report.run.usage.model_calls >= fake.requests  # failures count


async def test_a_step_that_fails_three_times_fails_the_run_and_frees_the_scope(svc: MemoryService) -> None:
    await seed(svc, *RESTATED)
    head = await svc.resolve(WEB)
    with fake_model_server(fail_first=3) as fake:
        model = OpenAICompatibleEmbedder(fake.url, "fake", DIM)
        report = await maintain(svc, scope=WEB, mode="apply", model=model, settings=MaintenanceSettings(judges=CLOSE))
    assert report.run.status == "FAILED" and "judge:convention" in (report.run.error or "")
    assert await svc.resolve(WEB) == head
    assert (await maintain(svc, scope=WEB, model=None)).run.status == "COMPLETED"  # the lease was released


async def test_a_run_times_out_and_records_it(svc: MemoryService) -> None:
    await seed(svc, *RESTATED)
    head = await svc.resolve(WEB)
    with fake_model_server(delay_s=2.0) as fake:
        model = OpenAICompatibleEmbedder(fake.url, "fake", DIM)
        cfg = MaintenanceSettings(timeout_s=0.3, judges=CLOSE)
        report = await maintain(svc, scope=WEB, mode="apply", model=model, settings=cfg)
    assert report.run.status == "TIMED_OUT" and "timeout" in (report.run.error or "")
    (stored, *_) = await runs(svc, scope=WEB)
    assert stored.status == "TIMED_OUT" and stored.finished_at is not None
    assert await svc.resolve(WEB) == head  # timed out while judging: nothing written
    after = await maintain(svc, scope=WEB, mode="apply", settings=MaintenanceSettings(wait=False))
    assert after.run.status == "COMPLETED" and after.run.listed == 4  # the scope was freed, the ledger not advanced


async def test_a_second_start_while_a_run_holds_the_scope_queues_or_is_refused(svc: MemoryService, db_url: str) -> None:
    import asyncio

    import memstone

    await seed(svc, *RESTATED)
    # Another process's view of the store: its own connection, the lease in the file.
    async with memstone.open_service(db_url, embedding=None) as other:
        with fake_model_server(delay_s=0.5) as fake:
            model = OpenAICompatibleEmbedder(fake.url, "fake", DIM)
            first = asyncio.create_task(
                maintain(svc, scope=WEB, model=model, settings=MaintenanceSettings(judges=CLOSE))
            )
            while fake.requests == 0:
                await asyncio.sleep(0.02)
            with pytest.raises(MaintenanceBusyError):
                await maintain(other, scope=WEB, settings=MaintenanceSettings(wait=False))
            said: list[str] = []
            second = await maintain(other, scope=WEB, progress=said.append)
            done = await first
    assert second.run.queued_behind == done.run.run_id and any("queued behind" in s for s in said)
    assert second.run.status == "COMPLETED" and second.run.started_at >= done.run.finished_at  # type: ignore[operator]


def actor(user: str, grants: dict[str, Permission]) -> Actor:
    access = Access(
        principal=Principal(principal_id=f"prn_{user}", user=user, org="acme"),
        grants=tuple(Grant(scope=s, permission=p) for s, p in grants.items()),
    )
    return Actor.of(access, surface="api")


async def test_the_scope_comes_from_the_verified_principal(svc: MemoryService) -> None:
    await seed(svc, conv("Alice prefers tabs."), scope="memstone://users/alice")
    await seed(svc, *RESTATED)
    alice = svc.acting(actor("alice", {}))
    own = await maintain(alice, mode="apply")
    assert own.run.scope == "memstone://users/alice" and own.run.listed == 1
    with pytest.raises(Forbidden):
        await maintain(alice, scope=WEB)  # another tenant's scope, named in the input
    with pytest.raises(Forbidden):
        await maintain(svc.acting(actor("bob", {WEB: "read"})), scope=WEB)
    assert (await maintain(svc.acting(actor("carol", {WEB: "write"})), scope=WEB)).run.listed == 4
    with pytest.raises(InvalidInput, match="name the scope"):
        await maintain(svc)  # the local user names it


async def test_superseded_entries_are_merged_never_bare_deleted_and_old_notes_retired(
    svc: MemoryService,
) -> None:
    old_note = EntryInput(kind="working_note", text="Turn report: refactored the loader and fixed two tests.")
    kept_note = EntryInput(
        kind="working_note", text="Turn report: the flaky upload test is quarantined.", important=True
    )
    ids = await seed(svc, old_note, kept_note, conv("Deploy with Docker.", mandatory=True))
    head = await svc.resolve(WEB)
    assert head is not None
    new = await svc.remember(head, entries=[conv("Deploy with uv and systemd.")])
    assert new is not None
    fresh = next(v.entry_id for v in await svc.entries(new) if v.entry_id not in ids)
    await svc.relate(new, fresh, ids[2], "supersedes")
    cfg = MaintenanceSettings(judges=JudgeSettings(note_max_age_days=-1))  # every note counts as old
    report = await maintain(svc, scope=WEB, mode="apply", settings=cfg)
    prunes = [p for p in report.proposals if p.kind == "prune"]
    assert {(p.action, p.entries) for p in prunes} == {("merge", (fresh, ids[2])), ("retire", (ids[0],))}
    assert all(p.status == "APPLIED" for p in prunes)
    survivor = await svc.get(fresh)
    assert survivor.content.mandatory  # inherited from what it superseded
    live = {v.entry_id for v in await svc.entries(await svc.resolve(WEB))}  # type: ignore[arg-type]
    assert ids[1] in live  # the important note is never a bare-delete candidate


async def test_slug_review_renames_a_drifted_slug_and_keeps_the_alias(svc: MemoryService) -> None:
    (eid,) = await seed(svc, conv("Deploy with uv.", slug="deploy-tool"))
    await maintain(svc, scope=WEB)
    await svc.update(eid, EntryPatch(text="Format code with ruff format before each commit."))
    report = await maintain(svc, scope=WEB, mode="apply")
    (ren,) = [p for p in report.proposals if p.kind == "slug"]
    assert ren.status == "APPLIED" and ren.slug and "ruff" in ren.slug
    head = await svc.resolve(WEB)
    assert head is not None
    assert (await svc.lookup(WEB, kind="convention", slug="deploy-tool")).entry_id == eid


async def test_empty_and_orphaned_entries_are_flagged_informational(svc: MemoryService) -> None:
    ids = await seed(svc, conv("Ok."), conv("Deploy with uv."))
    head = await svc.resolve(WEB)
    assert head is not None
    rev = await svc.relate(head, ids[1], ids[0], "clarifies")
    await svc.forget(rev, entries=[ids[0]])
    await maintain(svc, scope=WEB)  # the empty entry is informational once
    await svc.update(ids[1], EntryPatch(text="Deploy with uv, never pip."))
    report = await maintain(svc, scope=WEB, mode="apply")
    (orphan,) = report.proposals
    assert orphan.kind == "empty" and orphan.status == "INFORMATIONAL" and "orphaned" in orphan.evidence


async def test_an_oversized_mandatory_tier_gets_demotions_for_what_not_every_session_needs(
    svc: MemoryService,
) -> None:
    gate = conv("Always run make test before you say the work is done.", mandatory=True)
    local = conv("Never log full card numbers or CVVs in the payment service.", mandatory=True)
    await seed(svc, gate, local)
    cfg = MaintenanceSettings(judges=JudgeSettings(mandatory_budget_chars=60))
    report = await maintain(svc, scope=WEB, mode="apply", settings=cfg)
    (demote,) = [p for p in report.proposals if p.action == "demote"]
    assert demote.status == "APPLIED"
    flags = {v.text: (v.content.important, v.content.mandatory) for v in await svc.entries(await svc.resolve(WEB))}  # type: ignore[arg-type]
    assert flags[local.text] == (True, False) and flags[gate.text] == (False, True)


async def test_a_bad_mode_is_refused_by_name(svc: MemoryService) -> None:
    with pytest.raises(InvalidInput, match="dry-run"):
        await maintain(svc, scope=WEB, mode="yolo")


async def test_proposals_survive_as_values(svc: MemoryService) -> None:
    await seed(svc, *RESTATED)
    (p,) = (await maintain(svc, scope=WEB)).proposals
    from memstone.maintenance import Proposal

    assert Proposal.from_dict(p.to_dict()) == p
    assert replace(p, status="APPLIED").status == "APPLIED"


async def test_the_judges_need_no_model_unless_asked_and_then_use_the_services(db_url: str) -> None:
    import memstone

    with fake_model_server() as fake:
        model = OpenAICompatibleEmbedder(fake.url, "fake", DIM)
        async with memstone.open_service(db_url, embedding=model) as svc:
            await seed(svc, *RESTATED)
            writes = fake.requests  # the writes embedded their entries
            plain = await maintain(svc, scope=WEB, settings=MaintenanceSettings(judges=CLOSE))
            assert fake.requests == writes and plain.run.usage.model_calls == 0  # deterministic by default
            await svc.update(plain.proposals[0].entries[1], EntryPatch(text="Run make test before every push."))
            before = fake.requests
            asked = await maintain(svc, scope=WEB, model=True, settings=MaintenanceSettings(judges=CLOSE))
            assert asked.run.usage.model_calls == fake.requests - before > 0


async def test_a_run_whose_process_stopped_is_recorded_failed_by_the_next_one(svc: MemoryService) -> None:
    import asyncio

    from memstone.domain.maintenance import MaintenanceRun

    await seed(svc, *RESTATED)
    store = svc.backend
    dead = MaintenanceRun(run_id="mrun_dead", scope=WEB, mode="APPLY", status="RUNNING", created_at="", holder="x:1")
    assert await store.lease_maintenance(WEB, dead.run_id, dead.holder, 0.05) is None  # type: ignore[attr-defined]
    await store.save_maintenance(dead)  # type: ignore[attr-defined]
    await asyncio.sleep(0.1)  # its lease runs out: nobody renews it
    report = await maintain(svc, scope=WEB)
    assert report.run.status == "COMPLETED" and report.run.queued_behind is None
    (stale,) = [r for r in await runs(svc, scope=WEB) if r.run_id == "mrun_dead"]
    assert stale.status == "FAILED" and "abandoned" in (stale.error or "")
