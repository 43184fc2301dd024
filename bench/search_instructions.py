"""Instructions per FTS search under callgrind, so trees can be compared where wall time is noise (issue 11).

    valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file=/tmp/cg.out \\
        .venv/bin/python bench/search_instructions.py /tmp/s.db [--searches 100] [--write]
    callgrind_annotate /tmp/cg.out | head     # "PROGRAM TOTALS" / searches = instructions per search, every thread

The store (``bench/search_identity.py --build``) is copied first, so no run changes it. The script runs 20 warm-up
searches of ``bench_core.py``'s queries (and ``--passes`` over the measured ones: caches warm), then switches
callgrind's instrumentation on (client requests, which valgrind reads from a special instruction sequence: this
module emits it from a tiny machine-code stub called through ctypes) around ``--searches`` calls of
``search(mode="fts", limit=8)`` of the next queries. Instrumentation is process-wide, so the count covers every
thread: the event loop's and the engine's workers, where a search's statements run (callgrind's collection toggle
is per thread, and counted the event loop's thread alone until stop 34). Outside valgrind the stub is a no-op and
the script prints wall time only. With ``--write`` the process first writes the same 10,000 notes into a new store
itself (in 10 Revisions of 1,000, as ``--build`` does) and searches that: a search of what this process wrote, as
``bench_core.py`` measures it. With ``--speed`` the queries are ``bench_retrieval.py --parts speed``'s (limit 10;
give it that bench's 100k no-model store, ``bench/.cache/speed-none-100000-<fp>.db``; it is copied first).
A ``postgresql://…`` store (``bench/search_identity.py --build URL``) is searched in place (a search changes nothing
stored; the server's own instructions are not counted, only this client's); ``--by-revision`` searches the head
Revision, as ``bench_core.py`` does (PostgreSQL: the one-trip search).
"""

from __future__ import annotations

import argparse
import asyncio
import ctypes
import mmap
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus import Corpus

import memstone
from memstone import EntryInput

# An x86-64 valgrind client request (valgrind.h's VALGRIND_DO_CLIENT_REQUEST_EXPR): rax = the request block
# (its first word the request code, taken from rdi), rdx = the default result (0, what runs outside valgrind),
# then the magic preamble of rotates (rdi is rotated by 128 bits in all: unchanged) and ``xchg rbx, rbx``.
_STUB = bytes.fromhex(
    "4883ec30"  # sub rsp, 48
    "48893c24"  # mov [rsp], rdi (the request)
    "48c744240800000000"  # mov qword [rsp+8..40], 0 (its five arguments)
    "48c744241000000000"
    "48c744241800000000"
    "48c744242000000000"
    "48c744242800000000"
    "4889e0"  # mov rax, rsp
    "31d2"  # xor edx, edx
    "48c1c703"
    "48c1c70d"
    "48c1c73d"
    "48c1c733"  # rol rdi, 3 / 13 / 61 / 51
    "4887db"  # xchg rbx, rbx
    "4889d0"  # mov rax, rdx (the result)
    "4883c430"  # add rsp, 48
    "c3"  # ret
)
START_INSTRUMENTATION = 0x43540004  # callgrind.h: VG_USERREQ_TOOL_BASE('C', 'T') + 4
STOP_INSTRUMENTATION = 0x43540005


def _request() -> ctypes._CFuncPtr:  # type: ignore[name-defined]
    buf = mmap.mmap(-1, len(_STUB), prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
    buf.write(_STUB)
    addr = ctypes.addressof(ctypes.c_char.from_buffer(buf))
    fn = ctypes.CFUNCTYPE(ctypes.c_long, ctypes.c_long)(addr)
    fn._buf = buf  # type: ignore[attr-defined]  # keep the mapping alive
    return fn


async def run(store: str, searches: int, write: bool, speed: bool, passes: int, by_revision: bool = False) -> None:
    request = _request()
    corpus = Corpus(seed=10_000)
    notes = [corpus.note() for _ in range(10_000)]  # the store's texts (search_identity.py --build)
    queries = [corpus.query() for _ in range(searches + 20)]
    limit = 8
    if speed:  # bench_retrieval.py's speed queries at its limit, the first 20 again as the warm-up
        from bench_retrieval import LIMIT, speed_queries

        limit, queries = LIMIT, speed_queries(200)
        queries = queries[:20] + queries[:searches]
    with tempfile.TemporaryDirectory() as folder:
        copy = Path(folder) / "s.db"
        url = store if "://" in store else None
        if not write and url is None:
            shutil.copyfile(store, copy)
        async with memstone.open_service(url or f"sqlite:///{copy}", embedding=None) as svc:
            if write:  # the same notes, written by this process (as bench_core.py does before it searches)
                head = None
                for done in range(0, len(notes), 1000):
                    batch = [
                        EntryInput(kind="fact" if i % 5 else "decision", text=text, important=i % 7 == 0)
                        for i, text in enumerate(notes[done : done + 1000])
                    ]
                    head = await svc.remember(head, entries=batch)
            (mid,) = [m.ref.memory_id for m in await svc.memories()]
            searched: object = (await svc.head(mid)) if by_revision else mid
            for q in queries[:20] + queries[20 : 20 + searches] * passes:
                await svc.search(q, memories=[searched], mode="fts", limit=limit)  # type: ignore[list-item]
            hits = 0
            started = time.perf_counter()
            request(START_INSTRUMENTATION)
            for q in queries[20 : 20 + searches]:
                hits += len((await svc.search(q, memories=[searched], mode="fts", limit=limit)).hits)  # type: ignore[list-item]
            request(STOP_INSTRUMENTATION)
            took = time.perf_counter() - started
    print(f"{searches} searches, {hits} hits, {took / searches * 1e3:.3f} ms each (wall, under the tool if any)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("store", help="the store to copy (unused with --write), or a postgresql://… database URL")
    ap.add_argument("--searches", type=int, default=100)
    ap.add_argument("--write", action="store_true", help="search entries this process just wrote")
    ap.add_argument("--speed", action="store_true", help="bench_retrieval.py's speed queries (its 100k store)")
    ap.add_argument("--passes", type=int, default=0, help="warm-up passes over the measured queries first")
    ap.add_argument("--by-revision", action="store_true", help="search the head Revision (bench_core.py's search)")
    args = ap.parse_args()
    asyncio.run(run(args.store, args.searches, args.write, args.speed, args.passes, args.by_revision))


if __name__ == "__main__":
    main()
