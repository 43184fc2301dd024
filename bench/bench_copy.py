"""Round trip of ``memstone copy``: ``python bench/bench_copy.py --entries 100000 --start-postgres``.

Builds a SQLite store of ``--entries`` entries (bulk Revisions of ``--batch`` entries in one scoped Memory, plus
``--singles`` single-entry Revisions with revisions, a forget and a purge in a second Memory, and evidence), copies
it SQLite → PostgreSQL → SQLite with :func:`memstone.service.copy.copy_store` (verify included), then exports the
source and the final store and compares the two export trees byte for byte, and every Revision hash of every
Memory in all three stores. Prints the times and the verdict; exits 1 when anything differs.

``--url postgresql://…`` uses that server (a fresh database, dropped afterwards); ``--start-postgres`` starts the
test server of ``memstone.testing.servers``; ``--oceanbase`` adds a leg through a seekdb test server
(SQLite → OceanBase → SQLite, same checks).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus import Corpus

from memstone import EntryInput, open_service
from memstone.domain.model import EntryPatch
from memstone.ports import RevisionsQuery
from memstone.service.copy import CopyReport, copy_store

SCOPE = "memstone://orgs/bench/projects/copy"
TEAM = "memstone://orgs/bench"


async def build(url: str, entries: int, batch: int, singles: int) -> None:
    corpus = Corpus(seed=entries)
    async with open_service(url, embedding=None, author="bench") as svc:
        head = None
        done = 0
        while done < entries - singles:
            k = min(batch, entries - singles - done)
            notes = [EntryInput(kind="fact", text=corpus.note()) for _ in range(k)]
            head = await (svc.remember(head, entries=notes) if head else svc.remember(scope=SCOPE, entries=notes))
            done += k
            print(f"\r  build: {done}/{entries}", end="", file=sys.stderr, flush=True)
        evidence = await svc.record_source("note", "Evidence for the single writes: " + corpus.note())
        ids = []
        for n in range(singles):
            rev = await svc.remember(
                scope=TEAM, sources=[evidence], entries=[EntryInput(kind="lesson", text=corpus.note())]
            )
            assert rev is not None
            ids.append(rev.changes[0].entry_id)
            print(f"\r  build: {done + n + 1}/{entries}", end="", file=sys.stderr, flush=True)
        print(file=sys.stderr)
        if ids:
            await svc.update(ids[0], EntryPatch(text="Revised: " + corpus.note()))
            team = await svc.resolve(TEAM)
            assert team is not None
            await svc.forget(team, entries=ids[1:2], reason="no longer true")
            await svc.purge(ids[-1], reason="written by mistake")


def tree_digest(root: Path) -> tuple[int, int, str]:
    h = hashlib.sha256()
    files = size = 0
    for p in sorted(root.rglob("*")):
        if p.is_file():
            data = p.read_bytes()
            h.update(str(p.relative_to(root)).encode() + b"\0" + hashlib.sha256(data).digest())
            files += 1
            size += len(data)
    return files, size, h.hexdigest()


async def export(url: str, where: Path) -> tuple[tuple[int, int, str], float]:
    t0 = time.perf_counter()
    async with open_service(url, embedding=None, create=False) as svc:
        await svc.export_markdown(where)
    return tree_digest(where), time.perf_counter() - t0


async def revision_hashes(url: str) -> dict[str, list[str]]:
    out = {}
    async with open_service(url, embedding=None, create=False) as svc:
        for head in await svc.memories():
            revs = await svc.backend.read(RevisionsQuery(memory_id=head.memory_id, first=1, last=head.revision))
            out[head.memory_id] = [r.content_hash for r in revs]
    return out


async def copy(src_url: str, dst_url: str, label: str) -> CopyReport:
    def progress(phase: str, done: int, total: int) -> None:
        print(f"\r  {label}: {phase} {done}/{total}     ", end="", file=sys.stderr, flush=True)

    async with open_service(src_url, embedding=None, create=False) as src, open_service(dst_url, embedding=None) as dst:
        report = await copy_store(src.backend, dst.backend, progress=progress)
    print(file=sys.stderr)
    return report


async def leg(name: str, source: str, middle: str, final: str, work: Path, entries: int) -> bool:
    there = await copy(source, middle, f"SQLite -> {name}")
    back = await copy(middle, final, f"{name} -> SQLite")
    (a, t_a), (b, t_b) = (
        await export(source, work / f"export-source-{name}"),
        await export(final, work / f"export-final-{name}"),
    )
    hashes = [await revision_hashes(u) for u in (source, middle, final)]
    same_hashes = hashes[0] == hashes[1] == hashes[2]
    revisions = sum(len(v) for v in hashes[0].values())
    for label, r in ((f"SQLite -> {name}", there), (f"{name} -> SQLite", back)):
        print(
            f"| {label} | {entries} | {r.revisions_written} | {r.seconds:.1f} | {entries / r.seconds:.0f} | "
            f"{r.verify_ok} | {r.tombstones} |"
        )
    print(f"exports: source {a[0]} files {a[1]} bytes ({t_a:.1f} s), final {b[0]} files {b[1]} bytes ({t_b:.1f} s)")
    print(
        f"export byte-identical: {a == b}; every Revision hash equal in all three stores: {same_hashes} ({revisions})"
    )
    return a == b and same_hashes and there.verify_ok and back.verify_ok


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--entries", type=int, default=100_000)
    ap.add_argument("--batch", type=int, default=1000, help="Entries per bulk Revision.")
    ap.add_argument("--singles", type=int, default=200, help="Single-entry Revisions (in a second Memory).")
    ap.add_argument("--url", help="A postgresql:// server URL (a fresh database is made there and dropped).")
    ap.add_argument("--start-postgres", action="store_true", help="Start the embedded PostgreSQL test server.")
    ap.add_argument("--oceanbase", action="store_true", help="Also run the leg through a seekdb test server.")
    args = ap.parse_args()
    if not args.url and not args.start_postgres:
        ap.error("give --url postgresql://… or --start-postgres")
    ok = True
    with contextlib.ExitStack() as stack:
        from memstone.testing import servers

        server = args.url or stack.enter_context(servers.postgres_server())
        work = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        source, final = f"sqlite:///{work / 'source.db'}", f"sqlite:///{work / 'final.db'}"
        t0 = time.perf_counter()
        asyncio.run(build(source, args.entries, args.batch, min(args.singles, args.entries)))
        print(f"load average {os.getloadavg()[0]:.1f}, {os.cpu_count()} cores; python {sys.version.split()[0]}")
        print(f"source: {args.entries} entries built in {time.perf_counter() - t0:.1f} s")
        print("| copy | entries | revisions | seconds (verify included) | entries/s | verify ok | tombstones |")
        print("|---|---|---|---|---|---|---|")
        with servers.postgres_database(server) as pg:
            ok = asyncio.run(leg("PostgreSQL", source, pg, final, work, args.entries)) and ok
        if args.oceanbase:
            ob_server = stack.enter_context(servers.seekdb_server())
            with servers.oceanbase_database(ob_server) as ob:
                final_ob = f"sqlite:///{work / 'final-ob.db'}"
                ok = asyncio.run(leg("OceanBase", source, ob, final_ob, work, args.entries)) and ok
        print(f"load average at the end {os.getloadavg()[0]:.1f}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
