"""``memstone copy`` (issue 13): a store copied to another engine and back keeps its whole history exactly (every
Revision and content hash, byte-identical export), resumes after an interruption without writing anything twice,
and refuses a target that holds another history."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from memstone import EntryInput, open_service
from memstone.backends import open_store
from memstone.cli.main import cli
from memstone.domain.errors import Conflict, InvalidInput
from memstone.domain.model import EntryPatch
from memstone.embedding.hashing import HashingEmbedder
from memstone.service.copy import CopyReport, copy_store, copy_urls

ORG = "memstone://orgs/acme"
WEB = "memstone://orgs/acme/projects/web"


async def _rich_store(url: str) -> str:
    """A store with every kind of history: scoped and unbound Memories, evidence, revisions, forget and
    reactivate, links, cross-Memory artifacts and a purge. Returns the purged entry's id."""
    async with open_service(url, embedding=None, author="alice") as svc:
        note = await svc.record_source("note", "The user said we deploy with uv and pin every dependency.")
        org = await svc.remember(scope=ORG, entries=[EntryInput(kind="policy", text="Every change is reviewed.")])
        assert org is not None
        web = await svc.remember(
            scope=WEB,
            sources=[note],
            artifacts=[org.ref],
            entries=[
                EntryInput(kind="fact", text="We deploy with uv.", tags=["deploy"], slug="deploy"),
                EntryInput(kind="lesson", text="Pin every dependency exactly.", important=True),
            ],
        )
        assert web is not None
        deploy, pin = (c.entry_id for c in sorted(web.changes, key=lambda c: c.entry_id))
        await svc.update(deploy, EntryPatch(text="We deploy with uv, from CI only."))
        await svc.forget(await svc.head(web), entries=[pin], reason="superseded")
        await svc.reactivate(await svc.head(web), entries=[pin], reason="still true")
        secret = await svc.remember(
            scope=WEB, entries=[EntryInput(kind="fact", text="Customer Qzxwvjoy card 4111, written by mistake.")]
        )
        assert secret is not None
        purged = next(c.entry_id for c in secret.changes)
        await svc.purge(purged, reason="card number")
        loose = await svc.remember(None, entries=[EntryInput(kind="fact", text="An unbound memory's fact.")])
        assert loose is not None
        for n in range(12):
            await svc.remember(scope=ORG, entries=[EntryInput(kind="fact", text=f"Org fact number {n}.")])
        assert (await svc.verify()).ok
        return purged


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


async def _export(url: str, where: Path) -> dict[str, bytes]:
    async with open_service(url, embedding=None) as svc:
        await svc.export_markdown(where)
    return _tree(where)


async def _copy(src_url: str, dst_url: str) -> CopyReport:
    """What ``memstone copy`` runs; the source must verify too."""
    report, source_ok = await copy_urls(src_url, dst_url)
    assert source_ok
    return report


async def test_a_round_trip_through_another_engine_keeps_the_history_exactly(engine_url: str, tmp_path: Path) -> None:
    source, final = f"sqlite:///{tmp_path / 'source.db'}", f"sqlite:///{tmp_path / 'final.db'}"
    purged = await _rich_store(source)
    there = await _copy(source, engine_url)
    back = await _copy(engine_url, final)
    for report in (there, back):
        assert report.verify_ok, report.damage
        assert report.tombstones == 1 and report.revisions_present == 0
    assert await _export(source, tmp_path / "a") == await _export(final, tmp_path / "b")
    async with open_service(source, embedding=None) as a, open_service(engine_url, embedding=None) as b:
        heads = sorted((h.memory_id, h.revision, h.content_hash) for h in await a.memories())
        assert sorted((h.memory_id, h.revision, h.content_hash) for h in await b.memories()) == heads
        assert [(t.entry_version_id, t.reason) for t in await b.tombstones(purged)] == [
            (t.entry_version_id, t.reason) for t in await a.tombstones(purged)
        ]
        assert [h.entry_id for h in (await b.search("deploy uv", scopes=[WEB], mode="fts")).hits] == [
            h.entry_id for h in (await a.search("deploy uv", scopes=[WEB], mode="fts")).hits
        ]
        assert (await b.search("qzxwvjoy", scopes=[WEB], mode="fts")).hits == ()


async def test_a_round_trip_through_oceanbase_keeps_the_history_exactly(oceanbase_url: str, tmp_path: Path) -> None:
    await test_a_round_trip_through_another_engine_keeps_the_history_exactly(oceanbase_url, tmp_path)


class _Stop(Exception):
    pass


async def test_an_interrupted_copy_resumes_and_never_writes_twice(engine_url: str, tmp_path: Path) -> None:
    source = f"sqlite:///{tmp_path / 'source.db'}"
    await _rich_store(source)

    def stop_after_ten(phase: str, done: int, total: int) -> None:
        if phase == "revisions" and done >= 10:
            raise _Stop

    src, dst = (await open_store(source, create=False)).memory, (await open_store(engine_url)).memory
    try:
        with pytest.raises(_Stop):
            await copy_store(src, dst, progress=stop_after_ten, progress_interval_s=0)
    finally:
        await src.aclose()
        await dst.aclose()
    report = await _copy(source, engine_url)
    assert report.revisions_present == 10 and report.revisions_written > 0  # stopped inside a Memory
    assert report.revisions_present + report.revisions_written == report.revisions
    assert report.verify_ok
    again = await _copy(source, engine_url)
    assert (again.revisions_written, again.sources_written) == (0, 0)
    assert await _export(source, tmp_path / "a") == await _export(engine_url, tmp_path / "b")


