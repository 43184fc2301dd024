"""``verify`` while another process writes: never false damage (issue 12, finding 5).

A real writer process commits as fast as it can while this process verifies again and again. Every report
must be clean; a store too busy to check may say so (BackendUnavailable), never report projection damage.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

from memstone import open_service
from memstone.domain.errors import BackendUnavailable
from memstone.domain.model import EntryInput


async def test_verify_during_writes_reports_no_damage(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'm.db'}"
    async with open_service(url, embedding=None) as svc:
        rev = await svc.remember(scope="memstone://orgs/acme", entries=[EntryInput(kind="fact", text="seed note")])
        assert rev is not None
        writer = subprocess.Popen(
            [sys.executable, "-m", "memstone.testing.writer", url, rev.memory_id, "300", "w"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        reports, busy = 0, 0
        try:
            while writer.poll() is None and (await svc.head(rev.memory_id)).revision < 5:
                await asyncio.sleep(0.02)
            while writer.poll() is None:
                try:
                    report = await svc.verify()
                except BackendUnavailable:
                    busy += 1
                    continue
                reports += 1
                assert report.ok, report.to_dict()
        finally:
            _, err = writer.communicate(timeout=120)
        assert writer.returncode == 0, err
        assert reports >= 5, (reports, busy)
        head = await svc.head(rev.memory_id)
        assert head.revision > 1
        assert (await svc.verify()).ok
