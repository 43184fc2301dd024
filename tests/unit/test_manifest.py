import random

from memstone.domain.ids import EntryId, EntryVersionId
from memstone.domain.manifest import EMPTY_ROOT, LEAF_MAX, ManifestReader, build_manifest
from memstone.domain.model import ManifestEntry


def entry(i: int, state: str = "active", ver: int = 1) -> ManifestEntry:
    return ManifestEntry(
        entry_id=EntryId(f"ent_{i:06d}"),
        entry_version_id=EntryVersionId(f"ver_{i:06d}_{ver}"),
        entry_content_hash=f"{i:064x}",
        state=state,
    )  # type: ignore[arg-type]


def store() -> tuple[dict[str, bytes], ManifestReader]:
    nodes: dict[str, bytes] = {}
    return nodes, ManifestReader(lambda h: nodes[h])


def test_root_depends_only_on_content_not_on_build_order() -> None:
    items = [entry(i) for i in range(500)]
    nodes, reader = store()
    root = EMPTY_ROOT
    shuffled = items[:]
    random.Random(7).shuffle(shuffled)
    for i in range(0, len(shuffled), 37):
        root, new = reader.update(root, {e.entry_id: e for e in shuffled[i : i + 37]})
        nodes.update(new)
    fresh_root, _ = build_manifest(items)
    assert root == fresh_root
    assert reader.counts(root) == (500, 500)
    assert sorted(reader.iter_entries(root)) == sorted(items)


def test_lookup_and_state_changes() -> None:
    nodes, reader = store()
    root, new = reader.update(EMPTY_ROOT, {e.entry_id: e for e in (entry(i) for i in range(200))})
    nodes.update(new)
    assert reader.lookup(root, "ent_000042") == entry(42)
    assert reader.lookup(root, "ent_999999") is None
    root2, new2 = reader.update(root, {EntryId("ent_000042"): entry(42, "inactive")})
    nodes.update(new2)
    assert reader.lookup(root2, "ent_000042") == entry(42, "inactive")
    assert reader.lookup(root, "ent_000042") == entry(42)  # the old root is untouched
    assert reader.counts(root2) == (200, 199)


def test_a_single_entry_write_touches_log_many_nodes() -> None:
    nodes, reader = store()
    root = EMPTY_ROOT
    for start in range(0, 20_000, 2_000):
        root, new = reader.update(root, {e.entry_id: e for e in (entry(i) for i in range(start, start + 2_000))})
        nodes.update(new)
    _, new = reader.update(root, {EntryId("ent_000007"): entry(7, ver=2)})
    assert 1 <= len(new) <= 6  # one leaf plus its ancestors, never the whole manifest
    leaf_bytes = max(len(b) for b in new.values())
    assert leaf_bytes < 200 * (LEAF_MAX + 16)


def test_radix_shape_is_order_independent_for_arbitrary_ids() -> None:
    rng = random.Random(3)
    alphabet = "ab0_"
    ids = sorted({"".join(rng.choice(alphabet) for _ in range(rng.randint(1, 7))) for _ in range(600)})
    items = [
        ManifestEntry(
            entry_id=EntryId(i), entry_version_id=EntryVersionId("v" + i), entry_content_hash="h" + i, state="active"
        )
        for i in ids
    ]
    fresh, _ = build_manifest(items)
    for seed in range(3):
        nodes, reader = store()
        order = items[:]
        random.Random(seed).shuffle(order)
        root = EMPTY_ROOT
        i = 0
        while i < len(order):
            step = random.Random(seed + i).randint(1, 40)
            root, new = reader.update(root, {e.entry_id: e for e in order[i : i + step]})
            nodes.update(new)
            i += step
        assert root == fresh
        for e in items:
            assert reader.lookup(root, e.entry_id) == e
        assert reader.lookup(root, "zzz") is None and reader.lookup(root, "") is None
        assert reader.counts(root) == (len(items), len(items))


