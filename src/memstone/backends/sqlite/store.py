"""The embedded default backend: one SQLite file through apsw (bundled SQLite, FTS5, sqlite-vec), WAL mode."""

from __future__ import annotations

import json
import struct
import zlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import apsw

from ...domain.canonical import canonical_json
from ...domain.errors import BackendUnavailable, InvalidInput, NotFound
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
from ...ports import Capabilities, EmbeddingProfile, ScopeBinding, SearchRequest
from ..base import DatabaseMemoryBackend, HeadRow, HitRow, VectorCandidate, VectorRow, loads_json
from ..url import StoreURL, parse_store_url
from . import migrations, schema
from .errors import translated
from .options import (
    SYNCHRONOUS,
    StoreOptions,
    fts_integrity,
    must_open_read_only,
    read_only_refusal,
    read_only_uri,
    split_url,
)
from .records import SQLiteRecordsMixin

MIN_SQLITE = (3, 38, 0)
DEFAULT_BUSY_TIMEOUT_MS = 15_000

_VERSION_COLUMNS = (
    "memory_artifact_id, entry_id, entry_version_id, version, previous_version_id, kind, title, text, tags, slug, "
    "important, mandatory, source_refs, artifact_refs, relations, entry_content_hash, created_in_revision, author, "
    "surface, created_at"
)
_REVISION_COLUMNS = (
    "artifact_id, revision, content, content_hash, manifest_root, entry_count, active_count, lineage, author, "
    "surface, created_at"
)


def _json_list(text: str) -> list[Any]:
    """A stored JSON array (most are empty, which needs no parse)."""
    if text == "[]":
        return []
    value = loads_json(text)
    assert isinstance(value, list)
    return value


def _version_from_row(row: Sequence[Any]) -> EntryVersion:
    artifacts = _json_list(row[13])
    relations = _json_list(row[14])
    tags = _json_list(row[8])
    sources = _json_list(row[12])
    return EntryVersion(
        memory_id=MemoryId(row[0]),
        entry_id=EntryId(row[1]),
        entry_version_id=EntryVersionId(row[2]),
        version=row[3],
        previous_version_id=row[4],
        content=EntryContent(
            kind=row[5],
            title=row[6],
            text=row[7],
            tags=tuple(tags),
            slug=row[9],
            important=bool(row[10]),
            mandatory=bool(row[11]),
            sources=tuple(SourceId(s) for s in sources),
            artifacts=tuple(ArtifactRef(memory_id=MemoryId(a["memory_id"]), revision=a["revision"]) for a in artifacts),
            relations=tuple(Relation(kind=r["kind"], target=EntryId(r["target"])) for r in relations),
        ),
        entry_content_hash=row[15],
        created_in_revision=row[16],
        provenance=Provenance(author=row[17], surface=row[18], created_at=row[19]),
    )


def _revision_from_row(row: Sequence[Any]) -> Revision:
    content = loads_json(row[2])
    lineage = loads_json(row[7])
    assert isinstance(content, dict) and isinstance(lineage, dict)
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
        revision=row[1],
        content_hash=row[3],
        manifest_root=row[4],
        entry_count=row[5],
        active_count=row[6],
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


def _json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


class VectorIndex:
    """One Memory's vector windows as a float32 matrix, for exact nearest-neighbour search in process.

    Rows live in buffers that grow by doubling, so adding the windows of one write costs O(rows added), not a
    copy of the whole matrix (a search after every write on a 100k Memory would otherwise copy ~150 MB each time).
    """

    def __init__(self, generation: str) -> None:
        import numpy as np

        self._np = np
        self.generation = generation
        self.revision = -1
        self.max_rowid = 0
        self._n = 0
        self._buf: Any = None  # (capacity, dim) float32; rows [0, _n) are live data
        self._rowid_buf = np.zeros(0, dtype=np.int64)
        self._alive_buf = np.zeros(0, dtype=bool)
        self._by_entry: dict[str, list[int]] = {}

    def _reserve(self, extra: int, dim: int) -> None:
        np = self._np
        need = self._n + extra
        capacity = 0 if self._buf is None else len(self._buf)
        if need <= capacity:
            return
        capacity = max(need, 2 * capacity, 1024)
        buf = np.empty((capacity, dim), dtype=np.float32)
        rowids = np.zeros(capacity, dtype=np.int64)
        alive = np.zeros(capacity, dtype=bool)
        if self._buf is not None:
            buf[: self._n] = self._buf[: self._n]
            rowids[: self._n] = self._rowid_buf[: self._n]
            alive[: self._n] = self._alive_buf[: self._n]
        self._buf, self._rowid_buf, self._alive_buf = buf, rowids, alive

    def add(self, rows: list[Any]) -> None:
        np = self._np
        if not rows:
            return
        vectors = np.frombuffer(b"".join(bytes(r[2]) for r in rows), dtype=np.float32).reshape(len(rows), -1)
        self._reserve(len(rows), vectors.shape[1])
        start, end = self._n, self._n + len(rows)
        self._buf[start:end] = vectors
        self._rowid_buf[start:end] = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        self._alive_buf[start:end] = True
        self._n = end
        fresh: dict[str, list[int]] = {}
        for i, r in enumerate(rows):
            fresh.setdefault(r[1], []).append(start + i)
        for entry_id, positions in fresh.items():
            for old in self._by_entry.get(entry_id, ()):
                self._alive_buf[old] = False  # a newer window set of this entry replaces the older one
            self._by_entry[entry_id] = positions
        self.max_rowid = int(self._rowid_buf[end - 1])

    def nearest(self, vector: tuple[float, ...], k: int) -> list[tuple[float, int]]:
        """The ``k`` nearest live rows as (L2 distance, rowid), nearest first. Pure numpy: it releases the GIL,
        so it can run on another thread while the caller's thread runs an SQL statement."""
        np = self._np
        n_rows = self._n
        if self._buf is None or n_rows == 0:
            return []
        alive = self._alive_buf[:n_rows]
        live = int(alive.sum())
        if live == 0:
            return []
        q = np.asarray(vector, dtype=np.float32)
        # einsum, not BLAS: one memory-bound pass on the calling thread. OpenBLAS would start its own threads,
        # which on a small machine fight the embedding model's and the agents' for the same cores.
        sims = np.einsum("ij,j->i", self._buf[:n_rows], q)
        sims[~alive] = -np.inf
        n = min(k, live)
        top = np.argpartition(-sims, n - 1)[:n] if n < n_rows else np.arange(n_rows)
        top = top[np.isfinite(sims[top])]
        # Unit vectors: squared L2 distance = 2 - 2 cos; report L2 like sqlite-vec.
        dist = np.sqrt(np.maximum(0.0, 2.0 - 2.0 * sims[top]))
        return sorted(zip(dist.tolist(), self._rowid_buf[top].tolist(), strict=True))


