"""A writer process for concurrency tests: ``python -m memstone.testing.writer URL MEMORY_ID N TAG``.

Writes N entries to one Memory, re-reading the head after each lost race, and prints how many conflicts it
met. Used by the conformance suite to race real processes against one store.
"""

from __future__ import annotations

import asyncio
import json
import sys

from ..domain.errors import RevisionConflictError
from ..domain.model import EntryInput
from ..service import open_service


async def _main(url: str, memory_id: str, count: int, tag: str) -> None:
    conflicts = 0
    async with open_service(url, embedding=None) as svc:
        for i in range(count):
            while True:
                head = await svc.head(memory_id)
                try:
                    await svc.remember(head, entries=[EntryInput(kind="fact", text=f"{tag} wrote note {i}")])
                    break
                except RevisionConflictError:
                    conflicts += 1
    print(json.dumps({"tag": tag, "written": count, "conflicts": conflicts}))


if __name__ == "__main__":
    asyncio.run(_main(sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]))
