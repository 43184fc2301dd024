"""Shared parts of the record-surface conformance suite: scope constants, a ticking clock, small helpers, the
fixtures for further empty stores, and the store of every kind the export round-trip test builds."""

from __future__ import annotations

import datetime as _dt
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from ..domain.ids import EntryId
from ..domain.model import Citation, EntryInput, MemoryHit, Revision
from ..ports import MemoryVersionsQuery, RevisionsQuery
from ..service import MemoryService
from .fixtures import StoreFixtures

ORG = "memstone://orgs/acme"
PROJECT = "memstone://orgs/acme/projects/web"
USER = "memstone://users/alice"
OTHER_ORG = "memstone://orgs/globex"


class TickingClock:
    """A clock that moves one second per call, so ``updated_at`` order is exact and reproducible."""

    def __init__(self, start: _dt.datetime = _dt.datetime(2026, 1, 1, tzinfo=_dt.UTC)) -> None:
        self.now = start

    def __call__(self) -> str:
        self.now += _dt.timedelta(seconds=1)
        return self.now.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def entry(text: str, kind: str = "fact", **kw: Any) -> EntryInput:
    return EntryInput(kind=kind, text=text, **kw)


async def by_text(svc: MemoryService, memory: Revision | str) -> dict[str, EntryId]:
    return {v.text: v.entry_id for v in await svc.entries(memory, include_inactive=True)}


def stale_citations(hit: MemoryHit, cited: Revision, later: Revision) -> tuple[Citation, Citation]:
    """Two citations of ``hit`` (found at ``cited``) that must not verify once ``later`` revised its entry.

    The first names ``later``, where the cited version is no longer current; the second names ``cited`` with a
    content hash the version never had.
    """
    return (
        Citation(memory_ref=later.ref, entry_id=hit.entry_id, entry_version_id=hit.entry_version_id),
        Citation(
            memory_ref=cited.ref,
            entry_id=hit.entry_id,
            entry_version_id=hit.entry_version_id,
            entry_content_hash="0" * 64,
        ),
    )


def tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


class RecordFixtures(StoreFixtures):
    """What every part of the record-surface suite shares: further empty stores and a service on a ticking clock."""

    embedding: str | None = None

    @pytest.fixture
    def empty_stores(self, store_url: str, tmp_path: Path) -> Callable[[str], str]:
        """URLs of further fresh, empty stores of the same backend, one per name (override for a server)."""
        if store_url.endswith(":memory:"):
            return lambda name: store_url  # every open of an in-memory URL is a new, empty store
        if store_url.startswith("sqlite:"):
            return lambda name: f"sqlite:///{tmp_path / f'{name}.db'}"
        pytest.skip("this backend does not provide empty_stores")

    @pytest.fixture
    def empty_store_url(self, empty_stores: Callable[[str], str]) -> str:
        """A second fresh, empty store of the same backend."""
        return empty_stores("second-store")

    @asynccontextmanager
    async def ticking(self, url: str, **kw: Any) -> AsyncIterator[MemoryService]:
        async with self.service(url, embedding=self.embedding, clock=kw.pop("clock", TickingClock()), **kw) as svc:
            yield svc


def asyncio_run(coro: Any) -> None:
    import asyncio

    asyncio.run(coro)


async def content_hashes(svc: MemoryService) -> dict[str, object]:
    """Every Revision hash and every entry version hash of a store, for comparisons across stores."""
    out: dict[str, object] = {}
    for head in await svc.memories():
        revs = await svc.backend.read(RevisionsQuery(memory_id=head.memory_id, first=1, last=head.revision))
        versions = await svc.backend.read(MemoryVersionsQuery(memory_id=head.memory_id))
        assert isinstance(revs, list) and isinstance(versions, list)
        out[head.memory_id] = {
            "revisions": [(r.revision, r.content_hash, r.manifest_root) for r in revs],
            "versions": sorted((v.entry_version_id, v.entry_content_hash) for v in versions),
        }
    out["scopes"] = list(await svc.scopes())
    return out


CHINESE = ("数据库每天凌晨备份一次", "前端使用 React 构建", "部署前必须运行测试", "不要在周五发布")
KINDS = ("fact", "preference", "decision", "constraint", "convention", "correction", "lesson", "pattern")