def _vec_extension_path() -> str:
    """The sqlite-vec loadable extension, found without importing its package (whose init imports numpy)."""
    import importlib.util

    spec = importlib.util.find_spec("sqlite_vec")
    if spec is None or not spec.submodule_search_locations:
        raise BackendUnavailable("the sqlite-vec package is not installed", hint="pip install sqlite-vec==0.1.9")
    return str(Path(next(iter(spec.submodule_search_locations))) / "vec0")


def parse_sqlite_url(url: str) -> str:
    """The file path (or ``:memory:``) a ``sqlite:`` URL names; other URLs are refused with the correct form."""
    parsed = parse_store_url(url)
    if parsed.scheme != "sqlite":
        raise InvalidInput(f"{url!r} is not a SQLite store URL", hint="write sqlite:///path/to/memstone.db")
    return parsed.path


async def open_sqlite(url: StoreURL, *, create: bool = True) -> SQLiteMemoryBackend:
    """The ``sqlite`` engine's opener (what ``open_store`` calls for a ``sqlite:`` URL)."""
    _, options = split_url(url.url)
    return await SQLiteMemoryBackend(url.path, options=options, create=create).open()


class SQLiteMemoryBackend(SQLiteRecordsMixin, DatabaseMemoryBackend):
    """SQLite + FTS5 + sqlite-vec through apsw. Many processes may share one file."""

    def __init__(
        self,
        path: str,
        *,
        busy_timeout_ms: int = DEFAULT_BUSY_TIMEOUT_MS,
        options: StoreOptions | None = None,
        create: bool = True,
    ) -> None:
        super().__init__()
        self.path = path
        self.options = options or StoreOptions()
        self.read_only = self.options.read_only
        self._create = create
        self._busy_timeout_ms = busy_timeout_ms
        self._conn: apsw.Connection | None = None
        self._scan_pool: ThreadPoolExecutor | None = None  # hybrid search's vector scan, beside the FTS statement
        self.vec_version: str | None = None
        self._revision_cache: dict[tuple[str, int], Revision] = {}
        self._version_cache: dict[str, EntryVersion] = {}
        self._vector_indexes: dict[MemoryId, VectorIndex] = {}
        self._caps = Capabilities(
            fts=True,
            vector=True,  # sqlite-vec is loaded and probed at open; a store uses it once it records a profile
            hybrid=True,
            concurrent_processes=path != ":memory:",
            persistent=path != ":memory:",
        )

    @property
    def capabilities(self) -> Capabilities:
        return self._caps

    # ---------------------------------------------------------------- lifecycle
    async def open(self) -> SQLiteMemoryBackend:
        await self._run(self._open_sync)
        return self

    def _open_sync(self) -> None:
        if (
            apsw.sqlite_lib_version().split(".")[:3]
            and tuple(int(x) for x in apsw.sqlite_lib_version().split(".")[:3]) < MIN_SQLITE
        ):
            raise BackendUnavailable(f"SQLite {apsw.sqlite_lib_version()} is older than 3.38.0")
        self.read_only = self.options.read_only or must_open_read_only(self.path)
        if self.path != ":memory:":
            if not self._create and not Path(self.path).exists():
                # Trigger: a read-only command (list, search, show, verify, ...) on a path with no store.
                # Why: opening it would create an empty database, so a typo'd path looked like an empty store.
                # Outcome: NotFound naming the file; nothing is created.
                raise NotFound(
                    f"no memstone store at {self.path}",
                    hint="check --url / MEMSTONE_URL; a write (memstone remember) creates a new store",
                )
            if self._create and not self.read_only:
                Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        with translated(path=self.path):
            if self.read_only:
                conn = apsw.Connection(read_only_uri(self.path), flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI)
            else:
                conn = apsw.Connection(self.path)
            conn.set_busy_timeout(self._busy_timeout_ms)
            self._conn = conn
            self._load_vec_sync(conn)
            conn.execute("PRAGMA foreign_keys = ON")
            if self.path != ":memory:" and not self.read_only:
                mode = conn.execute("PRAGMA journal_mode = WAL").fetchall()[0][0]
                if str(mode).lower() != "wal":
                    raise BackendUnavailable(f"could not switch {self.path} to WAL mode (got {mode})")
            # An acknowledged write is durable by default: FULL syncs the WAL at every commit (see .options).
            conn.execute(f"PRAGMA synchronous = {SYNCHRONOUS[self.options.durability]}")
            self._migrate_sync(conn)
            self._recorded_profile = self._vector_profile_sync()

    def _load_vec_sync(self, conn: apsw.Connection) -> None:
        """Load sqlite-vec and prove it works with an insert/search/delete probe (RFC: never trust a flag)."""
        conn.enable_load_extension(True)
        conn.load_extension(_vec_extension_path())
        conn.enable_load_extension(False)
        self.vec_version = str(conn.execute("SELECT vec_version()").fetchall()[0][0])
        conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.vec_probe USING vec0(embedding float[2])")
        conn.execute("INSERT INTO temp.vec_probe (rowid, embedding) VALUES (1, '[1.0, 0.0]')")
        found = conn.execute("SELECT rowid FROM temp.vec_probe WHERE embedding MATCH '[1.0, 0.0]' AND k = 1").fetchall()
        conn.execute("DELETE FROM temp.vec_probe WHERE rowid = 1")
        conn.execute("DROP TABLE temp.vec_probe")
        if found != [(1,)]:
            raise BackendUnavailable("sqlite-vec loaded but its probe query failed")

    def _migrate_sync(self, conn: apsw.Connection) -> None:
        if migrations.stored_version(conn) == migrations.LATEST:
            return  # opening an up-to-date store takes no write lock
        if self.read_only:
            # Trigger: a read-only open (?mode=ro, a read-only file) of a store an older release wrote.
            # Why: migrating writes; reads of the authority work on every version this code knows.
            # Outcome: open it as it is; the next read-write open (or `memstone migrate`) migrates it.
            return
        self.applied_migrations = migrations.migrate(self)

    def _close_sync(self) -> None:
        if self._scan_pool is not None:
            self._scan_pool.shutdown(wait=True)
            self._scan_pool = None
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    @property
    def conn(self) -> apsw.Connection:
        if self._conn is None:
            raise BackendUnavailable("the SQLite store is not open")
        return self._conn

    def _q(self, sql: str, args: Sequence[object] | None = None) -> list[Any]:
        """Run a query and fetch every row (rows are loosely typed at this edge by design)."""
        return self.conn.execute(sql, args).fetchall()

    def _schema_version(self) -> int:
        return migrations.LATEST

    def meta(self, key: str) -> str | None:
        rows = self._q("SELECT value FROM store_meta WHERE key = ?", (key,))
        return str(rows[0][0]) if rows else None

    # ---------------------------------------------------------------- transactions
    @contextmanager
    def _write_txn(self) -> Iterator[None]:
        conn = self.conn
        if conn.in_transaction:
            yield
            return
        if self.read_only:
            raise read_only_refusal(self.path)
        with translated():
            conn.execute("BEGIN IMMEDIATE")
        try:
            with translated():
                yield
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        with translated():
            conn.execute("COMMIT")

    @contextmanager
    def _read_txn(self) -> Iterator[None]:
        conn = self.conn
        if conn.in_transaction:
            yield
            return
        with translated():
            conn.execute("BEGIN")
        try:
            with translated():
                yield
        finally:
            if conn.in_transaction:
                conn.execute("COMMIT")

    def _commit_sync(self, plan: Any) -> Revision:
        with translated(plan.memory_id, base=plan.base_revision):
            return super()._commit_sync(plan)

    # ---------------------------------------------------------------- authority
    def _head_sync(self, memory_id: MemoryId) -> Revision | None:
        rows = self._q("SELECT revision FROM artifact_heads WHERE artifact_id = ?", (memory_id,))
        return self._revision_sync(memory_id, rows[0][0]) if rows else None

    def _revision_sync(self, memory_id: MemoryId, revision: int) -> Revision | None:
        key = (memory_id, revision)
        cached = self._revision_cache.get(key)
        if cached is not None:
            return cached  # Revisions are immutable, so a decoded one never goes stale
        rows = self._q(
            f"SELECT {_REVISION_COLUMNS} FROM artifact_revisions WHERE artifact_id = ? AND revision = ?",
            (memory_id, revision),
        )
        if not rows:
            return None
        found = _revision_from_row(rows[0])
        if len(self._revision_cache) > 4096:
            self._revision_cache.clear()
        self._revision_cache[key] = found
        return found

    def _revisions_sync(self, memory_id: MemoryId, first: int, last: int) -> list[Revision]:
        rows = self._q(
            f"SELECT {_REVISION_COLUMNS} FROM artifact_revisions WHERE artifact_id = ? AND revision BETWEEN ? AND ? "
            "ORDER BY revision",
            (memory_id, first, last),
        )
        return [_revision_from_row(r) for r in rows]

    def _raw_revisions_sync(self) -> Iterator[tuple[Revision, str]]:
        for row in self._q(f"SELECT {_REVISION_COLUMNS} FROM artifact_revisions ORDER BY artifact_id, revision"):
            yield _revision_from_row(row), row[2]

    def _heads_sync(self) -> list[Revision]:
        rows = self._q(
            f"SELECT {', '.join('r.' + c.strip() for c in _REVISION_COLUMNS.split(','))} FROM artifact_heads h "
            "JOIN artifact_revisions r ON r.artifact_id = h.artifact_id AND r.revision = h.revision "
            "ORDER BY h.artifact_id"
        )
        return [_revision_from_row(r) for r in rows]

    def _load_node_sync(self, node_hash: str) -> bytes:
        rows = self._q("SELECT body FROM manifest_nodes WHERE node_hash = ?", (node_hash,))
        if not rows:
            raise KeyError(f"manifest node {node_hash} is missing")
        body = rows[0][0]
        return zlib.decompress(body) if isinstance(body, bytes) else body.encode("utf-8")

    def _load_nodes_sync(self, node_hashes: Sequence[str]) -> dict[str, bytes]:
        out: dict[str, bytes] = {}
        for i in range(0, len(node_hashes), 500):
            chunk = node_hashes[i : i + 500]
            rows = self._q(
                f"SELECT node_hash, body FROM manifest_nodes WHERE node_hash IN ({','.join('?' * len(chunk))})", chunk
            )
            for h, body in rows:
                out[h] = zlib.decompress(body) if isinstance(body, bytes) else body.encode("utf-8")
        missing = [h for h in node_hashes if h not in out]
        if missing:
            raise KeyError(f"manifest node {missing[0]} is missing")
        return out

    def _insert_revision_sync(self, revision: Revision, content: str) -> None:
        lineage = _json({"sources": list(revision.sources), "artifacts": [a.to_dict() for a in revision.artifacts]})
        self.conn.execute(
            f"INSERT INTO artifact_revisions ({_REVISION_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
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

    def _insert_nodes_sync(self, nodes: Mapping[str, bytes]) -> None:
        if nodes:
            # Bodies are stored zlib-compressed; node hashes cover the uncompressed canonical bytes.
            self.conn.executemany(
                "INSERT OR IGNORE INTO manifest_nodes (node_hash, body) VALUES (?, ?)",
                [(h, zlib.compress(raw, 6)) for h, raw in nodes.items()],
            )

    def _insert_versions_sync(self, versions: Sequence[EntryVersion]) -> None:
        rows = []
        for v in versions:
            c = v.content
            rows.append(
                (
                    v.memory_id,
                    v.entry_id,
                    v.entry_version_id,
                    v.version,
                    v.previous_version_id,
                    c.kind,
                    c.title,
                    c.text,
                    _json(list(c.tags)),
                    c.slug,
                    int(c.important),
                    int(c.mandatory),
                    _json(list(c.sources)),
                    _json([a.to_dict() for a in c.artifacts]),
                    _json([r.to_dict() for r in c.relations]),
                    v.entry_content_hash,
                    v.created_in_revision,
                    v.provenance.author,
                    v.provenance.surface,
                    v.provenance.created_at,
                )
            )
        if rows:
            self.conn.executemany(
                f"INSERT INTO memory_entry_versions ({_VERSION_COLUMNS}) VALUES ({', '.join('?' * 20)})", rows
            )

    def _cas_head_sync(self, memory_id: MemoryId, base: int, new: int) -> bool:
        if base == 0:
            self.conn.execute("INSERT INTO artifact_heads (artifact_id, revision) VALUES (?, ?)", (memory_id, new))
            return True
        self.conn.execute(
            "UPDATE artifact_heads SET revision = ? WHERE artifact_id = ? AND revision = ?", (new, memory_id, base)
        )
        return self.conn.changes() == 1

    def _hit_rows_sync(self, memory_id: MemoryId, version_ids: Sequence[str]) -> list[HitRow]:
        if not version_ids:
            return []
        rows = self._q(
            "SELECT entry_id, entry_version_id, kind, title, text, tags, slug, important, mandatory, "
            "source_refs, artifact_refs, relations, entry_content_hash, created_at FROM memory_entry_versions "
            f"WHERE entry_version_id IN ({','.join('?' * len(version_ids))}) AND +memory_artifact_id = ?",
            [*version_ids, memory_id],
        )
        return [
            HitRow(
                EntryId(r[0]),
                EntryVersionId(r[1]),
                EntryContent(
                    kind=r[2],
                    title=r[3],
                    text=r[4],
                    tags=tuple(_json_list(r[5])),
                    slug=r[6],
                    important=bool(r[7]),
                    mandatory=bool(r[8]),
                    sources=tuple(SourceId(s) for s in _json_list(r[9])),
                    artifacts=tuple(
                        ArtifactRef(memory_id=MemoryId(a["memory_id"]), revision=a["revision"])
                        for a in _json_list(r[10])
                    ),
                    relations=tuple(Relation(kind=x["kind"], target=EntryId(x["target"])) for x in _json_list(r[11])),
                ),
                r[12],
                r[13],
            )
            for r in rows
        ]

    def _versions_sync(self, memory_id: MemoryId | None, version_ids: Sequence[str]) -> list[EntryVersion]:
        if not version_ids:
            return []
        cache = self._version_cache
        hit = [cache.get(v) for v in version_ids]
        if all(v is not None and (memory_id is None or v.memory_id == memory_id) for v in hit):
            return [v for v in hit if v is not None]  # entry versions are immutable: a decoded one never changes
        marks = ",".join("?" * len(version_ids))
        sql = f"SELECT {_VERSION_COLUMNS} FROM memory_entry_versions WHERE entry_version_id IN ({marks})"
        args: list[object] = list(version_ids)
        if memory_id is not None:
            sql += " AND +memory_artifact_id = ?"  # unary + keeps the planner on the primary key
            args.append(memory_id)
        rows = self._q(sql, args)
        order = {vid: i for i, vid in enumerate(version_ids)}
        found = sorted((_version_from_row(r) for r in rows), key=lambda v: order[v.entry_version_id])
        if len(cache) > 50_000:
            cache.clear()
        for v in found:
            cache[v.entry_version_id] = v
        return found

    def _entry_versions_sync(self, memory_id: MemoryId | None, entry_id: EntryId) -> list[EntryVersion]:
        if memory_id is None:
            rows = self._q(
                f"SELECT {_VERSION_COLUMNS} FROM memory_entry_versions WHERE entry_id = ? ORDER BY version", (entry_id,)
            )
        else:
            rows = self._q(
                f"SELECT {_VERSION_COLUMNS} FROM memory_entry_versions WHERE memory_artifact_id = ? AND entry_id = ? "
                "ORDER BY version",
                (memory_id, entry_id),
            )
        return [_version_from_row(r) for r in rows]

    def _iter_versions_sync(self) -> Iterator[EntryVersion]:
        # Oldest first within each entry, so predecessors are seen before successors.
        cursor: Iterator[Any] = self.conn.execute(
            f"SELECT {_VERSION_COLUMNS} FROM memory_entry_versions ORDER BY memory_artifact_id, entry_id, version"
        )
        for row in cursor:
            yield _version_from_row(row)

    def _versions_by_hash_sync(self, memory_id: MemoryId, hashes: Sequence[str]) -> list[EntryVersion]:
        if not hashes:
            return []
        marks = ",".join("?" * len(hashes))
        rows = self._q(
            f"SELECT {_VERSION_COLUMNS} FROM memory_entry_versions WHERE memory_artifact_id = ? "
            f"AND entry_content_hash IN ({marks})",
            (memory_id, *hashes),
        )
        return [_version_from_row(r) for r in rows]

    def _sources_sync(self, source_ids: Sequence[str]) -> list[Source]:
        if not source_ids:
            return []
        marks = ",".join("?" * len(source_ids))
        rows = self._q(
            f"SELECT source_id, kind, uri, content, content_hash, created_at FROM sources WHERE source_id IN ({marks})",
            list(source_ids),
        )
        return [
            Source(source_id=SourceId(r[0]), kind=r[1], uri=r[2], content=r[3], content_hash=r[4], created_at=r[5])
            for r in rows
        ]

    def _put_source_sync(self, source: Source) -> None:
        self.conn.execute(
            "INSERT INTO sources (source_id, kind, uri, content, content_hash, created_at) VALUES (?,?,?,?,?,?)",
            (source.source_id, source.kind, source.uri, source.content, source.content_hash, source.created_at),
        )

    def _scope_sync(self, scope: str | None) -> list[ScopeBinding]:
        if scope is None:
            rows = self._q("SELECT scope, memory_id, created_at FROM scope_bindings ORDER BY scope")
        else:
            rows = self._q("SELECT scope, memory_id, created_at FROM scope_bindings WHERE scope = ?", (scope,))
        return [ScopeBinding(r[0], MemoryId(r[1]), r[2]) for r in rows]

    def _bind_scope_sync(self, scope: str, memory_id: MemoryId, created_at: str) -> bool:
        self.conn.execute(
            "INSERT OR IGNORE INTO scope_bindings (scope, memory_id, created_at) VALUES (?, ?, ?)",
            (scope, memory_id, created_at),
        )
        return self.conn.changes() == 1

    # ---------------------------------------------------------------- vectors
    # One sqlite-vec table of exact float vectors, partitioned by Memory, keyed by the metadata row's id. Searches
    # run on an in-process numpy copy of a Memory's vectors (VectorIndex); sqlite-vec's exact scan is the reference.
    def _vector_tables_exist_sync(self) -> bool:
        return bool(self._q("SELECT 1 FROM sqlite_master WHERE name = 'memory_entry_vector_metadata'"))

    def _vector_profile_sync(self) -> EmbeddingProfile | None:
        raw = self._q("SELECT value FROM store_meta WHERE key = 'embedding_profile'")
        if not raw:
            return None
        data = loads_json(raw[0][0])
        assert isinstance(data, dict)
        return EmbeddingProfile(
            profile_id=data["profile_id"],
            model=data["model"],
            dimension=int(data["dimension"]),
            distance=data["distance"],
            normalization=data["normalization"],
        )

    def _record_vector_profile_sync(self, profile: EmbeddingProfile) -> None:
        self.conn.execute(schema.vector_ddl(profile.dimension))
        self.conn.execute(
            "INSERT INTO store_meta (key, value) VALUES ('embedding_profile', ?) "
            "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (canonical_json(profile.canonical()),),
        )

    def _replace_vector_tables_sync(self, profile: EmbeddingProfile) -> None:
        for table in schema.VECTOR_TABLES:
            self.conn.execute(f"DROP TABLE IF EXISTS {table}")
        self._record_vector_profile_sync(profile)
        self._bump_vector_generation_sync()

    def _vector_generation_sync(self) -> str:
        rows = self._q("SELECT value FROM store_meta WHERE key = 'vector_generation'")
        return str(rows[0][0]) if rows else "0"

    def _bump_vector_generation_sync(self) -> None:
        self.conn.execute(
            "INSERT INTO store_meta (key, value) VALUES ('vector_generation', '1') "
            "ON CONFLICT (key) DO UPDATE SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT)"
        )

    def _put_vectors_sync(self, row: VectorRow, vectors: tuple[tuple[float, ...], ...]) -> None:
        (vec,) = vectors
        self.conn.execute(
            "INSERT INTO memory_entry_vector_metadata (memory_artifact_id, entry_id, entry_version_id, chunk, "
            "chunk_count, entry_content_hash, embedding_content_hash, profile_id) VALUES (?,?,?,?,?,?,?,?)",
            (
                row.memory_id,
                row.entry_id,
                row.entry_version_id,
                row.chunk,
                row.chunk_count,
                row.entry_content_hash,
                row.embedding_content_hash,
                row.profile_id,
            ),
        )
        rowid = self.conn.last_insert_rowid()
        blob = struct.pack(f"<{len(vec)}f", *vec)
        self.conn.execute(
            "INSERT INTO memory_entry_search_vector (rowid, memory_artifact_id, embedding) VALUES (?, ?, ?)",
            (rowid, row.memory_id, blob),
        )

    def _drop_vectors_sync(self, memory_id: MemoryId, entry_id: EntryId) -> None:
        if self.vector_profile is None and not self._vector_tables_exist_sync():
            return
        rows = self._q(
            "SELECT vector_rowid FROM memory_entry_vector_metadata WHERE memory_artifact_id = ? AND entry_id = ?",
            (memory_id, entry_id),
        )
        for (rowid,) in rows:
            self.conn.execute("DELETE FROM memory_entry_search_vector WHERE rowid = ?", (rowid,))
        if rows:
            self.conn.execute(
                "DELETE FROM memory_entry_vector_metadata WHERE memory_artifact_id = ? AND entry_id = ?",
                (memory_id, entry_id),
            )

    def _vector_begin_sync(
        self, memory_ids: Sequence[str], vector: tuple[float, ...], k: int, *, exact: bool
    ) -> Callable[[], list[VectorCandidate]] | None:
        if exact:
            return None
        # Bring the indexes up to date here (SQL, this thread), then scan them on the scan thread while this
        # thread runs the FTS statement; no write can touch them before the search calls the finisher.
        indexes = [self._vector_index(MemoryId(mid)) for mid in memory_ids]
        if self._scan_pool is None:
            self._scan_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="memstone-vector-scan")
        future = self._scan_pool.submit(lambda: [hit for index in indexes for hit in index.nearest(vector, k)])
        return lambda: self._resolve_windows(future.result(), k)

    def _vector_knn_sync(
        self, memory_ids: Sequence[str], vector: tuple[float, ...], k: int, *, exact: bool
    ) -> list[VectorCandidate]:
        blob = struct.pack(f"<{len(vector)}f", *vector)
        scored: list[tuple[float, int]] = []
        for mid in memory_ids:
            if exact:
                # The reference: sqlite-vec's exact scan of the float table.
                rows = self._q(
                    "SELECT rowid, distance FROM memory_entry_search_vector WHERE embedding MATCH ? AND k = ? "
                    "AND memory_artifact_id = ?",
                    (blob, k, mid),
                )
                scored.extend((float(d), int(rowid)) for rowid, d in rows)
            else:
                scored.extend(self._vector_index(MemoryId(mid)).nearest(vector, k))
        return self._resolve_windows(scored, k)

    def _resolve_windows(self, scored: list[tuple[float, int]], k: int) -> list[VectorCandidate]:
        """The ``k`` nearest (distance, rowid) windows as candidates bound to their entry versions."""
        scored.sort()
        scored = scored[:k]
        if not scored:
            return []
        meta = {
            r[0]: r
            for r in self._q(
                "SELECT vector_rowid, memory_artifact_id, entry_id, entry_version_id FROM "
                f"memory_entry_vector_metadata WHERE vector_rowid IN ({','.join('?' * len(scored))})",
                [rowid for _, rowid in scored],
            )
        }
        out = []
        for distance, rowid in scored:
            m = meta.get(rowid)
            if m is not None:
                out.append(VectorCandidate(MemoryId(m[1]), EntryId(m[2]), EntryVersionId(m[3]), distance))
        return out

    def _vector_index(self, memory_id: MemoryId) -> VectorIndex:
        """The in-process index of a Memory's vectors, brought up to date with the store in this transaction.

        sqlite-vec 0.1.9 scans exactly and without SIMD (about 50 ms at 100k x 384 here), so searches use a
        numpy matrix of the same float32 vectors instead (exact as well: the same distances, a BLAS product).
        Rows are append-only (AUTOINCREMENT rowids): new windows since the last search are read by rowid range;
        a new window of an entry retires that entry's older windows; a deactivated entry's leftover rows are
        filtered by the authoritative manifest re-check above. Backfill, migration and rebuild bump the
        vector generation, which rebuilds the index.
        """
        generation = self._vector_generation_sync()
        index = self._vector_indexes.get(memory_id)
        if index is None or index.generation != generation:
            index = VectorIndex(generation)
            self._vector_indexes[memory_id] = index
        head = self._head_sync(memory_id)
        revision = head.revision if head is not None else 0
        if index.revision != revision or index.max_rowid == 0:
            if index.max_rowid == 0:
                # First build: one scan of the Memory's partition (point lookups would cost ~80 us a row).
                entries = {
                    r[0]: r[1]
                    for r in self._q(
                        "SELECT vector_rowid, entry_id FROM memory_entry_vector_metadata WHERE memory_artifact_id = ?",
                        (memory_id,),
                    )
                }
                scan = self._q(
                    "SELECT rowid, embedding FROM memory_entry_search_vector WHERE memory_artifact_id = ?",
                    (memory_id,),
                )
                rows = sorted((r[0], entries[r[0]], r[1]) for r in scan if r[0] in entries)
            else:
                rows = self._q(
                    "SELECT m.vector_rowid, m.entry_id, v.embedding FROM memory_entry_vector_metadata m "
                    "JOIN memory_entry_search_vector v ON v.rowid = m.vector_rowid "
                    "WHERE m.memory_artifact_id = ? AND m.vector_rowid > ? ORDER BY m.vector_rowid",
                    (memory_id, index.max_rowid),
                )
            index.add(rows)
            index.revision = revision
        return index

    def _head_matches_sync(self, cand: VectorCandidate, request: SearchRequest) -> bool:
        where = ["h.memory_artifact_id = ?", "h.entry_id = ?"]
        args: list[object] = [cand.memory_id, cand.entry_id]
        self._filters(request, where, args)
        return bool(self._q(f"SELECT 1 FROM memory_entry_heads h WHERE {' AND '.join(where)}", args))

    def _vector_incomplete_sync(self, memory_id: MemoryId, profile_id: str, limit: int) -> list[HeadRow]:
        if not self._vector_tables_exist_sync():
            return list(self._head_rows_sync(memory_id))[:limit]
        rows = self._q(
            "SELECT h.memory_artifact_id, h.entry_id, h.entry_version_id, h.entry_content_hash, '' "
            "FROM memory_entry_heads h WHERE h.memory_artifact_id = ? AND NOT EXISTS ("
            "SELECT 1 FROM memory_entry_vector_metadata m WHERE m.memory_artifact_id = h.memory_artifact_id "
            "AND m.entry_id = h.entry_id AND m.entry_version_id = h.entry_version_id "
            "AND m.entry_content_hash = h.entry_content_hash AND m.chunk = 0 AND m.profile_id = ?) LIMIT ?",
            (memory_id, profile_id, limit),
        )
        return [HeadRow(MemoryId(r[0]), EntryId(r[1]), EntryVersionId(r[2]), r[3], r[4]) for r in rows]

    def _migration_sync(self) -> dict[str, object] | None:
        rows = self._q("SELECT value FROM store_meta WHERE key = 'migration'")
        if not rows:
            return None
        data = loads_json(rows[0][0])
        assert isinstance(data, dict)
        return data

    def _set_migration_sync(self, value: dict[str, object] | None) -> None:
        if value is None:
            self.conn.execute("DELETE FROM store_meta WHERE key = 'migration'")
            self.conn.execute("DROP TABLE IF EXISTS memory_vector_staging")
            return
        self.conn.execute(
            "INSERT INTO store_meta (key, value) VALUES ('migration', ?) "
            "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (_json(value),),
        )
        self.conn.execute(
            "CREATE TABLE IF NOT EXISTS memory_vector_staging (entry_version_id TEXT NOT NULL, chunk INTEGER NOT NULL, "
            "memory_artifact_id TEXT NOT NULL, entry_id TEXT NOT NULL, vector BLOB NOT NULL, "
            "PRIMARY KEY (entry_version_id, chunk)) STRICT"
        )

    def _unstaged_sync(self, limit: int) -> list[tuple[MemoryId, EntryVersionId]]:
        rows = self._q(
            "SELECT h.memory_artifact_id, h.entry_version_id FROM memory_entry_heads h WHERE NOT EXISTS "
            "(SELECT 1 FROM memory_vector_staging s WHERE s.entry_version_id = h.entry_version_id) "
            "ORDER BY h.projection_id LIMIT ?",
            (limit,),
        )
        return [(MemoryId(r[0]), EntryVersionId(r[1])) for r in rows]

    def _stage_sync(self, version: EntryVersion, vectors: tuple[tuple[float, ...], ...]) -> None:
        self.conn.execute("DELETE FROM memory_vector_staging WHERE entry_version_id = ?", (version.entry_version_id,))
        self.conn.executemany(
            "INSERT INTO memory_vector_staging (entry_version_id, chunk, memory_artifact_id, entry_id, vector) "
            "VALUES (?,?,?,?,?)",
            [
                (version.entry_version_id, i, version.memory_id, version.entry_id, struct.pack(f"<{len(v)}f", *v))
                for i, v in enumerate(vectors)
            ],
        )

    def _staged_sync(self) -> Iterator[tuple[EntryVersionId, tuple[tuple[float, ...], ...]]]:
        grouped: dict[str, list[tuple[float, ...]]] = {}
        for vid, _chunk, blob in self._q(
            "SELECT entry_version_id, chunk, vector FROM memory_vector_staging ORDER BY entry_version_id, chunk"
        ):
            grouped.setdefault(vid, []).append(struct.unpack(f"<{len(blob) // 4}f", blob))
        for vid, vecs in grouped.items():
            yield EntryVersionId(vid), tuple(vecs)

    def _vector_rows_sync(self) -> Iterator[VectorRow]:
        if not self._vector_tables_exist_sync():
            return
        for r in self._q(
            "SELECT memory_artifact_id, entry_id, entry_version_id, chunk, chunk_count, entry_content_hash, "
            "embedding_content_hash, profile_id, vector_rowid, "
            "(SELECT count(*) FROM memory_entry_search_vector v WHERE v.rowid = m.vector_rowid), 1 "
            "FROM memory_entry_vector_metadata m ORDER BY vector_rowid"
        ):
            if r[9] != 1 or r[10] != 1:
                # A metadata row with no vector: report it as a row whose hash cannot match.
                yield VectorRow(MemoryId(r[0]), EntryId(r[1]), EntryVersionId(r[2]), r[3], r[4], r[5], "", r[7])
            else:
                yield VectorRow(MemoryId(r[0]), EntryId(r[1]), EntryVersionId(r[2]), r[3], r[4], r[5], r[6], r[7])

    # ---------------------------------------------------------------- projections
    def _put_projection_sync(self, revision: int, version: EntryVersion, text: str) -> None:
        c = version.content
        self.conn.execute(
            "INSERT INTO memory_entry_heads (memory_artifact_id, head_revision, entry_id, entry_version_id, "
            "entry_content_hash, searchable_text, kind, slug, tags, important, mandatory, updated_at) "
            "VALUES (?,?,?,?,?,?,?,?,?,?,?,?) "
            "ON CONFLICT (memory_artifact_id, entry_id) DO UPDATE SET head_revision = excluded.head_revision, "
            "entry_version_id = excluded.entry_version_id, entry_content_hash = excluded.entry_content_hash, "
            "searchable_text = excluded.searchable_text, kind = excluded.kind, slug = excluded.slug, "
            "tags = excluded.tags, important = excluded.important, mandatory = excluded.mandatory, "
            "updated_at = excluded.updated_at",
            (
                version.memory_id,
                revision,
                version.entry_id,
                version.entry_version_id,
                version.entry_content_hash,
                text,
                c.kind,
                c.slug,
                _json(list(c.tags)),
                int(c.important),
                int(c.mandatory),
                version.provenance.created_at,
            ),
        )

    def _drop_projection_sync(self, memory_id: MemoryId, entry_id: EntryId) -> None:
        self.conn.execute(
            "DELETE FROM memory_entry_heads WHERE memory_artifact_id = ? AND entry_id = ?", (memory_id, entry_id)
        )

    def _head_rows_sync(self, memory_id: MemoryId | None) -> Iterator[HeadRow]:
        sql = (
            "SELECT memory_artifact_id, entry_id, entry_version_id, entry_content_hash, searchable_text "
            "FROM memory_entry_heads"
        )
        args: tuple[object, ...] = ()
        if memory_id is not None:
            sql += " WHERE memory_artifact_id = ?"
            args = (memory_id,)
        for r in self._q(sql + " ORDER BY projection_id", args):
            yield HeadRow(MemoryId(r[0]), EntryId(r[1]), EntryVersionId(r[2]), r[3], r[4])

    def _clear_projections_sync(self) -> None:
        # A damaged FTS index cannot be trusted to accept per-row deletes, so drop and recreate it (and its
        # triggers) in this same transaction; re-inserted head rows repopulate it through the triggers.
        for trigger in ("trg_heads_fts_insert", "trg_heads_fts_delete", "trg_heads_fts_update"):
            self.conn.execute(f"DROP TRIGGER IF EXISTS {trigger}")
        self.conn.execute("DROP TABLE IF EXISTS memory_entry_search_fts")
        self.conn.execute("DELETE FROM memory_entry_heads")
        self.conn.execute(schema.PROJECTIONS)

    def _fts_check_sync(self) -> list[str]:
        found = self._fts_integrity_sync("memory_entry_search_fts")
        return [f"full-text index does not match the head projection: {found}"] if found else []

    def _fts_integrity_sync(self, table: str) -> str | None:
        """FTS5's integrity check of ``table``, never written inside this connection's read snapshot."""
        found = fts_integrity(
            self.conn, self.path, (table,), read_only=self.read_only, busy_timeout_ms=self._busy_timeout_ms
        )
        return found.get(table)

    def _fts_candidates_sync(
        self, memory_ids: Sequence[str], terms: Sequence[str], depth: int, request: SearchRequest, with_text: bool
    ) -> list[HeadRow]:
        # Raw user input never reaches MATCH: only analyzer tokens, each quoted as a string.
        match = " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)
        where = [f"h.memory_artifact_id IN ({','.join('?' * len(memory_ids))})"]
        args: list[object] = [match, *memory_ids]
        self._filters(request, where, args)
        args.append(depth)
        # The text is read for the top rows only: in the ranked statement, SQLite's sorter would materialize
        # every matching row's text before the LIMIT (a common word matches thousands of long entries).
        rows = self._q(
            "SELECT h.memory_artifact_id, h.entry_id, h.entry_version_id, h.entry_content_hash, h.projection_id, "
            "f.rank FROM memory_entry_search_fts f CROSS JOIN memory_entry_heads h ON h.projection_id = f.rowid "
            f"WHERE memory_entry_search_fts MATCH ? AND {' AND '.join(where)} ORDER BY f.rank LIMIT ?",
            args,
        )
        texts: dict[int, str] = {}
        if with_text and rows:
            ids = [r[4] for r in rows]
            texts = dict(
                self._q(
                    "SELECT projection_id, searchable_text FROM memory_entry_heads "
                    f"WHERE projection_id IN ({','.join('?' * len(ids))})",
                    ids,
                )
            )
        # FTS5's rank is bm25() negated (k1 = 1.2, b = 0.75, fixed by the engine; one column, so no weights).
        return [
            HeadRow(MemoryId(r[0]), EntryId(r[1]), EntryVersionId(r[2]), r[3], texts.get(r[4], ""), -float(r[5]))
            for r in rows
        ]

    @staticmethod
    def _filters(request: SearchRequest, where: list[str], args: list[object]) -> None:
        if request.kinds:
            where.append(f"h.kind IN ({','.join('?' * len(request.kinds))})")
            args.extend(request.kinds)
        if request.important is not None:
            where.append("h.important = ?")
            args.append(int(request.important))
        if request.mandatory is not None:
            where.append("h.mandatory = ?")
            args.append(int(request.mandatory))
        for tag in request.tags:
            where.append("EXISTS (SELECT 1 FROM json_each(h.tags) WHERE json_each.value = ?)")
            args.append(tag)


__all__ = ["SQLiteMemoryBackend", "parse_sqlite_url"]
