"""SQLite's in-process vector index (``VectorIndex``): the 1-bit prescan of a large Memory and its exact rerank."""

from __future__ import annotations

from typing import Any

import numpy as np

from memstone.backends.sqlite.vectors import PRESCAN_ROWS, RERANK_PER_K, VectorIndex


def unit_rows(n: int, dim: int, seed: int) -> Any:
    rows = np.random.default_rng(seed).standard_normal((n, dim)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def clustered_rows(n: int, dim: int, seed: int) -> Any:
    """Unit rows around 200 centres, as a model's embeddings of related texts cluster (isotropic noise is the
    1-bit prescan's worst case, not its use)."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((200, dim)).astype(np.float32)
    rows = centres[rng.integers(0, 200, n)] + 0.6 * rng.standard_normal((n, dim)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def index_of(vectors: Any, first_rowid: int = 1, entry: str = "e") -> VectorIndex:
    index = VectorIndex("0")
    index.add([(first_rowid + i, f"{entry}{i}", v.tobytes()) for i, v in enumerate(vectors)])
    return index


def exact_top(vectors: Any, q: Any, k: int) -> list[int]:
    return [int(i) + 1 for i in np.argsort(-(vectors @ q), kind="stable")[:k]]


def test_a_large_index_scores_only_its_prescan_candidates_with_the_exact_distances() -> None:
    vectors = clustered_rows(20_000, 64, seed=1)
    index = index_of(vectors)
    rng = np.random.default_rng(2)
    found = 0
    for target in rng.choice(len(vectors), 20, replace=False):
        q = vectors[target] + 0.1 * rng.standard_normal(64).astype(np.float32)
        q /= np.linalg.norm(q)
        hits = index.nearest(tuple(q.tolist()), 10, rerank_depth=512)
        assert 512 <= index.reranked < 20_000 // 4  # the prescan's nearest codes, not every row
        # Every distance is the full float32 one the full scan reports for that row (up to summation order).
        full = {rowid: d for d, rowid in index.nearest(tuple(q.tolist()), 20_000, rerank_depth=0)}
        assert index.reranked == 20_000
        assert all(abs(d - full[rowid]) < 1e-6 for d, rowid in hits)
        assert [d for d, _ in hits] == sorted(d for d, _ in hits)
        found += len({rowid for _, rowid in hits}.intersection(exact_top(vectors, q, 10)))
    assert found >= 0.9 * 200  # recall@10 against the exact scan


def test_every_row_tied_with_the_last_prescan_candidate_is_reranked() -> None:
    # 3,000 rows share the query's sign bits exactly (Hamming distance 0) but differ in how near they are; the
    # prescan asks for 256 codes, so its cut falls inside the tie: all 3,000 must be scored, whatever their order.
    rng = np.random.default_rng(3)
    q = unit_rows(1, 32, seed=4)[0]
    tied = np.abs(rng.standard_normal((3000, 32)).astype(np.float32)) * np.sign(q)
    tied /= np.linalg.norm(tied, axis=1, keepdims=True)
    vectors = np.concatenate([unit_rows(17_000, 32, seed=5), tied])
    rng.shuffle(vectors)
    index = index_of(vectors)
    hits = index.nearest(tuple(q.tolist()), 10, rerank_depth=256)
    assert index.reranked >= 3000
    assert [rowid for _, rowid in hits] == exact_top(vectors, q, 10)


def test_a_retired_window_never_comes_back_from_the_prescan() -> None:
    vectors = clustered_rows(20_000, 64, seed=6)
    index = index_of(vectors)
    q = vectors[123]
    assert index.nearest(tuple(q.tolist()), 1, rerank_depth=256)[0][1] == 124
    # Entry e123 is revised: its new window replaces the old one, which was the query's own vector.
    index.add([(20_001, "e123", unit_rows(1, 64, seed=7)[0].tobytes())])
    hits = index.nearest(tuple(q.tolist()), 10, rerank_depth=256)
    assert index.reranked < 20_000 and 124 not in {rowid for _, rowid in hits}
    alive = np.ones(len(vectors), dtype=bool)
    alive[123] = False
    rest = np.flatnonzero(alive)
    assert hits[0][1] == int(rest[np.argmax(vectors[rest] @ q)]) + 1  # the nearest live row is found instead


def test_a_small_index_is_scanned_exactly_in_full() -> None:
    k, depth = 10, 256
    rows = PRESCAN_ROWS * max(depth, RERANK_PER_K * k)  # at the bound: no prescan yet
    vectors = unit_rows(rows, 16, seed=8)
    index = index_of(vectors)
    q = unit_rows(1, 16, seed=9)[0]
    hits = index.nearest(tuple(q.tolist()), k, rerank_depth=depth)
    assert index.reranked == rows
    assert [rowid for _, rowid in hits] == exact_top(vectors, q, k)
