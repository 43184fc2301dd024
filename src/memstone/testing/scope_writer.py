"""A first-writer process for the scope race: ``python -m memstone.testing.scope_writer URL SCOPE TAG N``.

It opens the store, prints ``ready``, waits for a line on stdin (so every writer starts at once), then makes
one write of N entries addressed to SCOPE alone and prints the Memory it landed in as JSON.
"""

from __future__ import annotations

import asyncio
import json
import sys

from ..domain.model import EntryInput
from ..service import open_service


async def _main(url: str, scope: str, tag: str, count: int) -> None:
    async with open_service(url, embedding=None) as svc:
        print("ready", flush=True)
        sys.stdin.readline()
        rev = await svc.remember(
            None,
            scope=scope,
            entries=[EntryInput(kind="fact", text=f"{tag} first write, note {i}") for i in range(count)],
        )
        assert rev is not None
    print(json.dumps({"tag": tag, "memory_id": rev.memory_id, "revision": rev.revision}), flush=True)


if __name__ == "__main__":
    asyncio.run(_main(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])))
