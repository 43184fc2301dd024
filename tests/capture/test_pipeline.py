"""capture() end to end on a real SQLite file: modes, dedup into revisions, secrets never stored, the review queue."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest
from capture_helpers import PROJECT, USER, db_bytes

import memstone
from memstone import InvalidInput, MemoryService
from memstone.capture import (
    Bootstrap,
    CapturePipeline,
    CaptureSettings,
    EventContext,
    ExplicitSubmit,
    FileSnapshot,
    GitChange,
    ReviewFlag,
    ReviewQueue,
    SubmittedEntry,
    TurnStop,
    UserPrompt,
    Verification,
    accept,
    capture,
    load_capture_settings,
    reject,
    save_capture_settings,
)
from memstone.capture.events import event_sources

SECRET = "sk-proj-" + "Qh7Zk2Lm9Xw4Rt1Vb8Nc3Jp6Yd5Fs0Ga" * 3
CTX = EventContext(agent="claude-code", session_id="sess-1")


async def live_texts(svc: MemoryService, scope: str = PROJECT) -> list[str]:
    head = await svc.resolve(scope)
    return [v.text for v in await svc.entries(head)] if head else []


async def test_auto_stores_a_durable_statement_with_its_source(service: MemoryService) -> None:
    result = await capture(
        service, UserPrompt(text="Always run `make test` before pushing.", context=CTX), scope=PROJECT
    )
    assert result.status == "stored" and result.mode == "auto"
    (entry_id,) = result.entries()
    version = await service.get(entry_id)
    assert (version.kind, version.text, version.content.mandatory) == (
        "constraint", "Always run `make test` before pushing.", True,
    )  # fmt: skip
    assert version.provenance.surface == "agent-session"
    (source,) = result.sources
    assert version.content.sources == (source.source_id,)
    assert source.kind == "user-prompt" and json.loads(source.content)["text"].startswith("Always run")
    json.dumps(result.to_dict())  # JSON-ready for hooks and MCP


async def test_a_restatement_never_creates_a_second_entry(service: MemoryService) -> None:
    await capture(service, UserPrompt(text="We use uv for dependencies; never call pip directly."), scope=PROJECT)
    again = await capture(service, UserPrompt(text="As I said, we use uv, please don't use pip."), scope=PROJECT)
    assert again.status == "unchanged"
    assert [o.action for o in again.outcomes] == ["unchanged"]
    assert len(await live_texts(service)) == 1


async def test_a_correction_revises_the_entry_it_contradicts(service: MemoryService) -> None:
    first = await capture(
        service, UserPrompt(text="Refund endpoints must be idempotent; we keep the Idempotency-Key for 24 hours."),
        scope=PROJECT,
    )  # fmt: skip
    (entry_id,) = first.entries()
    fix = await capture(service, UserPrompt(text="Actually, keys should live for 48 hours, not 24."), scope=PROJECT)
    assert [o.action for o in fix.outcomes] == ["revised"] and fix.entries() == (entry_id,)
    history = await service.history(entry_id)
    assert [h.version.version for h in history] == [1, 2]
    assert history[1].version.text.endswith("Correction: keys should live for 48 hours, not 24.")
    assert set(history[0].version.content.sources) < set(history[1].version.content.sources)  # evidence kept
    assert len(await live_texts(service)) == 1


async def test_non_candidates_store_no_entry(service: MemoryService) -> None:
    for text in ("thanks!", "What does the reconcile job do?", "For this task, skip the tests.", "Maybe use Redis."):
        result = await capture(service, UserPrompt(text=text), scope=PROJECT)
        assert result.status == "nothing" and result.entries() == ()
    assert await service.resolve(PROJECT) is None


async def test_when_used_records_only_sources_that_back_something(service: MemoryService, db_path: Path) -> None:
    settings = CaptureSettings(record_sources="when_used")
    chatter = await capture(service, UserPrompt(text="lol nice, ok"), scope=PROJECT, settings=settings)
    assert chatter.sources == () and b"lol nice" not in db_bytes(db_path)
    always = await capture(service, UserPrompt(text="hmm, interesting"), scope=PROJECT)
    assert len(always.sources) == 1  # the default keeps every event as evidence


async def test_off_stores_nothing_at_all(service: MemoryService, db_path: Path) -> None:
    settings = CaptureSettings().with_mode(PROJECT, "off")
    result = await capture(service, UserPrompt(text="Never deploy on Fridays, zebra-marker."), scope=PROJECT,
                           settings=settings)  # fmt: skip
    assert (result.status, result.sources, result.outcomes) == ("off", (), ())
    assert await service.scopes() == ()
    assert b"zebra-marker" not in db_bytes(db_path)


@pytest.mark.parametrize(
    "event",
    [
        pytest.param(UserPrompt(text=f"Remember the OpenAI key {SECRET} for the judge; always use it."), id="prompt"),
        pytest.param(TurnStop(final_report=f"Configured it with {SECRET}.", changed_paths=("a.py",)), id="turn"),
        pytest.param(Bootstrap(files=(FileSnapshot(path="package.json", content=f'{{"token": "{SECRET}"}}'),)),
                     id="build-file"),
        pytest.param(GitChange(base_commit="a", head_commit="b", changed_paths=("x",), patch=f"+KEY={SECRET}"),
                     id="git-patch"),
        pytest.param(ExplicitSubmit(entries=(SubmittedEntry(kind="fact", text=f"The key is {SECRET}."),)), id="submit"),
    ],
)  # fmt: skip
@pytest.mark.parametrize("mode", ["auto", "review"])
async def test_a_secret_refuses_the_whole_event_and_never_reaches_the_db(
    service: MemoryService, db_path: Path, tmp_path: Path, event: object, mode: str
) -> None:
    queue = ReviewQueue.of(service)
    result = await capture(service, event, scope=PROJECT, mode=mode, queue=queue)  # type: ignore[arg-type]
    assert result.status == "refused" and result.sources == () and result.outcomes == ()
    assert result.findings and "openai_api_key" in (result.reason or "")
    assert "Nothing was stored" in (result.reason or "")
    assert SECRET not in (result.reason or "") and SECRET[8:30] not in json.dumps(result.to_dict())
    assert await service.scopes() == ()
    raw = db_bytes(db_path)
    assert SECRET.encode() not in raw and SECRET[8:40].encode() not in raw
    assert await queue.items() == ()


async def test_review_mode_queues_then_accept_writes_and_reject_sticks(service: MemoryService, tmp_path: Path) -> None:
    queue = ReviewQueue.of(service)
    settings = CaptureSettings().with_mode(PROJECT, "review")
    r1 = await capture(service, UserPrompt(text="Never log card numbers."), scope=PROJECT, settings=settings,
                       queue=queue)  # fmt: skip
    r2 = await capture(service, UserPrompt(text="Prefer table-driven tests."), scope=PROJECT, settings=settings,
                       queue=queue)  # fmt: skip
    assert (r1.status, r2.status) == ("queued", "queued")
    assert r1.sources and await service.resolve(PROJECT) is None  # evidence recorded, nothing written
    async with memstone.open_service(
        f"sqlite:///{tmp_path / 'memstone.db'}", embedding=None
    ) as other:  # durable: another process sees them
        assert len(await ReviewQueue.of(other).pending()) == 2
    item1, item2 = (o.queue_item for o in (r1.outcomes[0], r2.outcomes[0]))
    assert item1 and item2

    done = await accept(service, queue, item1, decided_by="alice")
    assert done.status == "stored"
    (entry_id,) = done.entries()
    version = await service.get(entry_id)
    assert version.text == "Never log card numbers." and version.provenance.surface == "human"
    assert (version.content.sources == r1.sources[0:1] and True) or version.content.sources == (
        r1.sources[0].source_id,
    )
    decided = await queue.get(item1)
    assert decided.status == "accepted" and decided.result_entry == entry_id
    with pytest.raises(InvalidInput):
        await accept(service, queue, item1)

    rejected = await reject(service, queue, item2, decided_by="alice", note="too generic")
    assert rejected.status == "rejected"
    again = await capture(service, UserPrompt(text="Prefer table-driven tests."), scope=PROJECT, settings=settings,
                          queue=queue)  # fmt: skip
    assert again.status == "unchanged" and await queue.pending() == ()  # a rejected statement is not queued again


async def test_accept_replans_against_the_current_head(service: MemoryService) -> None:
    queue = ReviewQueue.of(service)
    queued = await capture(service, UserPrompt(text="We use pnpm, not npm."), scope=PROJECT, mode="review",
                           queue=queue)  # fmt: skip
    await capture(service, UserPrompt(text="We use pnpm, not npm or yarn, everywhere."), scope=PROJECT)  # meanwhile
    item = queued.outcomes[0].queue_item
    assert item is not None
    done = await accept(service, queue, item)
    assert done.status == "unchanged"  # the live entry already says it: no second entry
    assert len(await live_texts(service)) == 1


async def test_modes_per_scope_persist_in_the_store(service: MemoryService, db_path: Path) -> None:
    assert await load_capture_settings(service) == CaptureSettings()  # nothing saved yet: the defaults
    await save_capture_settings(service, CaptureSettings().with_mode(PROJECT, "review").with_mode(USER, "off"))
    async with memstone.open_service(f"sqlite:///{db_path}", embedding=None) as other:  # another process reads them
        settings = await load_capture_settings(other)
    assert settings.mode_for(PROJECT) == "review" and settings.mode_for("memstone://orgs/x") == "auto"
    result = await capture(service, UserPrompt(text="Never push to main."), scope=PROJECT, settings=settings)
    assert result.status == "queued" and len(await ReviewQueue.of(service).pending()) == 1
    other = await capture(service, UserPrompt(text="Never push to main."), scope="memstone://orgs/acme/projects/b",
                          settings=settings)  # fmt: skip
    assert other.status == "stored"


async def test_cross_project_preferences_go_to_the_user_scope(service: MemoryService) -> None:
    result = await capture(
        service, UserPrompt(text="In all my projects I prefer 2-space indentation. Never use tabs here."), scope=PROJECT
    )
    assert {o.action for o in result.outcomes} == {"added"}
    assert await live_texts(service, USER) == ["In all my projects I prefer 2-space indentation."]
    assert await live_texts(service, PROJECT) == ["Never use tabs here."]


async def test_user_scope_off_keeps_project_capture(service: MemoryService) -> None:
    settings = CaptureSettings().with_mode(USER, "off")
    result = await capture(service, UserPrompt(text="I personally prefer explicit imports."), scope=PROJECT,
                           settings=settings)  # fmt: skip
    assert [o.action for o in result.outcomes] == ["off"] and await service.resolve(USER) is None


MAKEFILE = "test:\n\tpytest -q\nlint:\n\truff check .\n"


async def test_build_files_become_conventions_and_a_git_change_flags_or_revises_them(
    service: MemoryService, tmp_path: Path
) -> None:
    boot = await capture(service, Bootstrap(files=(FileSnapshot(path="Makefile", content=MAKEFILE),)), scope=PROJECT)
    assert boot.status == "stored"
    texts = await live_texts(service)
    assert "Tests run with `make test` (runs `pytest -q`)." in texts
    makefile_source = next(s for s in boot.sources if s.kind == "build-file")
    assert makefile_source.uri == "file:Makefile" and makefile_source.content == MAKEFILE.strip()

    queue = ReviewQueue.of(service)
    change = GitChange(base_commit="a1", head_commit="b2", changed_paths=("Makefile", "src/x.py"), patch="-x\n+y")
    flagged = await capture(service, change, scope=PROJECT, queue=queue)
    assert flagged.status == "queued" and {o.action for o in flagged.outcomes} == {"flagged"}
    pending = await queue.pending()
    assert len(pending) == 2 and all(isinstance(i.flag, ReviewFlag) for i in pending)
    assert len(await live_texts(service)) == 2  # a flag never writes

    new = "check:\n\tpytest -q -x\nlint:\n\truff check .\n"
    revised = await capture(
        service,
        GitChange(base_commit="b2", head_commit="c3", changed_paths=("Makefile",), files=(FileSnapshot(path="Makefile",
                  content=new),)),
        scope=PROJECT,
    )  # fmt: skip
    actions = sorted(o.action for o in revised.outcomes)
    assert actions.count("revised") == 2
    texts = await live_texts(service)
    assert "Tests run with `make check` (runs `pytest -q -x`)." in texts and len(texts) == 2

    item = (await queue.pending())[0].item_id
    closed = await accept(service, queue, item)
    assert closed.status == "nothing" and (await queue.get(item)).status == "accepted"


async def test_turn_stop_gives_one_working_note_and_trivial_turns_none(service: MemoryService) -> None:
    turn = TurnStop(
        final_report="Added retries with jitter to the webhook sender; go test passes.",
        changed_paths=("internal/webhook/sender.go",),
        verification=(Verification(command="go test ./...", outcome="passed"),),
        context=CTX,
    )
    result = await capture(service, turn, scope=PROJECT)
    assert result.status == "stored"
    (version,) = [await service.get(e) for e in result.entries()]
    assert version.kind == "working_note" and version.text.startswith("Turn report: Added retries")
    trivial = await capture(service, TurnStop(final_report="Done.", changed_paths=("a.go",)), scope=PROJECT)
    assert trivial.status == "nothing" and [s.reason for s in trivial.skipped] == ["trivial_turn"]
    answer = await capture(service, TurnStop(final_report="The job runs nightly and compares balances."), scope=PROJECT)
    assert answer.status == "nothing"


async def test_explicit_submissions_pass_admission_too(service: MemoryService) -> None:
    event = ExplicitSubmit(
        entries=(
            SubmittedEntry(kind="decision", text="We chose Postgres over MySQL for JSONB support.", important=True),
            SubmittedEntry(kind="fact", text="ok"),
            SubmittedEntry(kind="fact", text="Maybe we should try CockroachDB later on."),
        )
    )
    result = await capture(service, event, scope=PROJECT)
    assert sorted((o.action, o.reason or "") for o in result.outcomes)[0][0] == "added"
    assert {o.reason for o in result.outcomes if o.action == "rejected"} == {"too_short", "speculation"}
    (version,) = [await service.get(e) for e in result.entries()]
    assert version.kind == "decision" and version.content.important


async def test_capture_needs_exactly_one_target_and_review_queues_into_the_store(service: MemoryService) -> None:
    with pytest.raises(InvalidInput):
        await capture(service, UserPrompt(text="Never push."))
    queued = await capture(service, UserPrompt(text="Never push to main."), scope=PROJECT, mode="review")
    assert queued.status == "queued"  # no queue given: the one kept in the service's store
    (item,) = await ReviewQueue.of(service).pending()
    assert item.item_id == queued.outcomes[0].queue_item


async def test_capture_into_an_explicit_memory(service: MemoryService) -> None:
    rev = await service.remember(None, entries=[memstone.EntryInput(kind="fact", text="Seed entry for this memory.")])
    assert rev is not None
    result = await capture(service, UserPrompt(text="Never edit generated files."), memory=rev.ref)
    assert result.status == "stored" and result.outcomes[0].memory_id == rev.memory_id


async def test_the_candidate_pipeline_port_extracts_from_persisted_sources(service: MemoryService) -> None:
    event = Bootstrap(files=(FileSnapshot(path="Makefile", content=MAKEFILE),))
    drafts = event_sources(event)
    sources = [await service.record_source(d.kind, d.content, uri=d.uri) for d in drafts]
    statement = {"type": "user_prompt", "text": "Never push to main directly."}
    prompt = await service.record_source("user-prompt", json.dumps(statement))
    plans = await CapturePipeline(source_lookup=service.sources).extract([*sources, prompt], [])
    texts = sorted(getattr(p, "text", "") for p in plans)
    assert "Never push to main directly." in texts and any("make test" in t for t in texts)


async def test_two_writers_on_one_file_both_land(db_path: Path) -> None:
    url = f"sqlite:///{db_path}"
    async with memstone.open_service(url, embedding=None) as a, memstone.open_service(url, embedding=None) as b:
        results = await asyncio.gather(
            capture(a, UserPrompt(text="Never push to main directly."), scope=PROJECT),
            capture(b, UserPrompt(text="Prefer squash merges for feature branches."), scope=PROJECT),
        )
        assert [r.status for r in results] == ["stored", "stored"]
        assert len(await live_texts(a)) == 2


def test_the_capture_package_imports_no_mcp_sdk_and_no_model() -> None:
    code = (
        "import sys, memstone.capture; "
        "bad = [m for m in ('mcp', 'onnxruntime', 'numpy', 'tokenizers') if m in sys.modules]; "
        "print(bad); sys.exit(1 if bad else 0)"
    )
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).returncode == 0