def test_a_batch_of_new_time_ordered_ids_touches_few_nodes() -> None:
    from memstone.domain.ids import UlidGenerator

    gen = UlidGenerator()
    nodes, reader = store()
    root = EMPTY_ROOT
    for _ in range(20):
        batch = [
            ManifestEntry(
                entry_id=EntryId(gen("ent_")),
                entry_version_id=EntryVersionId(gen("ver_")),
                entry_content_hash="0" * 64,
                state="active",
            )
            for _ in range(500)
        ]
        root, new = reader.update(root, {e.entry_id: e for e in batch})
        nodes.update(new)
        # The batch's own subtree, not a rewrite of the manifest: 43-63 nodes in 800 batches of 500 (leaves split
        # on id prefixes hold fewer than LEAF_MAX on average); a rewrite from the 4th batch on is over 2,000 / 24 = 83.
        assert len(new) <= 500 // LEAF_MAX * 4
    assert reader.counts(root) == (10_000, 10_000)


def test_rows_many_answers_per_root_when_repeated() -> None:
    # rows_many remembers its answers per manifest root (a root names immutable content): asking again, or on
    # a newer root where the entry changed, must give each root's own leaf row, absent ids included.
    def row(e: ManifestEntry) -> list[str]:
        return [e.entry_id, e.entry_version_id, e.entry_content_hash, e.state]

    nodes, reader = store()
    root, new = reader.update(EMPTY_ROOT, {e.entry_id: e for e in (entry(i) for i in range(300))})
    nodes.update(new)
    root2, new2 = reader.update(root, {EntryId("ent_000042"): entry(42, "inactive", ver=2)})
    nodes.update(new2)
    ids = ["ent_000042", "ent_000007", "ent_999999"]
    for _ in range(2):
        assert reader.rows_many(root, ids) == {"ent_000042": row(entry(42)), "ent_000007": row(entry(7))}
        assert reader.rows_many(root2, ids) == {
            "ent_000042": row(entry(42, "inactive", ver=2)),
            "ent_000007": row(entry(7)),
        }
        assert {i: reader.lookup(root2, i) for i in ids} == {
            "ent_000042": entry(42, "inactive", ver=2),
            "ent_000007": entry(7),
            "ent_999999": None,
        }
    nodes.clear()  # a repeated lookup reads no node at all
    assert reader.rows_many(root2, ids[:1]) == {"ent_000042": row(entry(42, "inactive", ver=2))}


def test_node_bytes_are_the_jcs_bytes_and_a_written_node_is_cached_as_decoded() -> None:
    """encode_node's C-encoder path writes exactly RFC 8785's bytes (a hash must never change), falls back to the
    JCS encoder for non-ASCII text (astral child keys sort by UTF-16 there), and refuses a lone surrogate as JCS
    does; the node a write caches from its body equals the node decoded from its bytes."""
    import pytest

    from memstone.domain.canonical import MANIFEST_NODE_TAG, canonical_bytes, tagged_sha256
    from memstone.domain.errors import InvalidInput
    from memstone.domain.manifest import decode_node, encode_node

    bodies: list[dict[str, object]] = [
        {"t": "leaf", "e": [["ent_1", "ver_1", "0" * 64, "active"], ['e"\\\n\x01', "v", "h", "inactive"]]},
        {"t": "branch", "p": "ent_", "c": {"a": "1" * 64, "b": "2" * 64}, "n": 30, "a": 29},
        {"t": "branch", "p": "é", "c": {"\U0001f600": "1" * 64, "\uff5e": "2" * 64, "z": "3" * 64}, "n": 3, "a": 0},
        {"t": "leaf", "e": [["ent_ü", "ver_€", "h", "active"]]},
    ]
    for body in bodies:
        raw = canonical_bytes(body)
        assert encode_node(body) == (tagged_sha256(MANIFEST_NODE_TAG, raw), raw)
    with pytest.raises(InvalidInput):
        encode_node({"t": "leaf", "e": [["ent_\ud800", "v", "h", "active"]]})

    reader = store()[1]
    root, new = reader.update(EMPTY_ROOT, {e.entry_id: e for e in (entry(i) for i in range(300))})
    reader.remember_nodes(new)  # as apply_plan does
    assert len(new) > 1 and root in new
    for node_hash, raw in new.items():
        assert reader.node(node_hash) == decode_node(node_hash, raw)
