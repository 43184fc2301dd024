"""``memstone copy`` to and from LanceDB (issues 13 and 18): SQLite → LanceDB → SQLite keeps the whole history (every
Revision and content hash, the tombstone, a byte-identical export), locally and on S3; an interrupted copy
resumes; a purge at the source reaches a LanceDB target. The scenarios are test_copy.py's, run on this engine."""

from __future__ import annotations

import asyncio
import json
import secrets
from pathlib import Path

import pytest
import test_copy as cases  # a module, not its test functions: those would be collected here again

from memstone.testing.s3server import S3Server

pytest.importorskip("lancedb")


async def test_a_round_trip_through_lancedb_keeps_the_history_exactly(tmp_path: Path) -> None:
    await cases.test_a_round_trip_through_another_engine_keeps_the_history_exactly(
        f"lancedb:///{tmp_path / 'l'}", tmp_path
    )


async def test_a_round_trip_through_lancedb_on_s3_keeps_the_history_exactly(s3_env: S3Server, tmp_path: Path) -> None:
    url = s3_env.url("lancedb+s3", f"copy-{secrets.token_hex(6)}")
    await cases.test_a_round_trip_through_another_engine_keeps_the_history_exactly(url, tmp_path)


async def test_an_interrupted_copy_to_lancedb_resumes(tmp_path: Path) -> None:
    await cases.test_an_interrupted_copy_resumes_and_never_writes_twice(f"lancedb:///{tmp_path / 'l'}", tmp_path)


async def test_a_purge_at_the_source_reaches_a_lancedb_target(tmp_path: Path) -> None:
    await cases.test_a_purge_at_the_source_after_a_copy_reaches_the_target(f"lancedb:///{tmp_path / 'l'}", tmp_path)


def test_the_cli_copies_to_lancedb_and_back(tmp_path: Path) -> None:
    asyncio.run(cases._rich_store(f"sqlite:///{tmp_path / 'source.db'}"))
    lance = f"lancedb:///{tmp_path / 'l'}"
    code, out = cases._cli("copy", str(tmp_path / "source.db"), lance, "--json")
    assert code == 0, out
    there = json.loads(out)
    assert there["verify_ok"] and there["revisions_written"] == there["revisions"] > 0
    code, out = cases._cli("copy", lance, f"sqlite:///{tmp_path / 'back.db'}", "--json")
    assert code == 0, out
    assert json.loads(out)["revisions_written"] == there["revisions"]
