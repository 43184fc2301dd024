"""Crash harness for the LanceDB engine on S3: ``python bench/bench_lance_crash.py [--cycles 100] [--writers 2]``.

Starts a SeaweedFS S3 server on loopback (``memstone.testing.s3server``) and keeps one store at
``lancedb+s3://memstone/crash`` across every cycle. Each cycle starts WRITERS processes that write single entries
into one scope as fast as they can (so they also race for its head), each printing a line for every write
``remember`` acknowledged; at a random moment every writer gets SIGKILL, wherever it is (inside a LanceDB commit,
between the log row and the head's move, in the replica). Then a fresh process-local backend replays the log and
must show: ``verify`` clean (authority, projections and the log's chain), every acknowledged write present with its
exact text, and no partial Revision (every Revision of the Memory lists exactly its entry count and every one of
its versions loads). Prints one line per cycle and the totals, with the orphaned log rows the kills left (never
read; ``maintain_storage`` sweeps them); exits 1 if anything was lost or damaged. ``--local`` runs on a local
folder instead of S3.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import ExitStack

import memstone
from memstone import EntryInput
from memstone.domain.model import ArtifactRef

SCOPE = "memstone://orgs/crash"


async def _writer(url: str, tag: str) -> None:
    async with memstone.open_service(url, embedding=None) as svc:
        i = 0
        while True:
            text = f"{tag} note {i} {random.random():.12f}"
            rev = await svc.remember(scope=SCOPE, entries=[EntryInput(kind="fact", text=text)])
            assert rev is not None
            (change,) = [c for c in rev.changes if c.op == "add"]
            print(json.dumps({"entry": change.entry_id, "text": text, "revision": rev.revision}), flush=True)
            i += 1


def _drain(proc: subprocess.Popen[str], out: list[dict[str, object]]) -> None:
    assert proc.stdout is not None
    for line in proc.stdout:
        try:
            out.append(json.loads(line))
        except ValueError:
            return  # a line cut by the kill was never acknowledged to anyone


async def _check(url: str, acked: list[dict[str, object]], checked: dict[str, int]) -> dict[str, int]:
    """What a fresh replica of the store shows; ``checked`` holds the Revisions earlier cycles already read."""
    from memstone.backends.lance.store import LanceMemoryBackend

    out = {"lost": 0, "partial": 0, "clean": 0, "orphans": 0, "revisions": 0}
    async with memstone.open_service(url, embedding=None) as svc:
        report = await svc.verify()
        out["clean"] = int(report.ok)
        for item in acked:
            try:
                version = await svc.get(str(item["entry"]))
            except memstone.NotFound:
                out["lost"] += 1
                continue
            if version.content.text != item["text"]:
                out["lost"] += 1
        for head in await svc.memories():
            out["revisions"] += head.revision
            for r in range(checked.get(head.memory_id, 0) + 1, head.revision + 1):
                rev = await svc.revision(ArtifactRef(memory_id=head.memory_id, revision=r))
                entries = await svc.entries(rev)
                if len(entries) != rev.active_count:
                    out["partial"] += 1
            checked[head.memory_id] = head.revision
        backend = svc.backend
        assert isinstance(backend, LanceMemoryBackend)
        log = backend.lance.log
        chain, _ = log.chain_ids(log.head())
        out["orphans"] = int(log.stats()["transactions"]) - len(chain)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--cycles", type=int, default=100)
    ap.add_argument("--writers", type=int, default=2)
    ap.add_argument("--min-s", type=float, default=0.2, help="Earliest kill after the first acknowledged write.")
    ap.add_argument("--max-s", type=float, default=2.0, help="Latest kill.")
    ap.add_argument("--seed", type=int, default=18)
    ap.add_argument("--local", action="store_true", help="A local folder instead of the S3 server.")
    ap.add_argument("--writer", nargs=2, metavar=("URL", "TAG"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.writer:
        asyncio.run(_writer(*args.writer))
        return
    rng = random.Random(args.seed)
    totals = {"acknowledged": 0, "lost": 0, "partial": 0, "clean": 0}
    with ExitStack() as stack:
        if args.local:
            url = f"lancedb:///{stack.enter_context(tempfile.TemporaryDirectory(prefix='memstone-lcrash-'))}/store"
        else:
            from memstone.testing.s3server import seaweedfs_server

            s3 = stack.enter_context(seaweedfs_server())
            os.environ.update(s3.env())  # the writers inherit the credentials; nothing prints them
            url = s3.url("lancedb+s3", "crash")
        t0 = time.perf_counter()
        orphans = 0
        checked: dict[str, int] = {}
        for cycle in range(1, args.cycles + 1):
            procs, acked, readers = [], [], []
            for w in range(args.writers):
                cmd = [sys.executable, __file__, "--writer", url, f"c{cycle}w{w}"]
                proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
                reader = threading.Thread(target=_drain, args=(proc, acked), daemon=True)
                reader.start()
                procs.append(proc)
                readers.append(reader)
            started = time.monotonic()
            while not acked and time.monotonic() - started < 60:
                time.sleep(0.01)  # the interpreters start; kill only once writing began
            time.sleep(rng.uniform(args.min_s, args.max_s))
            for proc in procs:
                os.kill(proc.pid, signal.SIGKILL)
            for proc, reader in zip(procs, readers, strict=True):
                proc.wait()
                reader.join(timeout=10)
            found = asyncio.run(_check(url, acked, checked))
            totals["acknowledged"] += len(acked)
            for key in ("lost", "partial", "clean"):
                totals[key] += found[key]
            orphans = found["orphans"]
            print(
                f"cycle {cycle:>3}: {len(acked):>3} acknowledged, {found['lost']} lost, {found['partial']} partial "
                f"revisions of {found['revisions']}, verify {'clean' if found['clean'] else 'DAMAGE'}, "
                f"{orphans} orphaned log rows",
                flush=True,
            )
        elapsed = time.perf_counter() - t0
    print(
        f"{'local' if args.local else 'S3'}: cycles {args.cycles}, writers {args.writers}: "
        f"{totals['acknowledged']} acknowledged writes, {totals['lost']} lost, {totals['partial']} partial revisions, "
        f"verify clean {totals['clean']}/{args.cycles}, {orphans} orphaned log rows (never read), {elapsed:.0f} s"
    )
    sys.exit(1 if totals["lost"] or totals["partial"] or totals["clean"] != args.cycles else 0)


if __name__ == "__main__":
    main()
