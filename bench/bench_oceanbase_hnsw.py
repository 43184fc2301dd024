"""How far OceanBase's HNSW index lags behind writes: ``python bench/bench_oceanbase_hnsw.py [--rows 2000]``.

Starts a private seekdb (or uses ``--url oceanbase://…`` of an empty database), and for a HEAP and an
index-organized (the default) table of ``VECTOR(dim)`` with an HNSW index (L2, vsag) measures:

- lag: after each of ``--fresh`` single-row autocommit inserts, the time until ``ORDER BY l2_distance(...)
  APPROXIMATE LIMIT 3`` returns the new row (polled every 5 ms), p50 and max;
- right after a bulk insert of ``--rows`` rows, how many rows the first APPROXIMATE top 10 returns;
- recall@10 of APPROXIMATE against exact search on structured vectors, and both latencies (p50).

Prints a table; figures vary with the machine's load.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pymysql

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from memstone.testing import servers


def structured(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    """Unit vectors near a rank-32 subspace (like text embeddings; iid random vectors defeat any ANN index)."""
    latent = rng.standard_normal((n, 32)) @ rng.standard_normal((32, dim))
    v = latent + 0.1 * rng.standard_normal((n, dim)) * np.abs(latent).mean()
    return (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)


def lit(v: np.ndarray) -> str:
    return "[" + ",".join(repr(float(x)) for x in v) + "]"


@contextlib.contextmanager
def database(url: str | None) -> Iterator[str]:
    if url:
        yield url
        return
    with servers.seekdb_server() as server, servers.oceanbase_database(server) as db:
        print(f"seekdb started in {servers.start_times['seekdb']:.2f} s", flush=True)
        yield db


def measure(cur: pymysql.cursors.Cursor, org: str, args: argparse.Namespace) -> dict[str, float]:
    rng = np.random.default_rng(7)
    dim = args.dim
    table = f"lag_{org.lower()}"
    cur.execute(f"DROP TABLE IF EXISTS {table}")
    cur.execute(
        f"CREATE TABLE {table} (id BIGINT PRIMARY KEY, embedding VECTOR({dim}), "
        f"VECTOR INDEX vi_{table} (embedding) WITH (distance=L2, type=hnsw, lib=vsag)) ORGANIZATION = {org}"
    )
    base = structured(rng, args.rows + args.fresh + args.queries, dim)
    data, fresh, queries = base[: args.rows], base[args.rows : args.rows + args.fresh], base[args.rows + args.fresh :]
    for start in range(0, len(data), 500):
        cur.executemany(
            f"INSERT INTO {table} VALUES (%s, %s)",
            [(start + i, lit(v)) for i, v in enumerate(data[start : start + 500])],
        )

    def ann(v: np.ndarray, k: int, approximate: bool = True) -> list[int]:
        mode = "APPROXIMATE " if approximate else ""
        cur.execute(f"SELECT id FROM {table} ORDER BY l2_distance(embedding, %s) {mode}LIMIT {k}", (lit(v),))
        return [r[0] for r in cur.fetchall()]

    first_bulk = len(ann(data[0], 10))
    deadline = time.monotonic() + 60
    while len(ann(data[0], 10)) < 10 and time.monotonic() < deadline:
        time.sleep(0.05)
    lags = []
    for j, v in enumerate(fresh):
        rid = 10_000_000 + j
        cur.execute(f"INSERT INTO {table} VALUES (%s, %s)", (rid, lit(v)))
        started = time.monotonic()
        while rid not in ann(v, 3) and time.monotonic() - started < 30:
            time.sleep(0.005)
        lags.append(time.monotonic() - started)
    time.sleep(1.0)
    recall, t_ann, t_exact = [], [], []
    for q in queries:
        t = time.perf_counter()
        exact = ann(q, 10, approximate=False)
        t_exact.append(time.perf_counter() - t)
        t = time.perf_counter()
        approx = ann(q, 10)
        t_ann.append(time.perf_counter() - t)
        recall.append(len(set(exact) & set(approx)) / 10)
    cur.execute(f"DROP TABLE {table}")
    return {
        "bulk_first": first_bulk,
        "lag_p50_ms": 1000 * statistics.median(lags),
        "lag_max_ms": 1000 * max(lags),
        "recall": statistics.mean(recall),
        "ann_ms": 1000 * statistics.median(t_ann),
        "exact_ms": 1000 * statistics.median(t_exact),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", help="an empty oceanbase:// database (default: start a private seekdb)")
    parser.add_argument("--rows", type=int, default=2000)
    parser.add_argument("--fresh", type=int, default=20)
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--dim", type=int, default=384)
    args = parser.parse_args()
    with database(args.url) as url:
        conn = pymysql.connect(autocommit=True, **servers.oceanbase_connect_args(url))
        with conn.cursor() as cur:
            cur.execute("SELECT @@version_comment")
            print(cur.fetchone()[0])
            print(f"{args.rows} rows of VECTOR({args.dim}), HNSW L2; {args.fresh} fresh single-row inserts")
            print("| organization | first APPROXIMATE top 10 after bulk | fresh-row lag p50 / max | recall@10 | "
                  "APPROXIMATE / exact p50 |")  # fmt: skip
            print("| --- | --- | --- | --- | --- |")
            for org in ("HEAP", "INDEX"):
                m = measure(cur, org, args)
                print(
                    f"| {org} | {m['bulk_first']:.0f} rows | {m['lag_p50_ms']:.1f} / {m['lag_max_ms']:.1f} ms | "
                    f"{m['recall']:.3f} | {m['ann_ms']:.1f} / {m['exact_ms']:.1f} ms |",
                    flush=True,
                )
        conn.close()


if __name__ == "__main__":
    main()
