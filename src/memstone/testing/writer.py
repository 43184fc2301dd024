"""A writer process for concurrency tests: ``python -m memstone.testing.writer URL MEMORY_ID N TAG [--ready]``.

Writes N entries to one Memory, re-reading the head after each lost race, and prints how many conflicts it
met. Used by the conformance suite to race real processes against one store. With ``--ready`` it prints ``ready``
once its store is open and waits for its standard input to close before the first write, so a test can start
several writers at the same moment (a process's start-up takes longer than a few writes).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Sequence

from ..domain.errors import RevisionConflictError
from ..domain.model import EntryInput
from ..service import open_service


async def _main(url: str, memory_id: str, count: int, tag: str, *, ready: bool = False) -> None:
    conflicts = 0
    async with open_service(url, embedding=None) as svc:
        if ready:
            await svc.head(memory_id)  # the store is open and caught up before the start
            print("ready", flush=True)
            sys.stdin.read()  # until the test closes it: every writer starts together
        for i in range(count):
            while True:
                head = await svc.head(memory_id)
                try:
                    await svc.remember(head, entries=[EntryInput(kind="fact", text=f"{tag} wrote note {i}")])
                    break
                except RevisionConflictError:
                    conflicts += 1
    print(json.dumps({"tag": tag, "written": count, "conflicts": conflicts}))


def start_together(url: str, memory_id: str, count: int, tags: Sequence[str]) -> list[subprocess.Popen[str]]:
    """One writer process per tag, all making their first write at the same moment: each opens the store and says
    ``ready``; then the pipe that is their standard input closes and they all begin."""
    wait, go = os.pipe()
    try:
        procs = [
            subprocess.Popen(
                [sys.executable, "-m", "memstone.testing.writer", url, memory_id, str(count), tag, "--ready"],
                stdin=wait,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for tag in tags
        ]
        for p in procs:
            assert p.stdout is not None and p.stdout.readline() == "ready\n", p.communicate(timeout=300)[1]
    finally:
        os.close(wait)
        os.close(go)  # every writer begins now
    return procs


if __name__ == "__main__":
    asyncio.run(_main(sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], ready=sys.argv[5:] == ["--ready"]))
