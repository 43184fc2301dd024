"""An update retries when only the Memory's head moved (issue 12 load run: 409s on entries nobody else touched).

Eight writers keep adding entries to the scope's Memory while one entry is updated again and again. Each update
loses the head race to some writer most of the time; it must re-read and succeed, never 409, because the entry
it changes was not touched by anyone else. A change to the entry itself (expected_version) is still refused.
"""

from __future__ import annotations

import asyncio

import pytest

from memstone import EntryInput, open_service
from memstone.domain.errors import StaleEntryError
from memstone.domain.model import EntryPatch

SCOPE = "memstone://orgs/acme/projects/web"


async def test_updates_survive_many_concurrent_writers_of_the_same_memory(engine_url: str) -> None:
    async with open_service(engine_url, embedding=None) as svc:
        rev = await svc.remember(None, entries=[EntryInput(kind="fact", text="Version 0.")], scope=SCOPE)
        assert rev is not None
        entry = rev.changes[0].entry_id
        done = asyncio.Event()

        async def writer(n: int) -> int:
            count = 0
            while not done.is_set():
                await svc.remember(
                    None, entries=[EntryInput(kind="fact", text=f"Writer {n} note {count}.")], scope=SCOPE
                )
                count += 1
            return count

        writers = [asyncio.create_task(writer(n)) for n in range(8)]
        try:
            for i in range(1, 16):
                result = await svc.update(entry, EntryPatch(text=f"Version {i}."))
                assert result.status == "updated"
        finally:
            done.set()
            written = await asyncio.gather(*writers)
        assert sum(written) > 0
        now = await svc.get(entry)
        assert (now.version, now.content.text) == (16, "Version 15.")
        with pytest.raises(StaleEntryError):
            await svc.update(entry, EntryPatch(text="stale"), expected_version=3)
