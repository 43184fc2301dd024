"""The LanceDB engine's own guarantees (docs/engines/lancedb.md): the log's conditional commit, orphans, damage,
maintenance, and its URLs. The shared behaviour is the conformance suite's (test_lancedb.py)."""

from __future__ import annotations

import time
from pathlib import Path

import pyarrow as pa
import pytest

from memstone.backends import open_store, parse_store_url
from memstone.domain.errors import BackendUnavailable, IntegrityError, InvalidInput, NotFound
from memstone.domain.model import EntryInput
from memstone.service import open_service

pytest.importorskip("lancedb")

from memstone.backends.lance.location import parse_location, s3_options
from memstone.backends.lance.log import LanceLog, Position
from memstone.backends.lance.store import LanceMemoryBackend


def url_of(path: Path) -> str:
    return f"lancedb:///{path}"


def fact(text: str) -> EntryInput:
    return EntryInput(kind="fact", text=text)


def test_a_stale_parent_never_moves_the_head(tmp_path: Path) -> None:
    log = LanceLog(str(tmp_path / "s"), {}, where="test")
    log.open(create=True)
    genesis = log.head()
    first = log.append(genesis, b"one")
    assert first is not None and first.seq == 1
    assert log.append(genesis, b"two") is None  # the loser of the race on the genesis parent
    assert log.head() == first
    assert [e.payload for e in log.entries(genesis, log.head())] == [b"one"]


async def test_an_orphaned_transaction_is_invisible_and_swept(tmp_path: Path) -> None:
    url = url_of(tmp_path / "s")
    async with open_service(url, embedding=None) as svc:
        rev = await svc.remember(None, entries=[fact("kept")])
        assert rev is not None
        backend = svc.backend
        assert isinstance(backend, LanceMemoryBackend)
        log = backend.lance.log
        head = log.head()
        # A writer killed between its two steps: its row names the current head as parent, no head names it.
        log._txns.add(
            pa.table(
                {
                    "txn": ["orphan"],
                    "seq": [head.seq + 1],
                    "parent": [head.txn],
                    "writer": ["killed"],
                    "created_at": [time.time() - 3600],
                    "payload_hash": ["0" * 64],
                    "payload": [b"garbage"],
                },
                schema=log._txns.schema,
            )
        )
        # A later write on the same parent wins; the orphan (same seq) is never applied.
        rev2 = await svc.remember(await svc.head(rev.memory_id), entries=[fact("after the orphan")])
        assert rev2 is not None and rev2.revision == 2
        assert (await svc.verify()).ok
        time.sleep(1.1)
        done = await backend.maintain_storage(orphan_grace_s=0, keep_versions_s=1)
        assert done["orphans_swept"] == 1
    async with open_service(url, embedding=None) as svc:  # a cold replica replays only the chain
        texts = {e.text for e in await svc.entries(await svc.head(rev.memory_id))}
        assert texts == {"kept", "after the orphan"}
        assert (await svc.verify()).ok


async def test_a_missing_committed_transaction_is_damage(tmp_path: Path) -> None:
    url = url_of(tmp_path / "s")
    async with open_service(url, embedding=None) as svc:
        rev = await svc.remember(None, entries=[fact("one")])
        assert rev is not None
        await svc.remember(await svc.head(rev.memory_id), entries=[fact("two")])
        backend = svc.backend
        assert isinstance(backend, LanceMemoryBackend)
        backend.lance.log._txns.delete("seq = 1")
        report = await svc.verify()
        assert not report.ok
        assert any("missing transaction 1" in d for d in report.authority_damage)
    with pytest.raises(IntegrityError, match="missing transaction 1"):
        await open_store(url)


async def test_a_tampered_payload_is_refused_on_replay(tmp_path: Path) -> None:
    url = url_of(tmp_path / "s")
    async with open_service(url, embedding=None) as svc:
        assert await svc.remember(None, entries=[fact("one")]) is not None
        backend = svc.backend
        assert isinstance(backend, LanceMemoryBackend)
        backend.lance.log._txns.update(where="seq = 1", values={"payload_hash": "f" * 64})
    with pytest.raises(IntegrityError, match="does not match its hash"):
        await open_store(url)


