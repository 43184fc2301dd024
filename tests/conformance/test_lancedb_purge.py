"""Purge on LanceDB (issues 12 and 18): the purged words are in no file of the LanceDB dataset afterwards (the log's
transactions hold the text compressed, so every zlib stream in every file is read too), ``verify`` is clean, and
another process, whose replica stood below the purge, catches up from the rebased log. Before this, the engine
refused purge as unsupported."""

from __future__ import annotations

import secrets
import zlib
from pathlib import Path

import pytest

from memstone import EntryInput, MemoryService, open_service
from memstone.domain.ids import EntryId
from memstone.domain.purge import PURGED_TEXT
from memstone.testing.s3server import S3Server

pytest.importorskip("lancedb")

from test_server_purge import SCOPE, WORDS, _purge_scenario
from test_sqlite_read_only import memstone

from memstone.backends.lance.store import LanceMemoryBackend


def _streams(blob: bytes) -> list[bytes]:
    """Every zlib stream that starts somewhere in ``blob``, decompressed (the log's payloads are zlib)."""
    out = []
    start = blob.find(b"\x78")
    while start != -1:
        try:
            d = zlib.decompressobj()
            text = d.decompress(blob[start:], 50_000_000)
            if d.eof and text:
                out.append(text)
        except zlib.error:
            pass
        start = blob.find(b"\x78", start + 1)
    return out


def files_with_words(root: Path) -> list[str]:
    found = []
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        blob = path.read_bytes()
        for part in (blob, *_streams(blob)):
            low = part.lower()
            found += [f"{path.relative_to(root)}: {w}" for w in WORDS if w.encode() in low]
    return sorted(set(found))


async def _card_and_deploy(svc: MemoryService) -> EntryId:
    """Write the card note (the words a purge must erase) and a note that stays; return the card note's entry."""
    rev = await svc.remember(scope=SCOPE, entries=[EntryInput(kind="fact", text="Card of Qzxwvjoy is 4111.")])
    assert rev is not None
    await svc.remember(scope=SCOPE, entries=[EntryInput(kind="fact", text="We deploy with uv.")])
    return rev.changes[0].entry_id


async def test_a_purge_on_lancedb_leaves_the_words_in_no_file_of_the_dataset(tmp_path: Path) -> None:
    root = tmp_path / "store"
    url = f"lancedb:///{root}"
    await _purge_scenario(url, lambda: files_with_words(root))
    assert files_with_words(root) == []


@pytest.mark.parametrize("search", ["", "?search=gated"], ids=["replica", "gated"])
async def test_a_purge_after_maintenance_erases_the_old_checkpoints_too(tmp_path: Path, search: str) -> None:
    root = tmp_path / "store"
    url = f"lancedb:///{root}{search}"  # gated: maintenance also feeds the word into LanceDB's search tables
    async with open_service(url, embedding=None) as svc:
        eid = await _card_and_deploy(svc)
        backend = svc.backend
        assert isinstance(backend, LanceMemoryBackend)
        done = await backend.maintain_storage(keep_versions_s=3600)  # a checkpoint holding the word
        assert done["checkpoint_seq"] > 0
        assert done["search_text_fed"] == (2 if search else 0)
        assert files_with_words(root), "the test must see the word before the purge"
        await svc.purge(eid, reason="card number")
        assert files_with_words(root) == []
        base = backend.lance.log.base()
        assert base is not None
        for n in range(3):  # three checkpoints more: the oldest is dropped, never the rebased log's start
            await svc.remember(scope=SCOPE, entries=[EntryInput(kind="fact", text=f"Written after the purge {n}.")])
            await backend.maintain_storage(keep_versions_s=3600)
        assert backend.lance.log.base() == base
        assert (await svc.verify()).ok
    async with open_service(url, embedding=None) as svc:  # a cold open: from the checkpoint the purge wrote
        report = await svc.verify()
        assert report.ok, report.to_dict()
        assert [h.title or h.text for h in (await svc.search("uv purge", scopes=[SCOPE], mode="fts")).hits]


