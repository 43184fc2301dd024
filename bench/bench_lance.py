"""LanceDB engine beside SQLite: ``python bench/bench_lance.py [--entries 10000] [--s3]``.

For each engine (a SQLite file, a local LanceDB folder, and with ``--s3`` a LanceDB prefix on a SeaweedFS server
on loopback) it loads ENTRIES entries into one Memory in batches of ``--batch`` (one Revision each), with the
deterministic ``hashing-64`` model so vector and hybrid search have vectors, then measures on that store:
remember p50/p95 (single-entry writes), fts / vector / hybrid search p50 (``--queries`` each), cold open plus the
first answer (a fresh service: on LanceDB that replays the log into a new replica), and the storage size.

On LanceDB it then runs the daemon's maintenance (``maintain_storage``: a checkpoint, and feeding the search tables,
which builds LanceDB's FTS index and, from 10k vectors, its vector index) and measures the same queries again, now
with candidates from LanceDB's indexes (``idx`` columns), with the share of queries whose hits are identical to the
replica's own search (``idx_same_*``: the same hits in the same order), and the cold open after that checkpoint.
Prints a markdown table.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Literal

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus import Corpus

import memstone
from memstone import EntryInput
from memstone.backends.lance.store import LanceMemoryBackend

MODEL = "hashing-64"
MODES: tuple[Literal["fts", "vector", "hybrid"], ...] = ("fts", "vector", "hybrid")


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def folder_bytes(path: Path) -> int:
    if path.is_file():
        return sum(p.stat().st_size for p in path.parent.glob(path.name + "*"))
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


async def run(name: str, url: str, n: int, batch: int, writes: int, queries: int) -> dict[str, float | str]:
    corpus = Corpus(seed=n)
    out: dict[str, float | str] = {"engine": name}
    async with memstone.open_service(url, embedding=MODEL) as svc:
        t0 = time.perf_counter()
        head = None
        for start in range(0, n, batch):
            entries = [EntryInput(kind="fact", text=corpus.note()) for _ in range(min(batch, n - start))]
            head = await svc.remember(head, entries=entries)
        out["load_s"] = time.perf_counter() - t0
        assert head is not None
        lat = []
        for _ in range(writes):
            t = time.perf_counter()
            head = await svc.remember(head, entries=[EntryInput(kind="fact", text=corpus.note())])
            lat.append((time.perf_counter() - t) * 1e3)
            assert head is not None
        out["remember_p50_ms"], out["remember_p95_ms"] = pct(lat, 0.5), pct(lat, 0.95)
        qs = [corpus.query() for _ in range(queries)]
        replica = await measure(svc, head, qs, out, "")
        memory_id = head.memory_id
        backend = svc.backend
        if isinstance(backend, LanceMemoryBackend):
            t = time.perf_counter()
            await backend.maintain_storage()
            out["maintain_s"] = time.perf_counter() - t
            before = dict(backend.lance.stats)
            indexed = await measure(svc, head, qs, out, "idx_")
            used = {k: backend.lance.stats[k] - before[k] for k in ("text_index", "vector_index")}
            assert used["text_index"] > 0 and used["vector_index"] > 0, used
            for mode in MODES:
                pairs = list(zip(replica[mode], indexed[mode], strict=True))
                out[f"idx_same_{mode}"] = sum(a == b for a, b in pairs) / len(pairs)
    t = time.perf_counter()
    async with memstone.open_service(url, embedding=MODEL) as svc:
        page = await svc.search(qs[0], memories=[memory_id], mode="fts")
        out["cold_open_first_answer_ms"] = (time.perf_counter() - t) * 1e3
        assert page is not None
    return out


async def measure(
    svc: memstone.MemoryService, head: memstone.Revision, qs: list[str], out: dict[str, float | str], prefix: str
) -> dict[str, list[list[str]]]:
    """p50 of each search mode over ``qs`` into ``out``; the hits (entry version ids) of every query, by mode."""
    hits: dict[str, list[list[str]]] = {}
    for mode in MODES:
        lat = []
        for q in qs:
            t = time.perf_counter()
            page = await svc.search(q, memories=[head], mode=mode)
            lat.append((time.perf_counter() - t) * 1e3)
            hits.setdefault(mode, []).append([str(h.entry_version_id) for h in page.hits])
        out[f"{prefix}{mode}_p50_ms"] = statistics.median(lat)
    return hits


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--entries", type=int, default=10000)
    ap.add_argument("--batch", type=int, default=500)
    ap.add_argument("--writes", type=int, default=100)
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--s3", action="store_true", help="Also run on a SeaweedFS S3 server on loopback.")
    args = ap.parse_args()
    rows = []
    with ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="memstone-blance-")))
        targets: list[tuple[str, str, Path | None]] = [
            ("sqlite", f"sqlite:///{tmp / 'm.db'}", tmp / "m.db"),
            ("lancedb local", f"lancedb:///{tmp / 'lance'}?search=gated", tmp / "lance"),
        ]
        if args.s3:
            from memstone.testing.s3server import seaweedfs_server

            s3 = stack.enter_context(seaweedfs_server())
            os.environ.update(s3.env())
            targets.append(("lancedb S3 (seaweedfs)", s3.url("lancedb+s3", "bench") + "?search=gated", None))
        for name, url, path in targets:
            row = asyncio.run(run(name, url, args.entries, args.batch, args.writes, args.queries))
            row["storage_mb"] = folder_bytes(path) / 1e6 if path is not None else float("nan")
            rows.append(row)
            print(f"done: {name}", file=sys.stderr, flush=True)
    cols = [
        ("engine", "{}"),
        ("load_s", "{:.1f}"),
        ("remember_p50_ms", "{:.1f}"),
        ("remember_p95_ms", "{:.1f}"),
        ("fts_p50_ms", "{:.1f}"),
        ("vector_p50_ms", "{:.1f}"),
        ("hybrid_p50_ms", "{:.1f}"),
        ("cold_open_first_answer_ms", "{:.0f}"),
        ("storage_mb", "{:.1f}"),
        ("maintain_s", "{:.1f}"),
        ("idx_fts_p50_ms", "{:.1f}"),
        ("idx_vector_p50_ms", "{:.1f}"),
        ("idx_hybrid_p50_ms", "{:.1f}"),
        ("idx_same_fts", "{:.2f}"),
        ("idx_same_vector", "{:.2f}"),
        ("idx_same_hybrid", "{:.2f}"),
    ]
    print(f"entries {args.entries} (batches of {args.batch}), {args.writes} writes, {args.queries} queries per mode")
    print("| " + " | ".join(c for c, _ in cols) + " |")
    print("|" + "---|" * len(cols))
    for r in rows:
        print("| " + " | ".join(f.format(r[c]) if c in r else "—" for c, f in cols) + " |")


if __name__ == "__main__":
    main()
