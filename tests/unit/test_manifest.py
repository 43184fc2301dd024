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
