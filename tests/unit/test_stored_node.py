"""A manifest node's stored bytes (``rows.stored_node``): zlib's level-6 format, deflated with a smaller state."""

from __future__ import annotations

import hashlib
import random
import zlib

from memstone.backends.sql.rows import _node_body, stored_node
from memstone.domain.ids import EntryId, EntryVersionId, new_ulid
from memstone.domain.manifest import build_manifest
from memstone.domain.model import ManifestEntry


def _entries(count: int) -> list[ManifestEntry]:
    return [
        ManifestEntry(
            entry_id=EntryId(new_ulid("ent_")),
            entry_version_id=EntryVersionId(new_ulid("ver_")),
            entry_content_hash="sha256:" + hashlib.sha256(str(i).encode()).hexdigest(),
            state="active" if i % 7 else "inactive",
        )
        for i in range(count)
    ]


def test_the_nodes_of_a_manifest_are_stored_as_zlib_level_6_stores_them() -> None:
    _, nodes = build_manifest(_entries(3000))
    assert len(nodes) > 100
    for body in nodes.values():
        assert stored_node(body) == zlib.compress(body, 6)
        assert _node_body(stored_node(body)) == body


def test_any_body_near_and_past_the_small_state_reads_back() -> None:
    rng = random.Random(13)
    for size in (0, 1, 262, 4095, 4096, 8191, 8192, 40_000):
        for body in (rng.randbytes(size), bytes(rng.choice(b"ab0123 ") for _ in range(size))):
            assert zlib.decompress(stored_node(body)) == body
            if size >= 4096:
                assert stored_node(body) == zlib.compress(body, 6)
