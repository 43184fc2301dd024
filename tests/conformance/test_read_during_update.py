"""Reading an entry while it is being revised never answers "not found" (issue 12 load run: 404 on live entries).

``get`` reads the entry's versions, then its Memory's head; a revision committed between the two made the head
name a version the first read had not seen, and a live entry was reported missing.
"""

from __future__ import annotations

import asyncio

from memstone import EntryInput, open_service
from memstone.domain.model import EntryPatch

SCOPE = "memstone://orgs/acme/projects/web"


async def test_get_and_history_see_a_live_entry_while_others_revise_it(engine_url: str) -> None:
    async with open_service(engine_url, embedding=None) as svc:
        rev = await svc.remember(
            None, entries=[EntryInput(kind="fact", text=f"Fact {i}.") for i in range(4)], scope=SCOPE
        )
        assert rev is not None
        ids = [c.entry_id for c in rev.changes]
        done = asyncio.Event()

        async def reviser(n: int) -> None:
            i = 0
            while not done.is_set():
                await svc.update(ids[i % len(ids)], EntryPatch(text=f"Fact from reviser {n}, step {i}."))
                i += 1

        async def reader() -> int:
            reads = 0
            for i in range(150):
                entry = ids[i % len(ids)]
                got = await svc.get(entry)
                chain = await svc.history(entry)
                assert got.entry_id == entry
                assert chain[-1].status == "current"
                assert got.version <= chain[-1].version.version
                reads += 1
            return reads

        revisers = [asyncio.create_task(reviser(n)) for n in range(3)]
        try:
            counts = await asyncio.gather(*(reader() for _ in range(4)))
        finally:
            done.set()
            await asyncio.gather(*revisers)
        assert counts == [150] * 4