async def build_store_of_every_kind(svc: MemoryService) -> dict[str, int]:
    """A store with a few entries of every kind across every tier: several Revisions per Memory, revised entries
    (two revisions for some, one reverted), flags, relations (one supersedes that deactivates), aliases, forgotten
    and reactivated entries, evidence, cross-Memory artifact references, a late scope binding and Chinese text.

    Small on purpose (128 entries): what a round trip must keep is every kind of thing, not many of each; it is
    built on every engine of the conformance suite, S3 ones included."""
    note = await svc.record_source("user_note", "用户说：我们总是用 uv 部署。We always deploy with uv.")
    log = await svc.record_source("task_outcome", "CI failed twice on the flaky retry test")
    entries = 0
    heads: dict[str, Revision] = {}
    for s, scope in enumerate((ORG, PROJECT, USER)):
        rev: Revision | None = None
        for batch in range(3):
            items = []
            for j in range(12):
                i = batch * 12 + j
                text = f"{CHINESE[i % 4]}，第 {i} 条" if i % 3 == 0 else f"memory {i} of tier {s}: retry policy note"
                items.append(
                    entry(
                        text,
                        KINDS[i % len(KINDS)] if scope != USER else ("LESSON", "PATTERN")[i % 2],
                        title=f"Topic {i}" if i % 2 else None,
                        tags=["ops", f"t{i % 5}"] if i % 4 == 0 else [],
                        slug=f"topic-{i}" if i % 3 != 2 else None,
                        important=i % 7 == 0,
                        mandatory=i % 50 == 1,
                    )
                )
            rev = await svc.remember(
                rev, scope=scope if rev is None else None, entries=items, sources=[note] if batch == 0 else []
            )
            assert rev is not None
            entries += len(items)
        assert rev is not None
        heads[scope] = rev
    loose = await svc.remember(
        None, entries=[entry(f"unbound note {i}", artifacts=[heads[ORG].ref]) for i in range(20)], sources=[log]
    )
    assert loose is not None
    entries += 20
    await svc.bind("memstone://users/bob", loose)  # bound after its first write
    project = heads[PROJECT]
    current = {v.entry_id: v for v in await svc.entries(project)}
    ordered = sorted(current.values(), key=lambda v: v.entry_id)
    # Revisions, two per entry for some.
    for round_ in range(2):
        project_rev: Revision | None = project
        revised = [
            EntryInput(
                kind=v.kind,
                text=f"{v.text}（修订 {round_}）",
                title=v.title,
                tags=v.content.tags,
                slug=v.content.slug,
                important=v.content.important,
                mandatory=v.content.mandatory,
                entry=v.entry_id,
                reason=f"round {round_}",
            )
            for v in ordered[: 6 - 2 * round_]
        ]
        project_rev = await svc.remember(project_rev, entries=revised)
        assert project_rev is not None
        project = project_rev
        ordered[:6] = [await svc.get(v.entry_id) for v in ordered[:6]]
    # Flags, relations (one supersedes that deactivates), aliases, forget and reactivate.
    for v in ordered[6:9]:
        project = await svc.flag(project, v.entry_id, important=not v.content.important, mandatory=True)
    for a, b in zip(ordered[10:13], ordered[13:16], strict=True):
        project = await svc.relate(project, a.entry_id, b.entry_id, ("relates-to", "clarifies")[len(a.text) % 2])
    project = await svc.relate(
        project, ordered[16].entry_id, ordered[17].entry_id, "supersedes", deactivate_target=True
    )
    project = await svc.relate(project, ordered[18].entry_id, ordered[0].entry_id, "relates-to")
    slugged = [v for v in ordered if v.content.slug == "topic-3"]
    project = await svc.rename(project, slugged[0].entry_id, "topic-3-renamed")
    for v in [v for v in ordered if v.content.slug][5:8]:
        project = await svc.rename(project, v.entry_id, f"{v.content.slug}-v2")
    gone = [v.entry_id for v in ordered[24:32]]
    project = await svc.forget(project, entries=gone, reason="user_requested")
    project = await svc.reactivate(project, entries=gone[:2], reason="user_restored")
    project = await svc.revert(project, ordered[1].entry_id, 1)
    cross = await svc.get(ordered[20].entry_id)
    user_entry = (await svc.entries(heads[USER]))[0]
    await svc.relate(await svc.head(heads[USER].memory_id), user_entry.entry_id, cross.entry_id, "relates-to")
    return {"entries": entries}


__all__ = [
    "CHINESE",
    "KINDS",
    "ORG",
    "OTHER_ORG",
    "PROJECT",
    "USER",
    "RecordFixtures",
    "TickingClock",
    "asyncio_run",
    "build_store_of_every_kind",
    "by_text",
    "content_hashes",
    "entry",
    "tree",
]
