"""The chunked, content-addressed manifest (format ``radix-v1``; see docs/manifest.md).

The RFC's flat-v1 manifest copies and rehashes the whole directory on every write. memstone keeps its
guarantees — a Revision's hash commits to every entry's (id, version, content hash, state), and any Revision
can be read and verified exactly — with a path-compressed radix trie of immutable, content-addressed nodes
keyed by the entry ids themselves:

* a node holding at most ``LEAF_MAX`` entries is a leaf (entries sorted by entry_id); a larger one is a branch
  that records the longest common prefix ``p`` of its ids and one child per character that follows ``p``;
* a node's hash is SHA-256("memstone:manifest-node:v1\\0" + canonical JSON body); a branch lists its
  children's hashes and the entry/active counts below it, so the root hash commits to every entry;
* the shape depends only on the set of entry ids (entries are never removed, inactive ones stay), so the
  same manifest always has the same root hash, whatever order it was built in.

Entry ids are ULIDs, ordered by creation time, so a batch of new entries lands in one small subtree and a
single write rewrites one leaf and its short spine: O(k · depth) nodes for k changed entries, never the
whole manifest.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .canonical import MANIFEST_NODE_TAG, canonical_bytes, canonical_json_floatless, tagged_sha256
from .errors import IntegrityError
from .ids import EntryId, EntryVersionId
from .model import EntryState, ManifestEntry

MANIFEST_FORMAT = "radix-v1"
LEAF_MAX = 24
_STATES = ("active", "inactive")
NodeLoader = Callable[[str], bytes]
BatchNodeLoader = Callable[[Sequence[str]], Mapping[str, bytes]]
ManifestRow = list[str]  # a leaf's row as decoded: [entry_id, version_id, content_hash, state]


@dataclass(frozen=True, slots=True)
class Node:
    """A decoded manifest node: a leaf (``rows``) or a branch (``prefix`` + ``children``).

    A leaf keeps its rows as decoded ([entry_id, version_id, content_hash, state] lists) and builds
    ``ManifestEntry`` objects on demand: a lookup needs one of them, not all.
    """

    rows: tuple[list[str], ...] | None
    children: Mapping[str, str] | None
    count: int
    active: int
    prefix: str = ""
    # A leaf's rows by entry id (the first row of each id): a lookup is one probe, not a scan of the leaf.
    by_id: Mapping[str, ManifestRow] = field(default_factory=dict, compare=False, repr=False)

    @property
    def entries(self) -> tuple[ManifestEntry, ...] | None:
        return None if self.rows is None else tuple(_entry(r) for r in self.rows)

    def find(self, entry_id: str) -> ManifestEntry | None:
        """The leaf's entry for ``entry_id``, if it holds one."""
        assert self.rows is not None
        row = self.by_id.get(entry_id)
        return None if row is None else _entry(row)


def _entry(row: list[str]) -> ManifestEntry:
    state: EntryState = "active" if row[3] == "active" else "inactive"  # decode_node admits only these two
    return ManifestEntry(
        entry_id=EntryId(row[0]), entry_version_id=EntryVersionId(row[1]), entry_content_hash=row[2], state=state
    )


def _leaf_body(entries: list[ManifestEntry]) -> dict[str, object]:
    return {
        "t": "leaf",
        "e": [[e.entry_id, e.entry_version_id, e.entry_content_hash, e.state] for e in entries],
    }


def _branch_body(prefix: str, children: Mapping[str, str], count: int, active: int) -> dict[str, object]:
    return {"t": "branch", "p": prefix, "c": dict(sorted(children.items())), "n": count, "a": active}


def encode_node(body: Mapping[str, object]) -> tuple[str, bytes]:
    """Canonical bytes of a node body and their hash.

    A body holds only strings and ints (no floats), so json's C encoder writes its JCS text whenever that text is
    ASCII (ASCII keys sort the same by code point and by UTF-16 unit, and a lone surrogate is not ASCII); any other
    body goes through the JCS encoder. A write encodes three or four nodes of up to ``LEAF_MAX`` rows each.
    """
    text = canonical_json_floatless(body)
    raw = text.encode("ascii") if text.isascii() else canonical_bytes(body)
    return tagged_sha256(MANIFEST_NODE_TAG, raw), raw


def decode_node(node_hash: str, raw: bytes, *, check: bool = True) -> Node:
    """Decode node bytes, checking that they hash to ``node_hash``."""
    if check and tagged_sha256(MANIFEST_NODE_TAG, raw) != node_hash:
        raise IntegrityError(f"manifest node {node_hash} does not match its hash")
    body = json.loads(raw)
    if body.get("t") == "leaf":
        rows = tuple(body["e"])
        if not all(isinstance(r, list) and len(r) == 4 and r[3] in _STATES for r in rows):
            raise IntegrityError(f"manifest node {node_hash} has a malformed leaf row")
        return _leaf_node(rows)
    if body.get("t") == "branch":
        return _branch_node(body)
    raise IntegrityError(f"manifest node {node_hash} has an unknown shape")


