"""``memstone copy`` carries the stored vectors from every engine that has them (issue 13): OceanBase and LanceDB
read their vectors back like SQLite and PostgreSQL, so a copy from them leaves nothing to ``embed --backfill``.
Before, an OceanBase source carried no vector (its codec could not read one back) and the note asked for a
backfill; LanceDB had no test."""

from __future__ import annotations

from pathlib import Path

import pytest

from memstone import EntryInput, open_service
from memstone.backends import open_store
from memstone.embedding.hashing import HashingEmbedder
from memstone.ports import ManifestQuery, MemoriesQuery, MemoryBackend
from memstone.service.copy import copy_store

WEB = "memstone://orgs/acme/projects/web"
LONG = " ".join(f"Step {i}: the deploy runbook says to check the canary dashboard before promoting." for i in range(40))


async def _stored(store: MemoryBackend) -> dict[str, tuple[tuple[float, ...], ...]] | None:
    ids = [
        m.entry_version_id
        for head in await store.read(MemoriesQuery())
        for m in (await store.read(ManifestQuery(ref=head.ref))).values()
        if m.state == "active"
    ]
    return await store.stored_vectors(ids)


@pytest.fixture(params=["oceanbase", "lancedb"])
def source_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "lancedb":
        pytest.importorskip("lancedb")
        return f"lancedb:///{tmp_path / 'source'}"
    url: str = request.getfixturevalue("oceanbase_url")
    return url


async def test_a_copy_from_oceanbase_or_lancedb_carries_every_stored_vector(source_url: str, tmp_path: Path) -> None:
    async with open_service(source_url, embedding=HashingEmbedder(dimension=32, window_chars=400)) as svc:
        await svc.remember(scope=WEB, entries=[EntryInput(kind="fact", text="We deploy with uv.")])
        await svc.remember(scope=WEB, entries=[EntryInput(kind="procedure", text=LONG)])  # several windows
        before = await _stored(svc.backend)
    assert before is not None and len(before) == 2
    assert max(len(v) for v in before.values()) > 1  # the long entry's windows live apart from its head row
    target = f"sqlite:///{tmp_path / 'target.db'}"
    src, dst = (await open_store(source_url, create=False)).memory, (await open_store(target)).memory
    try:
        report = await copy_store(src, dst)
        assert report.verify_ok, report.damage
        assert report.vectors == 2 and report.notes == ()  # nothing left to `embed --backfill`
        assert await _stored(dst) == before  # the same float32 values, every window
    finally:
        await src.aclose()
        await dst.aclose()
