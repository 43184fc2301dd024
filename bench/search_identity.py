"""Dump every hit of a fixed set of searches, so two trees can be compared byte for byte on one store (issue 11).

    nice .venv/bin/python bench/search_identity.py --build /tmp/s.db            # once: a 10k corpus.py store
    nice .venv/bin/python bench/search_identity.py /tmp/s.db /tmp/a.txt         # per tree (PYTHONPATH its src)
    cmp /tmp/a.txt /tmp/b.txt

On a server (issue 13): ``--build postgresql://…/DB`` loads the same store into that database (empty), and
``search_identity.py postgresql://…/DB /tmp/a.txt`` searches it in place (a search changes nothing stored).

Each tree searches its own copy of the store (the file is copied first, so no run changes it). The searches are
``bench_core.py``'s 320 ``corpus.query()`` queries plus 7 made of common terms (SQLite's common-term split), each
at limit 8, 3 and 30 with convex and RRF fusion (1,962 searches), and the first 40 queries again in priority
order, with a kind filter, and with an ``important`` filter. Each line is one search: its arguments, the mode
used, and every hit's ``to_dict()`` by ``repr`` (scores to the last bit), or the error's class and message.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus import Corpus

import memstone
from memstone import EntryInput

COMMON = ["deploy", "postgres backup", "python pytest fixture", "cache redis", "release branch review", "api", "the"]


def _url(store: str) -> str | None:
    return store if "://" in store else None


async def build(store: str, entries: int) -> None:
    corpus = Corpus(seed=entries)
    async with memstone.open_service(_url(store) or f"sqlite:///{store}", embedding=None) as svc:
        head = None
        for done in range(0, entries, 1000):
            batch = [
                EntryInput(kind="fact" if i % 5 else "decision", text=corpus.note(), important=i % 7 == 0)
                for i in range(min(1000, entries - done))
            ]
            head = await svc.remember(head, entries=batch)
        assert head is not None
        print(head.ref.memory_id, file=sys.stderr)


async def dump(store: str, out: Path, entries: int, by_revision: bool = False) -> None:
    corpus = Corpus(seed=entries)
    for _ in range(entries):
        corpus.note()  # the queries bench_core.py draws after loading its notes
    queries = [corpus.query() for _ in range(320)]
    with tempfile.TemporaryDirectory() as folder:
        copy = Path(folder) / "s.db"
        if _url(store) is None:
            shutil.copyfile(store, copy)
        async with memstone.open_service(_url(store) or f"sqlite:///{copy}", embedding=None) as svc:
            (mid,) = [m.ref.memory_id for m in await svc.memories()]
            searched: object = (await svc.head(mid)) if by_revision else mid
            lines = []
            cases: list[tuple[str, dict[str, object]]] = [
                (q, {"limit": limit, "fusion": fusion})
                for q in queries + COMMON
                for limit in (8, 3, 30)
                for fusion in ("convex", "rrf")
            ]
            cases += [(q, {"limit": 8, "order": "priority"}) for q in queries[:40]]
            cases += [(q, {"limit": 8, "kinds": ["decision"]}) for q in queries[:40]]
            cases += [(q, {"limit": 8, "important": True}) for q in queries[:40]]
            for q, kw in cases:
                try:
                    res = await svc.search(q, memories=[searched], mode="fts", **kw)  # type: ignore[arg-type,list-item]
                    body = f"{res.mode} {[repr(h.to_dict()) for h in res.hits]}"
                except memstone.MemstoneError as e:
                    body = f"{type(e).__name__}: {e}"
                lines.append(f"{q!r} {sorted(kw.items())!r} {body}")
    out.write_text("\n".join(lines) + "\n")
    print(f"{len(lines)} searches, {sum(line.count('entry_version_id') for line in lines)} hits -> {out}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("store", help="the SQLite file, or a postgresql://… database URL")
    ap.add_argument("out", type=Path, nargs="?")
    ap.add_argument("--build", action="store_true", help="build the store at STORE")
    ap.add_argument("--entries", type=int, default=10_000)
    ap.add_argument(
        "--by-revision",
        action="store_true",
        help="search the head Revision, not the Memory id (PostgreSQL: the one-trip search, once it is held)",
    )
    args = ap.parse_args()
    if args.build:
        asyncio.run(build(args.store, args.entries))
    else:
        asyncio.run(dump(args.store, args.out, args.entries, args.by_revision))


if __name__ == "__main__":
    main()