async def test_a_purge_run_again_finishes_an_erasure_that_failed_after_its_commit(tmp_path: Path) -> None:
    # When the store fails partway through the erasure, the purge stays committed but the log's older transactions
    # keep the bytes. Running the purge of that entry again redoes the erasure (before, it found every version
    # already purged and did nothing). The failure is real: the CLI runs as an ordinary user in a child process
    # and the store's folder is read-only, so the checkpoint the erasure writes first cannot be created.
    root = tmp_path / "store"
    url = f"lancedb:///{root}"
    async with open_service(url, embedding=None) as svc:
        eid = await _card_and_deploy(svc)
    root.chmod(0o555)
    try:
        code, out = memstone(url, "purge", eid, "--reason", "card number", "--yes")
    finally:
        root.chmod(0o755)
    error = out.get("error")
    assert code != 0 and isinstance(error, dict) and error["code"] == "backend_unavailable", out
    assert "run the purge of the entry again" in str(error), error
    assert files_with_words(root), "the failed erasure must leave the words in the log's older transactions"
    async with open_service(url, embedding=None) as svc:
        assert [i.version.text for i in await svc.history(eid)] == [PURGED_TEXT]  # the purge itself committed
        again = await svc.purge(eid, reason="card number, erasure finished")
        assert again.tombstones == () and len(again.already_purged) == 1
        assert files_with_words(root) == []
        assert len(await svc.tombstones(eid)) == 1
    async with open_service(url, embedding=None) as svc:  # a cold open: from the checkpoint the re-run wrote
        report = await svc.verify()
        assert report.ok, report.to_dict()
        assert (await svc.search("qzxwvjoy", scopes=[SCOPE], mode="fts")).hits == ()


async def test_a_replica_that_stood_below_the_purge_catches_up_from_the_rebased_log(tmp_path: Path) -> None:
    url = f"lancedb:///{tmp_path / 'store'}"
    async with open_service(url, embedding=None) as a, open_service(url, embedding=None) as b:
        rev = await a.remember(scope=SCOPE, entries=[EntryInput(kind="fact", text="Card of Qzxwvjoy is 4111.")])
        assert rev is not None
        eid = rev.changes[0].entry_id
        assert [h.entry_id for h in (await b.search("qzxwvjoy", scopes=[SCOPE], mode="fts")).hits] == [eid]
        await a.purge(eid, reason="card number")
        # b's replica stands at the write before the purge; the log below the purge is gone.
        assert (await b.search("qzxwvjoy", scopes=[SCOPE], mode="fts")).hits == ()
        assert [i.version.text for i in await b.history(eid)] == [PURGED_TEXT]
        later = await b.remember(scope=SCOPE, entries=[EntryInput(kind="fact", text="Written by b after it.")])
        assert later is not None
        assert [h.entry_id for h in (await a.search("written", scopes=[SCOPE], mode="fts")).hits] == [
            later.changes[0].entry_id
        ]
        for svc in (a, b):
            report = await svc.verify()
            assert report.ok, report.to_dict()


async def test_a_purge_on_lancedb_over_s3_rebases_the_log_and_a_cold_open_verifies(s3_env: S3Server) -> None:
    url = s3_env.url("lancedb+s3", f"purge-{secrets.token_hex(6)}")
    async with open_service(url, embedding=None) as svc:
        eid = await _card_and_deploy(svc)
        await svc.purge(eid, reason="card number")
        backend = svc.backend
        assert isinstance(backend, LanceMemoryBackend)
        base = backend.lance.log.base()
        assert base is not None and base == backend.lance.log.head()
        assert backend.lance.log.stats()["transactions"] == 0  # every transaction up to the purge is gone
    async with open_service(url, embedding=None) as svc:
        report = await svc.verify()
        assert report.ok, report.to_dict()
        assert (await svc.search("qzxwvjoy", scopes=[SCOPE], mode="fts")).hits == ()
        assert [i.version.text for i in await svc.history(eid)] == [PURGED_TEXT]
