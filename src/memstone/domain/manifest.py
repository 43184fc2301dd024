"""The chunked, content-addressed manifest (format ``hamt16-v1``).

The RFC's flat-v1 manifest copies and rehashes the whole directory on every write. memstone keeps its
guarantees — a Revision's hash commits to every entry's (id, version, content hash, state), and any Revision
can be read and verified exactly — with a hash-array-mapped trie of immutable, content-addressed nodes:

* an entry's path is the hex digits of SHA-256(entry_id); a node at depth d holding at most ``LEAF_MAX``
  entries is a leaf (entries sorted by entry_id), otherwise a branch of up to 16 children keyed by digit d;
* a node's hash is SHA-256("memstone:manifest-node:v1\\0" + canonical JSON body); a branch lists its
  children's hashes and the entry/active counts below it, so the root hash commits to every entry;
* the shape depends only on the set of entry ids (entries are never removed, inactive ones stay), so the
  same manifest always has the same root hash, whatever order it was built in.

A write that touches k entries rewrites k leaves and their ancestors: O(k · log16 n) nodes, never the whole
manifest. See docs/manifest.md.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass

from .canonical import MANIFEST_NODE_TAG, canonical_bytes, tagged_sha256
from .errors import IntegrityError
from .ids import EntryId, EntryVersionId
from .model import ManifestEntry

LEAF_MAX = 24
MAX_DEPTH = 64
NodeLoader = Callable[[str], bytes]


@dataclass(frozen=True, slots=True)
class Node:
    """A decoded manifest node: a leaf (``entries``) or a branch (``children``)."""

    entries: tuple[ManifestEntry, ...] | None
    children: Mapping[str, str] | None
    count: int
    active: int


def entry_path(entry_id: str) -> str:
    return hashlib.sha256(entry_id.encode("utf-8")).hexdigest()


def _leaf_body(entries: list[ManifestEntry]) -> dict[str, object]:
    return {
        "t": "leaf",
        "e": [[e.entry_id, e.entry_version_id, e.entry_content_hash, e.state] for e in entries],
    }


def _branch_body(children: Mapping[str, str], count: int, active: int) -> dict[str, object]:
    return {"t": "branch", "c": dict(children), "n": count, "a": active}


def encode_node(body: Mapping[str, object]) -> tuple[str, bytes]:
    """Canonical bytes of a node body and their hash."""
    raw = canonical_bytes(body)
    return tagged_sha256(MANIFEST_NODE_TAG, raw), raw


def decode_node(node_hash: str, raw: bytes, *, check: bool = True) -> Node:
    """Decode node bytes, checking that they hash to ``node_hash``."""
    if check and tagged_sha256(MANIFEST_NODE_TAG, raw) != node_hash:
        raise IntegrityError(f"manifest node {node_hash} does not match its hash")
    body = json.loads(raw)
    if body.get("t") == "leaf":
        entries = tuple(
            ManifestEntry(
                entry_id=EntryId(e[0]), entry_version_id=EntryVersionId(e[1]), entry_content_hash=e[2], state=e[3]
            )
            for e in body["e"]
        )
        active = sum(1 for e in entries if e.state == "active")
        return Node(entries=entries, children=None, count=len(entries), active=active)
    if body.get("t") == "branch":
        return Node(entries=None, children=dict(body["c"]), count=int(body["n"]), active=int(body["a"]))
    raise IntegrityError(f"manifest node {node_hash} has an unknown shape")


EMPTY_ROOT, _EMPTY_RAW = encode_node(_leaf_body([]))


class ManifestReader:
    """Reads manifests through a node loader, caching decoded nodes (they are immutable)."""

    def __init__(self, load: NodeLoader, *, cache_size: int = 200_000) -> None:
        self._load = load
        self._cache: dict[str, Node] = {}
        self._cache_size = cache_size

    def node(self, node_hash: str) -> Node:
        found = self._cache.get(node_hash)
        if found is not None:
            return found
        raw = _EMPTY_RAW if node_hash == EMPTY_ROOT else self._load(node_hash)
        node = decode_node(node_hash, raw)
        if len(self._cache) >= self._cache_size:
            self._cache.clear()
        self._cache[node_hash] = node
        return node

    def remember_nodes(self, nodes: Mapping[str, bytes]) -> None:
        for h, raw in nodes.items():
            if len(self._cache) < self._cache_size:
                self._cache[h] = decode_node(h, raw, check=False)

    def lookup(self, root: str, entry_id: str) -> ManifestEntry | None:
        path = entry_path(entry_id)
        node = self.node(root)
        depth = 0
        while node.children is not None:
            child = node.children.get(path[depth])
            if child is None:
                return None
            node = self.node(child)
            depth += 1
        assert node.entries is not None
        for e in node.entries:
            if e.entry_id == entry_id:
                return e
        return None

    def counts(self, root: str) -> tuple[int, int]:
        node = self.node(root)
        return node.count, node.active

    def iter_entries(self, root: str) -> Iterator[ManifestEntry]:
        """Every manifest entry, in trie order (use ``sorted`` for entry_id order)."""
        node = self.node(root)
        if node.entries is not None:
            yield from node.entries
            return
        assert node.children is not None
        for digit in sorted(node.children):
            yield from self.iter_entries(node.children[digit])

    def iter_node_hashes(self, root: str) -> Iterator[str]:
        yield root
        node = self.node(root)
        if node.children is not None:
            for digit in sorted(node.children):
                yield from self.iter_node_hashes(node.children[digit])

    def update(self, root: str, updates: Mapping[str, ManifestEntry]) -> tuple[str, dict[str, bytes]]:
        """Apply ``updates`` (entry_id → new manifest entry). Returns the new root and the new nodes."""
        new_nodes: dict[str, bytes] = {}
        if not updates:
            return root, new_nodes
        items = [(entry_path(eid), e) for eid, e in updates.items()]
        new_root, _, _ = self._update(root, 0, items, new_nodes)
        return new_root, new_nodes

    def _update(
        self, node_hash: str | None, depth: int, items: list[tuple[str, ManifestEntry]], out: dict[str, bytes]
    ) -> tuple[str, int, int]:
        node = self.node(node_hash) if node_hash is not None else Node((), None, 0, 0)
        if node.entries is not None:
            merged = {e.entry_id: e for e in node.entries}
            for _, e in items:
                merged[e.entry_id] = e
            entries = sorted(merged.values(), key=lambda e: e.entry_id.encode("utf-8"))
            return self._build(entries, depth, out)
        assert node.children is not None
        groups: dict[str, list[tuple[str, ManifestEntry]]] = {}
        for path, e in items:
            groups.setdefault(path[depth], []).append((path, e))
        children = dict(node.children)
        count, active = node.count, node.active
        for digit, group in groups.items():
            old = children.get(digit)
            old_count, old_active = self.counts(old) if old is not None else (0, 0)
            h, n, a = self._update(old, depth + 1, group, out)
            children[digit] = h
            count += n - old_count
            active += a - old_active
        return self._store(_branch_body(dict(sorted(children.items())), count, active), out, count, active)

    def _build(self, entries: list[ManifestEntry], depth: int, out: dict[str, bytes]) -> tuple[str, int, int]:
        active = sum(1 for e in entries if e.state == "active")
        if len(entries) <= LEAF_MAX or depth >= MAX_DEPTH:
            return self._store(_leaf_body(entries), out, len(entries), active)
        groups: dict[str, list[ManifestEntry]] = {}
        for e in entries:
            groups.setdefault(entry_path(e.entry_id)[depth], []).append(e)
        children = {d: self._build(g, depth + 1, out)[0] for d, g in sorted(groups.items())}
        return self._store(_branch_body(children, len(entries), active), out, len(entries), active)

    def _store(self, body: dict[str, object], out: dict[str, bytes], count: int, active: int) -> tuple[str, int, int]:
        h, raw = encode_node(body)
        if h != EMPTY_ROOT:
            out[h] = raw
        return h, count, active


def build_manifest(entries: list[ManifestEntry]) -> tuple[str, dict[str, bytes]]:
    """Build a manifest from scratch (used by verification to cross-check a root)."""
    out: dict[str, bytes] = {}
    reader = ManifestReader(lambda h: out[h])
    ordered = sorted(entries, key=lambda e: e.entry_id.encode("utf-8"))
    root, _, _ = reader._build(ordered, 0, out)
    return root, out