def _leaf_node(rows: tuple[list[str], ...]) -> Node:
    active = sum(1 for r in rows if r[3] == "active")
    return Node(rows=rows, children=None, count=len(rows), active=active, by_id={r[0]: r for r in reversed(rows)})


def _branch_node(body: Mapping[str, Any]) -> Node:
    c, n, a, p = body["c"], body["n"], body["a"], body["p"]
    return Node(rows=None, children=dict(c), count=int(n), active=int(a), prefix=str(p))


def _common_prefix(a: str, b: str) -> str:
    """The longest common prefix of two ids, character by character (ids are compared as strings here)."""
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return a[:i]


def _key(entry_id: str, depth: int) -> str:
    """The child key of an id under a branch whose prefix has ``depth`` characters ("" when the id ends there)."""
    return entry_id[depth] if len(entry_id) > depth else ""


EMPTY_ROOT, _EMPTY_RAW = encode_node(_leaf_body([]))
_FOUND_ROOTS = 16  # manifests whose lookups are remembered
_FOUND_PER_ROOT = 50_000


class ManifestReader:
    """Reads manifests through a node loader, caching decoded nodes (they are immutable)."""

    def __init__(
        self, load: NodeLoader, *, load_many: BatchNodeLoader | None = None, cache_size: int = 200_000
    ) -> None:
        self._load = load
        self._load_many = load_many
        self._cache: dict[str, Node] = {}
        self._cache_size = cache_size
        # root -> entry id -> its leaf row (None: not in that manifest); a root names immutable content, so an
        # answer never goes stale. Searching the same head again (the usual case) then walks no trie at all.
        self._found: dict[str, dict[str, ManifestRow | None]] = {}

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
            if h not in self._cache and len(self._cache) < self._cache_size:
                self._cache[h] = decode_node(h, raw, check=False)

    def lookup(self, root: str, entry_id: str) -> ManifestEntry | None:
        node = self.node(root)
        while node.children is not None:
            if not entry_id.startswith(node.prefix):
                return None
            child = node.children.get(_key(entry_id, len(node.prefix)))
            if child is None:
                return None
            node = self.node(child)
        return node.find(entry_id)

    def rows_many(self, root: str, entry_ids: Sequence[str]) -> dict[str, ManifestRow]:
        """``lookup`` for several ids at once, loading the uncached nodes of each trie level in one batch.

        Returns the leaf row (``[entry_id, version_id, content_hash, state]``, as decoded and checked; read-only)
        of each id in the manifest (absent ids are simply missing): a search's hit check compares three of its
        fields, and builds no ``ManifestEntry``.
        """
        memo = self._found.get(root)
        if memo is None:
            if len(self._found) >= _FOUND_ROOTS:
                self._found.clear()
            memo = self._found[root] = {}
        found: dict[str, ManifestRow] = {}
        wanted: list[str] = []
        for entry_id in entry_ids:
            if entry_id not in memo:
                wanted.append(entry_id)
            elif (known := memo[entry_id]) is not None:
                found[entry_id] = known
        if wanted:
            walked = self._walk_many(root, wanted)
            if len(memo) + len(wanted) > _FOUND_PER_ROOT:
                memo.clear()
            for entry_id in wanted:
                memo[entry_id] = walked.get(entry_id)
            found.update(walked)
        return found

    def _walk_many(self, root: str, entry_ids: Sequence[str]) -> dict[str, ManifestRow]:
        # Each id down the decoded nodes already cached (the usual case: a searched head's nodes were decoded
        # when it was written or first read); the ids that reach an uncached node go down level by level, each
        # level's missing nodes loaded in one batch.
        cache = self._cache
        found: dict[str, ManifestRow] = {}
        uncached: list[str] = []
        for entry_id in entry_ids:
            node = cache.get(root)
            while node is not None and node.children is not None:
                prefix = node.prefix
                if not entry_id.startswith(prefix):
                    break
                depth = len(prefix)  # the child key, as _key gives it (inlined: this loop runs per id and level)
                child = node.children.get(entry_id[depth] if len(entry_id) > depth else "")
                if child is None:
                    break
                node = cache.get(child)
            if node is None:
                uncached.append(entry_id)
            elif node.children is None and (row := node.by_id.get(entry_id)) is not None:
                found[entry_id] = row
        if uncached:
            found.update(self._walk_levels(root, uncached))
        return found

    def _walk_levels(self, root: str, entry_ids: Sequence[str]) -> dict[str, ManifestRow]:
        at: dict[str, str] = dict.fromkeys(entry_ids, root)  # id -> the node it has reached
        found: dict[str, ManifestRow] = {}
        while at:
            self._prefetch(set(at.values()))
            following: dict[str, str] = {}
            for entry_id, node_hash in at.items():
                node = self.node(node_hash)
                if node.children is None:
                    row = node.by_id.get(entry_id)
                    if row is not None:
                        found[entry_id] = row
                elif entry_id.startswith(node.prefix):
                    child = node.children.get(_key(entry_id, len(node.prefix)))
                    if child is not None:
                        following[entry_id] = child
            at = following
        return found

    def _prefetch(self, hashes: set[str]) -> None:
        missing = [h for h in hashes if h not in self._cache and h != EMPTY_ROOT]
        if len(missing) < 2 or self._load_many is None:
            return
        loaded = self._load_many(missing)
        if len(self._cache) + len(loaded) > self._cache_size:
            self._cache.clear()
        for h, raw in loaded.items():
            self._cache[h] = decode_node(h, raw)

    def counts(self, root: str) -> tuple[int, int]:
        node = self.node(root)
        return node.count, node.active

    def iter_entries(self, root: str) -> Iterator[ManifestEntry]:
        """Every manifest entry, in trie order (use ``sorted`` for entry_id order)."""
        node = self.node(root)
        entries = node.entries
        if entries is not None:
            yield from entries
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
        items = sorted(updates.values(), key=lambda e: e.entry_id.encode("utf-8"))
        new_root, _, _ = self._update(root, items, new_nodes)
        return new_root, new_nodes

    def _update(self, node_hash: str, items: list[ManifestEntry], out: dict[str, bytes]) -> tuple[str, int, int]:
        node = self.node(node_hash)
        if node.rows is not None:
            merged = {e.entry_id: e for e in node.entries or ()}
            for e in items:
                merged[e.entry_id] = e
            return self._build(sorted(merged.values(), key=lambda e: e.entry_id.encode("utf-8")), out)
        assert node.children is not None
        prefix = node.prefix
        shared = prefix
        for e in items:
            shared = _common_prefix(shared, e.entry_id)
        groups: dict[str, list[ManifestEntry]] = {}
        for e in items:
            groups.setdefault(_key(e.entry_id, len(shared)), []).append(e)
        if shared == prefix:
            children = dict(node.children)
            count, active = node.count, node.active
            for key, group in groups.items():
                old = children.get(key)
                old_count, old_active = self.counts(old) if old is not None else (0, 0)
                h, n, a = self._update(old, group, out) if old is not None else self._build(group, out)
                children[key] = h
                count += n - old_count
                active += a - old_active
            return self._store(_branch_body(prefix, children, count, active), out, count, active)
        # Some ids leave this branch's prefix: a new branch at the shorter shared prefix takes the old node as
        # the child for its next character (merging any new ids that share that character).
        old_key = prefix[len(shared)]
        children = {}
        count, active = 0, 0
        old_group = groups.pop(old_key, None)
        if old_group is None:
            h, n, a = node_hash, node.count, node.active
        else:
            h, n, a = self._update(node_hash, old_group, out)
        children[old_key] = h
        count, active = n, a
        for key, group in groups.items():
            h, n, a = self._build(group, out)
            children[key] = h
            count += n
            active += a
        return self._store(_branch_body(shared, children, count, active), out, count, active)

    def _build(self, entries: list[ManifestEntry], out: dict[str, bytes]) -> tuple[str, int, int]:
        active = sum(1 for e in entries if e.state == "active")
        if len(entries) <= LEAF_MAX:
            return self._store(_leaf_body(entries), out, len(entries), active)
        prefix: str = entries[0].entry_id
        for e in entries[1:]:
            prefix = _common_prefix(prefix, e.entry_id)
        groups: dict[str, list[ManifestEntry]] = {}
        for e in entries:
            groups.setdefault(_key(e.entry_id, len(prefix)), []).append(e)
        children = {k: self._build(g, out)[0] for k, g in groups.items()}
        return self._store(_branch_body(prefix, children, len(entries), active), out, len(entries), active)

    def _store(self, body: dict[str, Any], out: dict[str, bytes], count: int, active: int) -> tuple[str, int, int]:
        h, raw = encode_node(body)
        if h != EMPTY_ROOT:
            out[h] = raw
            if h not in self._cache and len(self._cache) < self._cache_size:
                # The node as decode_node would give it back, from the body just encoded (not decoded again).
                self._cache[h] = _leaf_node(tuple(body["e"])) if body["t"] == "leaf" else _branch_node(body)
        return h, count, active


def build_manifest(entries: list[ManifestEntry]) -> tuple[str, dict[str, bytes]]:
    """Build a manifest from scratch (used by verification to cross-check a root)."""
    out: dict[str, bytes] = {}
    reader = ManifestReader(lambda h: out[h])
    ordered = sorted(entries, key=lambda e: e.entry_id.encode("utf-8"))
    root, _, _ = reader._build(ordered, out)
    return root, out