async def test_maintenance_keeps_every_revision_readable(tmp_path: Path) -> None:
    url = url_of(tmp_path / "s")
    async with open_service(url, embedding=None) as svc:
        rev = await svc.remember(None, entries=[fact("note 0")])
        assert rev is not None
        for i in range(1, 8):
            await svc.remember(await svc.head(rev.memory_id), entries=[fact(f"note {i}")])
        backend = svc.backend
        assert isinstance(backend, LanceMemoryBackend)
        before = backend.lance.log.stats()
        time.sleep(1.1)
        done = await backend.maintain_storage(keep_versions_s=1)
        assert done["transactions"] == backend.lance.log.head().seq  # every committed write, none lost
        assert len(backend.lance.log._txns.list_versions()) < before["txn_table_version"]
        await svc.remember(await svc.head(rev.memory_id), entries=[fact("after maintenance")])
    async with open_service(url, embedding=None) as svc:
        head = await svc.head(rev.memory_id)
        assert head.revision == 9
        for r in range(1, 10):  # every Revision, not only the head
            assert len(await svc.entries(head.ref.__class__(memory_id=rev.memory_id, revision=r))) == r
        assert (await svc.verify()).ok


async def test_a_read_only_open_of_a_missing_store_creates_nothing(tmp_path: Path) -> None:
    with pytest.raises(NotFound):
        await open_store(url_of(tmp_path / "none"), create=False)
    assert not (tmp_path / "none").exists() or not any((tmp_path / "none").iterdir())


def test_urls() -> None:
    local = parse_location(parse_store_url("lancedb:////srv/m"))
    assert local.uri == "/srv/m"
    s3 = parse_location(
        parse_store_url("lancedb+s3://bucket/a/b/"),
        env={"AWS_ENDPOINT_URL": "http://127.0.0.1:9000", "AWS_SECRET_ACCESS_KEY": "s3cret", "AWS_ACCESS_KEY_ID": "k"},
    )
    assert s3.uri == "s3://bucket/a/b"
    assert s3.storage_options["allow_http"] == "true"
    assert "s3cret" not in repr(s3) and "s3cret" not in s3.where
    assert not local.eager_feed and not local.use_index  # the default searches the replica alone
    gated = parse_location(parse_store_url("lancedb:////srv/m?search=gated"))
    assert gated.use_index and not gated.eager_feed
    assert not parse_location(parse_store_url("lancedb:////srv/m?search=replica")).use_index
    eager = parse_location(parse_store_url("lancedb:////srv/m?search=eager"))
    assert eager.uri == "/srv/m" and eager.eager_feed
    assert parse_location(parse_store_url("lancedb+s3://bucket/a?search=eager"), env={}).uri == "s3://bucket/a"
    for bad in ("lancedb:///", "lancedb+s3:///prefix", "lancedb:////srv/m?x=1", "lancedb:////srv/m?search=fast"):
        with pytest.raises(InvalidInput):
            parse_location(parse_store_url(bad))
    assert s3_options({})["aws_region"] == "us-east-1"


async def test_an_unreachable_s3_endpoint_is_backend_unavailable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")  # the discard port: nothing listens
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "k")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "s")
    with pytest.raises(BackendUnavailable):
        await open_store("lancedb+s3://nobucket/x", create=False)


def test_positions_compare_by_value() -> None:
    assert Position(1, "a") == Position(1, "a")


async def test_a_cold_open_starts_from_the_checkpoint_and_replays_only_the_rest(tmp_path: Path) -> None:
    url = url_of(tmp_path / "s")
    async with open_service(url, embedding="hashing-64") as svc:
        rev = await svc.remember(None, entries=[fact(f"note {i}") for i in range(20)])
        assert rev is not None
        backend = svc.backend
        assert isinstance(backend, LanceMemoryBackend)
        done = await backend.maintain_storage()
        assert done["checkpoint_seq"] == backend.lance.log.head().seq
        await svc.remember(await svc.head(rev.memory_id), entries=[fact("after the checkpoint")])
    async with open_service(url, embedding="hashing-64") as svc:
        backend = svc.backend
        assert isinstance(backend, LanceMemoryBackend)
        assert backend.lance.stats["applied"] == 1  # only the write after the checkpoint was replayed
        head = await svc.head(rev.memory_id)
        assert len(await svc.entries(head)) == 21
        hits = await svc.search("after the checkpoint", memories=[head], mode="hybrid")
        assert hits.hits and hits.hits[0].text == "after the checkpoint"
        assert (await svc.verify()).ok