async def test_a_purge_at_the_source_after_a_copy_reaches_the_target(engine_url: str, tmp_path: Path) -> None:
    source = f"sqlite:///{tmp_path / 'source.db'}"
    async with open_service(source, embedding=None) as svc:
        rev = await svc.remember(scope=WEB, entries=[EntryInput(kind="fact", text="Customer Qzxwvjoy card 4111.")])
        assert rev is not None
        eid = rev.changes[0].entry_id
    await _copy(source, engine_url)
    async with open_service(source, embedding=None) as svc:
        await svc.purge(eid, reason="card number")
    report = await _copy(source, engine_url)
    assert (report.revisions_written, report.purged_now) == (1, 1)
    async with open_service(engine_url, embedding=None) as dst:
        assert len(await dst.tombstones(eid)) == 1
        assert (await dst.verify()).ok
    assert await _export(source, tmp_path / "a") == await _export(engine_url, tmp_path / "b")


async def test_a_target_with_another_history_is_refused_and_left_alone(engine_url: str, tmp_path: Path) -> None:
    source = f"sqlite:///{tmp_path / 'source.db'}"
    async with open_service(source, embedding=None) as svc:
        await svc.remember(scope=WEB, entries=[EntryInput(kind="fact", text="The first fact.")])
    await _copy(source, engine_url)
    async with open_service(source, embedding=None) as svc:
        await svc.remember(scope=WEB, entries=[EntryInput(kind="fact", text="Written at the source.")])
    async with open_service(engine_url, embedding=None) as dst:
        await dst.remember(scope=WEB, entries=[EntryInput(kind="fact", text="Written at the target.")])
        before = sorted((h.memory_id, h.revision, h.content_hash) for h in await dst.memories())
    with pytest.raises(Conflict, match="differs from the source at revision 2") as caught:
        await _copy(source, engine_url)
    assert caught.value.hint and "empty store" in caught.value.hint
    async with open_service(engine_url, embedding=None) as dst:
        assert sorted((h.memory_id, h.revision, h.content_hash) for h in await dst.memories()) == before


async def test_a_scope_bound_to_another_memory_in_the_target_is_refused(engine_url: str, tmp_path: Path) -> None:
    source = f"sqlite:///{tmp_path / 'source.db'}"
    async with open_service(source, embedding=None) as svc:
        await svc.remember(scope=WEB, entries=[EntryInput(kind="fact", text="The source's web memory.")])
    async with open_service(engine_url, embedding=None) as dst:
        await dst.remember(scope=WEB, entries=[EntryInput(kind="fact", text="The target's own web memory.")])
    with pytest.raises(Conflict, match=f"scope {WEB} is bound to"):
        await _copy(source, engine_url)


def _cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args), env={"MEMSTONE_EMBEDDING": "none"})
    return result.exit_code, result.output


def test_the_cli_copies_between_paths_and_refuses_a_missing_source(tmp_path: Path) -> None:
    source = tmp_path / "source.db"
    asyncio.run(_rich_store(f"sqlite:///{source}"))
    code, out = _cli("copy", str(source), str(tmp_path / "target.db"), "--json")
    assert code == 0, out
    report = json.loads(out)
    assert report["verify_ok"] and report["source_verify_ok"] and report["revisions_present"] == 0
    assert report["revisions_written"] == report["revisions"] > 0
    code, out = _cli("copy", str(source), str(tmp_path / "target.db"), "--json")
    again = json.loads(out)
    assert again["revisions_written"] == 0 and again["revisions_present"] == report["revisions"]
    code, out = _cli("copy", str(tmp_path / "typo.db"), str(tmp_path / "other.db"), "--json")
    assert code != 0 and json.loads(out)["error"]["code"] == "not_found", out
    assert not (tmp_path / "typo.db").exists() and not (tmp_path / "other.db").exists()
    code, out = _cli("copy", "--help")
    assert code == 0 and "--json" in out and "Resumable" in out


async def test_the_kind_policy_and_the_embedding_profile_travel(engine_url: str, tmp_path: Path) -> None:
    source = f"sqlite:///{tmp_path / 'source.db'}"
    model = HashingEmbedder(dimension=64)
    kinds = {"fact", "lesson"}
    async with open_service(source, embedding=model, closed_kinds=kinds) as svc:
        rev = await svc.remember(scope=WEB, entries=[EntryInput(kind="fact", text="We deploy with uv from CI.")])
        assert rev is not None
        profile = svc.backend.state.embedding_profile
        embedded = [rev.changes[0].to_entry_version_id]
        stored = await svc.backend.stored_vectors(embedded)  # type: ignore[attr-defined]
    async with open_service(source, embedding=None) as svc:  # written without the model: no vector
        await svc.remember(scope=WEB, entries=[EntryInput(kind="fact", text="Not embedded at the source.")])
    assert profile is not None and stored is not None and set(stored) == set(embedded)
    report = await _copy(source, engine_url)
    assert report.vectors == 1  # carried as stored, not embedded again
    assert any("1 entries have no vector" in n for n in report.notes)
    async with open_service(engine_url, embedding=model) as dst:
        assert dst.backend.state.embedding_profile == profile
        assert await dst.kinds() == frozenset(kinds)
        assert await dst.backend.stored_vectors(embedded) == stored  # type: ignore[attr-defined]
        assert await dst.backfill() == 1  # only the entry the source never embedded
        hits = await dst.search("deploy with uv", scopes=[WEB], mode="vector")
        assert [h.entry_id for h in hits.hits] == [rev.changes[0].entry_id]
        with pytest.raises(InvalidInput, match="kind"):
            await dst.remember(scope=WEB, entries=[EntryInput(kind="policy", text="Not a kind of this store.")])
