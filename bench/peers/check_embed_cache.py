"""Check that a memstone store bulk-loaded through the embedding cache equals one loaded without it.

    .venv/bin/python bench/peers/check_embed_cache.py --cache /tmp/embcache [--notes 1000] [--queries 30]

Runs memstone's adapter (``sut_memstone.py``) in this process twice on the speed workload's first ``--notes``
notes: store A with the real model in ``write_bulk``, store B with ``embed_prefetch`` + ``write_bulk`` taking the
cached vectors (``embcache.py``; missing ones are computed and stored first). Then it compares, for every query
and mode, the ranked hits of A and B (note key, text and score, exactly), and the cached vectors against
memstone's own model on the same texts (max abs difference). Exit status 1 on any difference.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import embcache  # noqa: E402
import workloads as wl  # noqa: E402
from base import Note  # noqa: E402


def build(workdir: str, notes: list[Note], cached: bool, cache: str):
    import sut_memstone

    if cached:
        os.environ[embcache.ENV] = cache
    else:
        os.environ.pop(embcache.ENV, None)
    s = sut_memstone.System()
    s.setup(workdir, fresh=True)
    info: dict = {}
    if cached:
        info = s.embed_prefetch(notes)
        s.bulk_stage.begin()
        try:
            s.write_bulk(notes)
        finally:
            s.bulk_stage.end()
        info["served"] = s.bulk_stage.served
    else:
        s.write_bulk(notes)
    s.finish_bulk()
    os.environ.pop(embcache.ENV, None)
    return s, info


def ranked(s, query: str, mode: str, k: int) -> list[tuple[str, str, float]]:
    res = s._run(s.svc.search(query, memories=[s.head], limit=k, mode=mode))
    return [(s.key_of.get(h.entry_id, h.entry_id), h.text, h.score) for h in res.hits]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cache", required=True, help="the embedding cache directory (as compare.py --embed-cache)")
    ap.add_argument("--notes", type=int, default=1000)
    ap.add_argument("--queries", type=int, default=30)
    ap.add_argument("-k", type=int, default=10)
    args = ap.parse_args()
    import memstone

    print(f"memstone {memstone.__version__} from {memstone.__file__}")
    notes = [Note(k, t) for k, t in wl.speed_notes(args.notes, seed=7, prefix="n")]
    queries = wl.speed_queries(args.queries, seed=9)
    with tempfile.TemporaryDirectory(prefix="embcache-check-") as tmp:
        a, _ = build(os.path.join(tmp, "uncached"), notes, cached=False, cache=args.cache)
        b, info = build(os.path.join(tmp, "cached"), notes, cached=True, cache=args.cache)
        print(f"cached load: {info}")
        bad = 0
        for mode in ("vector", "hybrid", "fts", "auto"):
            same = sum(ranked(a, q, mode, args.k) == ranked(b, q, mode, args.k) for q in queries)
            nonempty = sum(bool(ranked(a, q, mode, args.k)) for q in queries)
            print(f"{mode}: {same}/{len(queries)} queries with identical top-{args.k} (key, text, score); "
                  f"{nonempty} with hits")  # fmt: skip
            bad += len(queries) - same
        import numpy as np

        texts = b.bulk_texts(notes)
        store = embcache.EmbedCache(args.cache)
        got = store.get_many(texts)
        cached_vecs = np.stack([np.frombuffer(got[t], dtype="<f4") for t in texts])
        real = np.asarray(asyncio.run(b.real_model.embed(tuple(texts))).vectors, dtype=np.float32)
        diff = float(np.abs(cached_vecs - real).max())
        print(f"cached vectors vs memstone's model on the same {len(texts)} texts: max abs difference {diff}")
        bad += diff != 0.0 or info.get("served") != len(texts)
        a.close()
        b.close()
    print("IDENTICAL" if bad == 0 else f"DIFFERENT ({bad})")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