async def test_a_damaged_checkpoint_is_skipped_for_the_log(tmp_path: Path) -> None:
    url = url_of(tmp_path / "s")
    async with open_service(url, embedding=None) as svc:
        rev = await svc.remember(None, entries=[fact("one"), fact("two")])
        assert rev is not None
        backend = svc.backend
        assert isinstance(backend, LanceMemoryBackend)
        await backend.maintain_storage()
        checkpoints = backend.lance.log._checkpoints()
        checkpoints.update(where="seq > 0", values={"snapshot_hash": "0" * 64})
    async with open_service(url, embedding=None) as svc:
        backend = svc.backend
        assert isinstance(backend, LanceMemoryBackend)
        assert backend.lance.stats["applied"] == backend.lance.log.head().seq  # replayed from genesis
        assert {e.text for e in await svc.entries(await svc.head(rev.memory_id))} == {"one", "two"}


@pytest.mark.parametrize(
    "statement",
    [
        "ATTACH DATABASE '{target}' AS evil",
        "INSERT INTO store_meta (key, value) SELECT 'x', load_extension('{target}')",
        "PRAGMA writable_schema = 1",
    ],
)
async def test_a_logged_statement_that_reaches_outside_the_replica_is_refused(tmp_path: Path, statement: str) -> None:
    from memstone.backends.lance.ops import encode

    url = url_of(tmp_path / "s")
    async with open_service(url, embedding=None) as svc:
        assert await svc.remember(None, entries=[fact("one")]) is not None
        backend = svc.backend
        assert isinstance(backend, LanceMemoryBackend)
        log = backend.lance.log
        target = tmp_path / "planted.db"
        sql = statement.format(target=target)
        assert log.append(log.head(), encode([["x", sql, []]], backend.lance.schema_version)) is not None
    with pytest.raises(IntegrityError):
        await open_store(url)
    assert not target.exists()


_RACER = """
import sys, time
from memstone.backends.lance.log import LanceLog
log = LanceLog(sys.argv[1], {}, where="race")
log.open(create=False)
start, won = float(sys.argv[2]), 0
while time.time() < start:
    time.sleep(0.001)
for i in range(15):
    if log.append(log.head(), f"{sys.argv[3]} {i}".encode()) is not None:
        won += 1
print(won)
"""


def test_two_processes_racing_for_the_head_never_share_a_position(tmp_path: Path) -> None:
    import subprocess
    import sys

    path = str(tmp_path / "s")
    log = LanceLog(path, {}, where="race")
    log.open(create=True)
    start = str(time.time() + 4)
    procs = [
        subprocess.Popen([sys.executable, "-c", _RACER, path, start, tag], stdout=subprocess.PIPE, text=True)
        for tag in ("a", "b")
    ]
    won = [int(p.communicate(timeout=300)[0]) for p in procs]
    head = log.head()
    assert head.seq == sum(won)  # every move of the head is one win, and every win moved it
    chain = log.entries(Position(0, "genesis"), head)
    assert [e.seq for e in chain] == list(range(1, head.seq + 1))
    assert len({e.payload for e in chain}) == head.seq


async def test_the_due_gate_opens_after_enough_writes_and_closes_after_maintenance(tmp_path: Path) -> None:
    async with open_service(url_of(tmp_path / "s"), embedding=None) as svc:
        backend = svc.backend
        assert isinstance(backend, LanceMemoryBackend)
        rev = await svc.remember(None, entries=[fact("one")])
        assert rev is not None
        assert not await backend.storage_due(writes=3)
        for text in ("two", "three"):
            await svc.remember(await svc.head(rev.memory_id), entries=[fact(text)])
        assert await backend.storage_due(writes=3)
        await backend.maintain_storage()
        assert not await backend.storage_due(writes=3)
