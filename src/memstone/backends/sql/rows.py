"""Row-level SQL of the authority tables, written once for every engine (``?`` placeholders, the dialect's forms).

Revisions, the head pointer and its compare-and-swap, manifest nodes, entry versions, sources, scope bindings and
store metadata. Revisions and entry versions are immutable, so their decoded rows are cached across
transactions; nothing mutable is cached here. The one exception is a purge (issue 12), which rewrites versions:
it bumps ``store_meta.purge_generation`` in its transaction, and every read of versions checks that generation in
its own snapshot first, so a purge made by any process empties this process's version cache at its next read.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from ...domain.errors import IntegrityError
from ...domain.ids import EntryId, EntryVersionId, MemoryId, SourceId
from ...domain.model import (
    ArtifactRef,
    Change,
    EntryContent,
    EntryVersion,
    Provenance,
    Relation,
    Revision,
    Source,
)
from ...domain.purge import purge_mark
from ...domain.trusted import stored_content
from ...ports import ScopeBinding
from .engine import Engine, Row, Snapshot, later, later_many, later_one, snapshot_of

PURGE_GENERATION = "purge_generation"

VERSION_COLUMNS = (
    "memory_artifact_id, entry_id, entry_version_id, version, previous_version_id, kind, title, text, tags, slug, "
    "important, mandatory, source_refs, artifact_refs, relations, entry_content_hash, created_in_revision, author, "
    "surface, created_at"
)
REVISION_COLUMNS = (
    "artifact_id, revision, content, content_hash, manifest_root, entry_count, active_count, lineage, author, "
    "surface, created_at"
)
_BATCH = 500


def loads_json(text: str) -> object:
    try:
        return json.loads(text)
    except ValueError as exc:
        raise IntegrityError(f"stored JSON is unreadable: {exc}") from exc


# One encoder for every stored JSON value: ``json.dumps`` with these (non-default) options builds a new encoder each
# call, and a write stores six (issue 13). Same options, same text; an encoder keeps no state between calls.
_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def dumps_json(value: object) -> str:
    if value == []:
        return "[]"  # most stored lists (a version's tags, sources, artifacts, relations)
    return _ENCODER.encode(value)


def json_list(text: str) -> list[Any]:
    """A stored JSON array (most are empty, which needs no parse)."""
    if text == "[]":
        return []
    value = loads_json(text)
    if not isinstance(value, list):
        raise IntegrityError("a stored JSON array is not an array")
    return value


def stored_purge(entry_content_hash: str) -> tuple[str, str]:
    """(text, title) of a purged version's row: an empty text no write accepts, the original hash in the title.

    (Not the in-memory mark: PostgreSQL's text columns cannot hold its NUL.)"""
    return "", entry_content_hash


def content_from_row(r: Row) -> EntryContent:
    """Content fields in VERSION_COLUMNS order from ``kind`` on: kind, title, text, tags, slug, important,
    mandatory, source_refs, artifact_refs, relations.

    A purged version is stored with an empty text (which no write accepts) and its original hash in ``title``
    (see :func:`stored_purge`); it is read back as purged content (domain/purge.py)."""
    purged = r[2] == "" and r[1] is not None
    return stored_content(
        r[0],
        purge_mark(r[1]) if purged else r[2],
        None if purged else r[1],
        () if r[3] == "[]" else tuple(json_list(r[3])),
        r[4],
        bool(r[5]),
        bool(r[6]),
        () if r[7] == "[]" else tuple(SourceId(s) for s in json_list(r[7])),
        ()
        if r[8] == "[]"
        else tuple(ArtifactRef(memory_id=MemoryId(a["memory_id"]), revision=a["revision"]) for a in json_list(r[8])),
        () if r[9] == "[]" else tuple(Relation(kind=x["kind"], target=EntryId(x["target"])) for x in json_list(r[9])),
    )


def version_from_row(row: Row) -> EntryVersion:
    return EntryVersion(
        memory_id=MemoryId(row[0]),
        entry_id=EntryId(row[1]),
        entry_version_id=EntryVersionId(row[2]),
        version=int(row[3]),
        previous_version_id=row[4],
        content=content_from_row(row[5:15]),
        entry_content_hash=row[15],
        created_in_revision=int(row[16]),
        provenance=Provenance(author=row[17], surface=row[18], created_at=row[19]),
    )


def revision_from_row(row: Row) -> Revision:
    content = loads_json(row[2])
    lineage = loads_json(row[7])
    if not isinstance(content, dict) or not isinstance(lineage, dict):
        raise IntegrityError("a stored revision's content or lineage is not an object")
    changes = tuple(
        Change(
            op=c["op"],
            entry_id=EntryId(c["entry_id"]),
            from_entry_version_id=c["from_entry_version_id"],
            to_entry_version_id=c["to_entry_version_id"],
            reason=c["reason"],
        )
        for c in content.get("changes", [])
    )
    return Revision(
        memory_id=MemoryId(row[0]),
        revision=int(row[1]),
        content_hash=row[3],
        manifest_root=row[4],
        entry_count=int(row[5]),
        active_count=int(row[6]),
        changes=changes,
        sources=tuple(SourceId(s) for s in lineage.get("sources", [])),
        artifacts=tuple(
            ArtifactRef(memory_id=MemoryId(a["memory_id"]), revision=a["revision"])
            for a in lineage.get("artifacts", [])
        ),
        author=row[8],
        surface=row[9],
        created_at=row[10],
    )


# A manifest node's stored bytes: ``zlib.compress(body, 6)``'s (header, deflate, Adler-32). Under 4 KB (nearly every
# node) deflate runs with an 8 KB window and memLevel 6: 16 KB of hash heads cleared a call, not 64 KB (issue 13),
# and the same bytes in every node measured (docs/benchmarks.md, pgwrite9). Only the decompressed bytes are hashed.
def stored_node(body: bytes) -> bytes:
    if len(body) >= 4096:
        return zlib.compress(body, 6)
    deflate = zlib.compressobj(6, zlib.DEFLATED, -13, 6)  # raw deflate; ``78 9c``: zlib.compress's header at level 6
    return b"\x78\x9c" + deflate.compress(body) + deflate.flush() + zlib.adler32(body).to_bytes(4, "big")


def _node_body(body: object) -> bytes:
    # Bodies are stored zlib-compressed; node hashes cover the uncompressed canonical bytes.
    if isinstance(body, bytes | bytearray | memoryview):
        return zlib.decompress(bytes(body))
    return str(body).encode("utf-8")


# The columns of a search hit's version row (``AuthorityRows.hit_rows``), in its order.
HIT_COLUMNS = (
    "entry_id, entry_version_id, kind, title, text, tags, slug, important, mandatory, source_refs, artifact_refs, "
    "relations, entry_content_hash, created_at"
)
_UNREAD: tuple[Any, ...] = ("unread",)  # a version no statement of the snapshot read ahead (``Snapshot.versions``)
ORG_KEY = "embedding_profile@org:"  # the store_meta key prefix of an organization's own embedding profile
ROUTING_KEYS = ("vector_generation",)  # with the org profiles: the store_meta rows a search is routed by


class AuthorityRows:
    """The authority tables' statements, on the engine's current transaction."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.dialect = engine.dialect
        self._revision_cache: dict[tuple[str, int], Revision] = {}
        self._latest: dict[str, int] = {}  # memory id -> the newest of its Revisions in ``_revision_cache``
        self._version_cache: dict[str, EntryVersion] = {}
        self._cache_generation = 0  # the purge generation the version cache holds rows of

    def q(self, sql: str, args: Sequence[object] = ()) -> list[Any]:
        return self.engine.conn.q(sql, args)

    # ---------------------------------------------------------------- revisions and heads
    def head(self, memory_id: MemoryId) -> Revision | None:
        snap = snapshot_of(self.engine.conn)
        if snap is None:
            rows = self.q("SELECT revision FROM artifact_heads WHERE artifact_id = ?", (memory_id,))
            return self.head_at(memory_id, int(rows[0][0]) if rows else None)
        if memory_id not in snap.heads:
            if snap.meta is None:  # the read's first head: the routing rows come with it, in the same statement
                self._routing(snap, memory_id)
            else:
                rows = self.q("SELECT revision FROM artifact_heads WHERE artifact_id = ?", (memory_id,))
                snap.heads[memory_id] = int(rows[0][0]) if rows else None
        return self.head_at(memory_id, snap.heads[memory_id])

    def meta_rows(
        self, keys: Sequence[str], memory_id: MemoryId | None = None, column: str | None = None
    ) -> list[tuple[Any, Any, str | None, str | None]]:
        """One statement: ``memory_id``'s head revision (NULL without one), the SQL ``column`` (NULL without one),
        then the ``store_meta`` rows of ``keys`` and of every org's own profile: (head, column, key, value) rows, or
        one row of NULLs after the first two when there is no such meta row."""
        head = "(SELECT revision FROM artifact_heads WHERE artifact_id = ?)" if memory_id is not None else "NULL"
        one_row = f"(SELECT {head} AS head, {column or 'NULL'} AS extra) h"
        meta = f"store_meta m ON m.key IN ({self.dialect.marks(len(keys))}) OR substr(m.key, 1, ?) = ?"
        return self.q(
            f"SELECT h.head, h.extra, m.key, m.value FROM {one_row} LEFT JOIN {meta} ORDER BY m.key",
            (*((memory_id,) if memory_id is not None else ()), *keys, len(ORG_KEY), ORG_KEY),
        )

    def routing_meta(self) -> dict[str, str]:
        """The ``store_meta`` rows a search is routed by (``ROUTING_KEYS`` and every org's own profile); read once
        per read-only transaction on an engine that keeps its reads (``Snapshot``)."""
        snap = snapshot_of(self.engine.conn)
        if snap is not None and snap.meta is not None:
            return snap.meta
        return self._routing(snap, None)

    def _routing(self, snap: Snapshot | None, memory_id: MemoryId | None) -> dict[str, str]:
        rows = self.meta_rows(ROUTING_KEYS, memory_id)
        meta = {str(k): str(v) for _, _, k, v in rows if k is not None}
        if snap is not None:
            snap.meta = meta
            if memory_id is not None:
                snap.heads[memory_id] = None if rows[0][0] is None else int(rows[0][0])
        return meta

    def head_at(self, memory_id: MemoryId, revision: int | None) -> Revision | None:
        """The head Revision whose number this transaction has read (None: the Memory has no head)."""
        return None if revision is None else self.revision(memory_id, revision)

    def revision(self, memory_id: MemoryId, revision: int) -> Revision | None:
        key = (memory_id, revision)
        cached = self._revision_cache.get(key)
        if cached is not None:
            return cached  # Revisions are immutable, so a decoded one never goes stale
        rows = self.q(
            f"SELECT {REVISION_COLUMNS} FROM artifact_revisions WHERE artifact_id = ? AND revision = ?",
            (memory_id, revision),
        )
        if not rows:
            return None
        found = revision_from_row(rows[0])
        self.cache_revision(found)
        return found

    def holds(self, memory_id: MemoryId, revision: int) -> bool:
        """Whether this process holds that Revision decoded (``revision`` returns it without a statement)."""
        return (memory_id, revision) in self._revision_cache

    def cache_revision(self, revision: Revision) -> None:
        """Keep a decoded Revision (one read, or one this process committed: called after its COMMIT)."""
        if len(self._revision_cache) > 4096:
            self._revision_cache.clear()
            self._latest.clear()
        self._revision_cache[(revision.memory_id, revision.revision)] = revision
        if revision.revision > self._latest.get(revision.memory_id, 0):
            self._latest[revision.memory_id] = revision.revision

    def newest(self, memory_id: MemoryId) -> int | None:
        """The newest Revision of ``memory_id`` this process holds (its head, unless another process wrote since)."""
        return self._latest.get(memory_id)

    def revisions(self, memory_id: MemoryId, first: int, last: int) -> list[Revision]:
        rows = self.q(
            f"SELECT {REVISION_COLUMNS} FROM artifact_revisions WHERE artifact_id = ? AND revision BETWEEN ? AND ? "
            "ORDER BY revision",
            (memory_id, first, last),
        )
        return [revision_from_row(r) for r in rows]

    def raw_revisions(self) -> Iterator[tuple[Revision, str]]:
        """Every stored Revision with its stored canonical content text, for verification."""
        for row in self.q(f"SELECT {REVISION_COLUMNS} FROM artifact_revisions ORDER BY artifact_id, revision"):
            yield revision_from_row(row), row[2]

    def heads(self) -> list[Revision]:
        columns = ", ".join("r." + c.strip() for c in REVISION_COLUMNS.split(","))
        rows = self.q(
            f"SELECT {columns} FROM artifact_heads h "
            "JOIN artifact_revisions r ON r.artifact_id = h.artifact_id AND r.revision = h.revision "
            "ORDER BY h.artifact_id"
        )
        return [revision_from_row(r) for r in rows]

    def insert_revision(self, revision: Revision, content: str) -> None:
        lineage = dumps_json(
            {"sources": list(revision.sources), "artifacts": [a.to_dict() for a in revision.artifacts]}
        )
        later(  # nothing is read back: it travels with the head's compare-and-swap
            self.engine.conn,
            f"INSERT INTO artifact_revisions ({REVISION_COLUMNS}) VALUES ({self.dialect.marks(11)})",
            (
                revision.memory_id,
                revision.revision,
                content,
                revision.content_hash,
                revision.manifest_root,
                revision.entry_count,
                revision.active_count,
                lineage,
                revision.author,
                revision.surface,
                revision.created_at,
            ),
        )

    def cas_head(self, memory_id: MemoryId, base: int, new: int) -> bool:
        """Move the head from ``base`` to ``new`` (``base == 0`` inserts it). False when the head moved; on an engine
        that queues it with ``COMMIT`` (``later_one``), True, and the transaction fails there when the head moved."""
        conn = self.engine.conn
        if base == 0:
            sql = self.dialect.insert_ignore("artifact_heads", ("artifact_id", "revision"), ("artifact_id",))
            return later_one(conn, sql, (memory_id, new))
        sql = "UPDATE artifact_heads SET revision = ? WHERE artifact_id = ? AND revision = ?"
        return later_one(conn, sql, (new, memory_id, base))

    # ---------------------------------------------------------------- manifest nodes
    def load_node(self, node_hash: str) -> bytes:
        rows = self.q("SELECT body FROM manifest_nodes WHERE node_hash = ?", (node_hash,))
        if not rows:
            raise KeyError(f"manifest node {node_hash} is missing")
        return _node_body(rows[0][0])

    def load_nodes(self, node_hashes: Sequence[str]) -> dict[str, bytes]:
        out: dict[str, bytes] = {}
        for i in range(0, len(node_hashes), _BATCH):
            chunk = node_hashes[i : i + _BATCH]
            for h, body in self.q(
                f"SELECT node_hash, body FROM manifest_nodes WHERE node_hash IN ({self.dialect.marks(len(chunk))})",
                chunk,
            ):
                out[h] = _node_body(body)
        missing = [h for h in node_hashes if h not in out]
        if missing:
            raise KeyError(f"manifest node {missing[0]} is missing")
        return out

    def insert_nodes(self, nodes: Mapping[str, bytes]) -> None:
        if nodes:
            table, columns, key = "manifest_nodes", ("node_hash", "body"), ("node_hash",)
            rows = [(h, stored_node(raw)) for h, raw in nodes.items()]
            arrays = self.dialect.insert_ignore_columns(table, columns, key, rows)
            if arrays is not None:  # one statement of the same text however many nodes (PostgreSQL: ``unnest``)
                later(self.engine.conn, *arrays)
            else:
                later_many(self.engine.conn, self.dialect.insert_ignore(table, columns, key), rows)

    # ---------------------------------------------------------------- entry versions
    def insert_versions(self, versions: Sequence[EntryVersion]) -> list[tuple[Any, ...]]:
        """Insert the versions' rows (``VERSION_COLUMNS`` order) and return them as bound."""
        rows = []
        for v in versions:
            c = v.content
            if c.purged_hash is None and not c.text:
                raise IntegrityError(f"entry version {v.entry_version_id} has an empty text")
            text, title = stored_purge(c.purged_hash) if c.purged_hash is not None else (c.text, c.title)
            rows.append(
                (
                    v.memory_id,
                    v.entry_id,
                    v.entry_version_id,
                    v.version,
                    v.previous_version_id,
                    c.kind,
                    title,
                    text,
                    dumps_json(list(c.tags)),
                    c.slug,
                    int(c.important),
                    int(c.mandatory),
                    dumps_json(list(c.sources)),
                    dumps_json([a.to_dict() for a in c.artifacts]),
                    dumps_json([r.to_dict() for r in c.relations]),
                    v.entry_content_hash,
                    v.created_in_revision,
                    v.provenance.author,
                    v.provenance.surface,
                    v.provenance.created_at,
                )
            )
        if rows:
            later_many(
                self.engine.conn,
                f"INSERT INTO memory_entry_versions ({VERSION_COLUMNS}) VALUES ({self.dialect.marks(20)})",
                rows,
            )
        return rows

    def forget_cached(self, version_id: str) -> None:
        """Drop one decoded version from the cache (a purge rewrote its row; see sql/purge.py)."""
        self._version_cache.pop(version_id, None)

    def purge_generation(self) -> int:
        """How many purges the store has seen (in the current transaction's snapshot)."""
        value = self.meta(PURGE_GENERATION)
        return int(value) if value is not None else 0

    def bump_purge_generation(self) -> None:
        """Inside a purge's write transaction: every process's version cache is stale from its COMMIT on."""
        self.engine.lock("meta:" + PURGE_GENERATION)
        self.set_meta(PURGE_GENERATION, str(self.purge_generation() + 1))

    def _usable_cache(self) -> dict[str, EntryVersion]:
        """The version cache this snapshot may read and fill: the cache itself when its purge generation is the
        snapshot's (a newer generation replaces it with an empty one first, so a job still filling the old one
        fills a cache no one reads); a throwaway one for a snapshot older than a purge the cache has seen."""
        generation = self.purge_generation()
        if generation > self._cache_generation:
            self._version_cache = {}
            self._cache_generation = generation
        return self._version_cache if generation == self._cache_generation else {}

    def versions(self, memory_id: MemoryId | None, version_ids: Sequence[str]) -> list[EntryVersion]:
        """Versions by id, in the order asked (missing ones left out); only ``memory_id``'s when given."""
        if not version_ids:
            return []
        cache = self._usable_cache()
        hit = [cache.get(v) for v in version_ids]
        if all(v is not None and (memory_id is None or v.memory_id == memory_id) for v in hit):
            return [v for v in hit if v is not None]  # unchanged unless purged, and no purge since it was read
        found: list[EntryVersion] = []
        for i in range(0, len(version_ids), _BATCH):
            chunk = list(version_ids[i : i + _BATCH])
            sql = (
                f"SELECT {VERSION_COLUMNS} FROM memory_entry_versions "
                f"WHERE entry_version_id IN ({self.dialect.marks(len(chunk))})"
            )
            args: list[object] = list(chunk)
            if memory_id is not None:
                sql += f" AND {self.dialect.no_index('memory_artifact_id')} = ?"  # keep the planner on the key
                args.append(memory_id)
            found.extend(version_from_row(r) for r in self.q(sql, args))
        order = {vid: i for i, vid in enumerate(version_ids)}
        found.sort(key=lambda v: order[v.entry_version_id])
        if len(cache) > 50_000:
            cache.clear()
        for v in found:
            cache[v.entry_version_id] = v
        return found

    def hit_rows(self, memory_id: MemoryId, version_ids: Sequence[str]) -> list[tuple[Any, ...]]:
        """(entry_id, entry_version_id, content columns, entry_content_hash, created_at) of some versions of a
        Memory; the content columns are raw, in ``content_from_row``'s order (the caller decodes what it checks)."""
        if not version_ids:
            return []
        snap = snapshot_of(self.engine.conn)
        rows: list[Any] = []
        if snap is not None and memory_id in snap.scopes:
            # Rows a statement of this snapshot read ahead (PostgreSQL's ranking statement: its best candidates'),
            # the rest read now.
            ahead = [(v, snap.versions.get((memory_id, v), _UNREAD)) for v in version_ids]
            rows = [r for _, r in ahead if r is not None and r is not _UNREAD]
            version_ids = [v for v, r in ahead if r is _UNREAD]
        if version_ids:
            # In a kept snapshot the Memory's scope comes along: the search annotates its hits with it (``scopes_of``).
            scope = ", (SELECT scope FROM scope_bindings WHERE memory_id = ?)" if snap is not None else ""
            read = self.q(
                f"SELECT {HIT_COLUMNS}{scope} FROM memory_entry_versions "
                f"WHERE entry_version_id IN ({self.dialect.marks(len(version_ids))}) "
                f"AND {self.dialect.no_index('memory_artifact_id')} = ?",
                [*((memory_id,) if snap is not None else ()), *version_ids, memory_id],
            )
            if snap is not None and read:
                snap.scopes[memory_id] = read[0][14]
            rows += read
        return [(EntryId(r[0]), EntryVersionId(r[1]), tuple(r[2:12]), r[12], r[13]) for r in rows]

    def entry_versions(self, memory_id: MemoryId | None, entry_id: EntryId) -> list[EntryVersion]:
        if memory_id is None:
            rows = self.q(
                f"SELECT {VERSION_COLUMNS} FROM memory_entry_versions WHERE entry_id = ? ORDER BY version", (entry_id,)
            )
        else:
            rows = self.q(
                f"SELECT {VERSION_COLUMNS} FROM memory_entry_versions WHERE memory_artifact_id = ? AND entry_id = ? "
                "ORDER BY version",
                (memory_id, entry_id),
            )
        return [version_from_row(r) for r in rows]

    def iter_versions(self) -> Iterator[EntryVersion]:
        """Every version, oldest first within each entry (predecessors are seen before successors)."""
        for row in self.q(
            f"SELECT {VERSION_COLUMNS} FROM memory_entry_versions ORDER BY memory_artifact_id, entry_id, version"
        ):
            yield version_from_row(row)

    def head_versions_by_hash(
        self, memory_id: MemoryId, hashes: Sequence[str]
    ) -> tuple[int | None, list[EntryVersion]]:
        """The head revision of ``memory_id`` (None: no head) and its versions whose entry hash is one of ``hashes``,
        in one statement (a write's duplicate check: one round trip on a server engine)."""
        if not hashes:
            return None, []
        columns = ", ".join("v." + c.strip() for c in VERSION_COLUMNS.split(","))
        rows = self.q(
            f"SELECT h.revision, {columns} FROM artifact_heads h LEFT JOIN memory_entry_versions v "
            f"ON v.memory_artifact_id = ? AND v.entry_content_hash IN ({self.dialect.marks(len(hashes))}) "
            "WHERE h.artifact_id = ?",
            (memory_id, *hashes, memory_id),
        )
        if not rows:
            return None, []
        return int(rows[0][0]), [version_from_row(r[1:]) for r in rows if r[1] is not None]

    def versions_by_hash_ahead(self, memory_id: MemoryId, hashes: Sequence[str]) -> Callable[[], list[EntryVersion]]:
        """The reader of the versions of ``memory_id`` whose entry hash is one of ``hashes``. On an engine that can
        queue a read (``ahead``) the statement travels with the transaction's next one (a write's first: no round
        trip of its own); any other runs it now."""
        sql = (
            f"SELECT {VERSION_COLUMNS} FROM memory_entry_versions WHERE memory_artifact_id = ? "
            f"AND entry_content_hash IN ({self.dialect.marks(len(hashes))})"
        )
        args = (memory_id, *hashes)
        ahead = getattr(self.engine.conn, "ahead", None)
        if ahead is None:
            found = [version_from_row(r) for r in self.q(sql, args)]
            return lambda: found
        read: Callable[[], list[Any]] = ahead(sql, args)
        return lambda: [version_from_row(r) for r in read()]

    def version_number(self, version_id: EntryVersionId) -> int | None:
        found = self.versions(None, [version_id])
        return found[0].version if found else None

    # ---------------------------------------------------------------- sources, scopes, meta
    def sources(self, source_ids: Sequence[str]) -> list[Source]:
        if not source_ids:
            return []
        rows = self.q(
            "SELECT source_id, kind, uri, content, content_hash, created_at FROM sources "
            f"WHERE source_id IN ({self.dialect.marks(len(source_ids))})",
            list(source_ids),
        )
        return [
            Source(source_id=SourceId(r[0]), kind=r[1], uri=r[2], content=r[3], content_hash=r[4], created_at=r[5])
            for r in rows
        ]

    def put_source(self, source: Source) -> None:
        self.engine.conn.x(
            self.dialect.insert_ignore(
                "sources", ("source_id", "kind", "uri", "content", "content_hash", "created_at"), ("source_id",)
            ),
            (source.source_id, source.kind, source.uri, source.content, source.content_hash, source.created_at),
        )

    def scopes(self, scope: str | None) -> list[ScopeBinding]:
        if scope is None:
            rows = self.q("SELECT scope, memory_id, created_at FROM scope_bindings ORDER BY scope")
        else:
            rows = self.q("SELECT scope, memory_id, created_at FROM scope_bindings WHERE scope = ?", (scope,))
        return [ScopeBinding(r[0], MemoryId(r[1]), r[2]) for r in rows]

    def scopes_of(self, memory_ids: Sequence[str]) -> dict[str, str]:
        """The scope each of these Memories is bound to (unbound ones are absent): by the ``memory_id`` index,
        so a search annotates its hits without reading every binding of the store."""
        if not memory_ids:
            return {}
        snap = snapshot_of(self.engine.conn)
        if snap is not None and all(m in snap.scopes for m in memory_ids):
            return {m: s for m in memory_ids if (s := snap.scopes[m]) is not None}
        marks = self.dialect.marks(len(memory_ids))
        rows = self.q(f"SELECT memory_id, scope FROM scope_bindings WHERE memory_id IN ({marks})", tuple(memory_ids))
        return {str(m): str(s) for m, s in rows}

    def bind_scope(self, scope: str, memory_id: MemoryId, created_at: str) -> bool:
        """Bind a scope; False when it (or the Memory) is already bound."""
        sql = self.dialect.insert_ignore("scope_bindings", ("scope", "memory_id", "created_at"), ("scope",))
        if self.q("SELECT 1 FROM scope_bindings WHERE memory_id = ?", (memory_id,)):
            return False
        return self.engine.conn.x(sql, (scope, memory_id, created_at)) == 1

    def meta(self, key: str) -> str | None:
        if key in ROUTING_KEYS and snapshot_of(self.engine.conn) is not None:
            return self.routing_meta().get(key)
        rows = self.q("SELECT value FROM store_meta WHERE key = ?", (key,))
        return str(rows[0][0]) if rows else None

    def set_meta(self, key: str, value: str | None) -> None:
        if value is None:
            self.engine.conn.x("DELETE FROM store_meta WHERE key = ?", (key,))
            return
        self.engine.conn.x(self.dialect.upsert("store_meta", ("key", "value"), ("key",), ("value",)), (key, value))


__all__ = ["HIT_COLUMNS", "AuthorityRows", "dumps_json", "json_list", "loads_json", "stored_purge", "version_from_row"]
