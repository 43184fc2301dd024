"""The engine part interface: what an SQL engine supplies to :class:`~memstone.backends.sql.core.StoreCore`.

An engine is DDL, transactions, a full-text dialect and a vector codec. Everything else (every row-level
statement on the authority tables and projections, the write plan, search, verify, rebuild, vectors' bookkeeping,
migrations of the embedding model) is written once in ``backends/sql/`` against these parts. This interface is
stable: an engine outside this package implements it and builds its backend as ``StoreCore(engine)``.

The parts
---------

``Engine``
    Owns the connection(s) and the execution model (``run`` / ``run_short``: SQLite runs every job on one worker
    thread; a server engine runs jobs on a pool of threads, each with its own pooled connection). It opens the
    store (DDL and its own versioned migrations), and hands out transactions:

    - ``write_txn()``: a read-write transaction bound to the calling thread (``engine.conn`` inside it). Nested
      calls join the outer transaction. It commits when the block ends and rolls back on any exception.
    - ``read_txn()``: a read-only transaction that sees ONE snapshot for all its statements.
    - optionally ``read_once()``: statements outside a transaction, each its own snapshot, for a read whose first
      statement reads all it needs of what may change (what follows reads immutable rows: Revisions, manifest
      nodes): nothing to BEGIN or COMMIT. The core uses it for a write's duplicate check; an engine without it
      gives a ``read_txn``.
    - ``lock(key, shared=False)``: inside a write transaction, take the engine's own lock on ``key`` until the
      transaction ends (see the isolation contract below). An engine whose write transaction already serializes
      every write (SQLite's ``BEGIN IMMEDIATE``) makes this a no-op.
    - ``conflict(memory_id, base)``: a context manager around a commit that turns the engine's unique or
      serialization violation into ``RevisionConflictError`` (another writer won the head race).

``Conn`` (``engine.conn``)
    The statements of the current thread's transaction. SQL is written with ``?`` placeholders; the engine
    translates them to its driver's form. ``q`` fetches every row (tuples), ``x`` returns the row count,
    ``many`` runs one statement over many parameter rows, ``insert_id`` inserts one row and returns its
    generated integer key. Optionally ``snapshot``: a read-only transaction's :class:`Snapshot`. Optionally
    ``defer(sql, args)``: queue a statement whose result nobody reads; it runs
    before the connection's next statement (or the COMMIT), in order, in the same transaction, and its error is
    raised there (a server engine sends the queue in one network round trip with that statement). The core's
    statements whose results it does not read go through :func:`later` / :func:`later_many`. Optionally
    ``defer_one(sql, args)``: queue an UPDATE or INSERT that must change exactly one row; when it changes none, the
    transaction fails where the queue is sent, with the error ``conflict`` turns into ``RevisionConflictError``
    (the head's compare-and-swap travels with ``COMMIT``: :func:`later_one`).

``Dialect`` (``engine.dialect``)
    The SQL forms that differ between engines: upsert, insert-or-ignore, "a JSON array column holds this text",
    and how integers and booleans come back. The shared SQL uses only these plus plain SELECT/INSERT/UPDATE/DELETE
    with ``LIMIT ?``.

``FullText`` (``engine.fts``)
    Indexes the analyzer's tokens (``searchable_text`` of a projection row is Analyzer v1's tokens, space
    separated; the engine must not re-analyze them) and answers candidate queries with the caller's filters.
    ``put_head`` / ``drop_head`` run right after a head row is written / right before it is deleted (an engine
    that indexes by trigger does nothing there); the same for the archive projection. ``clear`` empties both
    projections and their indexes for a rebuild; ``check`` reports index damage.

``VectorCodec`` (``engine.vectors``, or None: no vector projection, ``Capabilities.vector`` is False)
    Stores and searches the vectors of the shared ``memory_entry_vector_metadata`` rows (keyed by
    ``vector_rowid``): ``create`` / ``drop`` the tables for one dimension (called from configuration and the
    model migration, never from an entry write), ``put`` / ``delete`` vectors, ``knn`` (exact when asked: the
    reference every fast path is checked against), and optionally ``begin`` a scan that overlaps the FTS
    statement of a hybrid search. ``staging`` keeps or drops the staging table of a model migration.

The isolation contract
----------------------

Every write is serializable against every other write that could conflict with it. The core takes, inside the
write transaction and before it reads what it decides on:

- ``memory:<id>`` (exclusive) for a commit, a bind or a vector write that touches that Memory's head,
  projections or vectors: two writes of one Memory never interleave; writes of different Memories run side by
  side. The head compare-and-swap (``UPDATE artifact_heads … WHERE revision = base``) still guards the head.
- ``scope:<uri>`` (exclusive) before binding a scope (a unique key on the scope also refuses a second binding).
- ``meta:<key>`` (exclusive) before changing store metadata (``kinds``, ``embedding_profile``, ``migration``,
  ``vector_generation``); every commit takes ``meta:migration`` shared, so a model migration's start and swap
  serialize against all writes, and writes among themselves do not.
- ``source:<id>`` (exclusive) before inserting a source (insert-or-ignore, then read back).

No DDL runs inside an entry write. Caches in the core hold only immutable rows (Revisions, entry versions,
manifest nodes) or state keyed by head revision, and change only after COMMIT.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol, TypeVar

from ...domain.errors import BackendError, MemstoneError
from ...domain.ids import EntryId, EntryVersionId, MemoryId
from ...domain.model import EntryVersion
from ...ports import Capabilities

T = TypeVar("T")
Row = Sequence[Any]  # a database row: loosely typed at this edge by design


@contextmanager
def driver_errors(
    kind: type[Exception] | tuple[type[Exception], ...], translate: Callable[[Any], MemstoneError]
) -> Iterator[None]:
    """An engine's error edge: a MemstoneError passes as it is; an error of the engine's driver (``kind``) is raised
    as the MemstoneError ``translate`` makes of it, chained to it. Nothing above the engine sees a driver error."""
    try:
        yield
    except MemstoneError:
        raise
    except kind as exc:
        raise translate(exc) from exc


class StaleStart(BackendError):
    """A write sent on the start state of an earlier write (``Routes.guarded_start``) found, after its locks, that
    the state had changed: the transaction rolled back having written nothing, and the write reads it and runs again.
    Never leaves the store core."""


class Conn(Protocol):
    """The statements of the calling thread's transaction (``?`` placeholders)."""

    def q(self, sql: str, args: Sequence[object] = ()) -> list[Any]: ...

    def x(self, sql: str, args: Sequence[object] = ()) -> int: ...

    def many(self, sql: str, rows: Sequence[Sequence[object]]) -> None: ...

    def insert_id(self, sql: str, args: Sequence[object], id_column: str) -> int: ...


def later(conn: Conn, sql: str, args: Sequence[object] = ()) -> None:
    """Run a statement whose result nobody reads: queued by an engine's connection that can (``defer``), so it
    travels with the next statement; run now by any other."""
    defer = getattr(conn, "defer", None)
    if defer is None:
        conn.x(sql, args)
    else:
        defer(sql, args)


def later_one(conn: Conn, sql: str, args: Sequence[object] = ()) -> bool:
    """Run an UPDATE or INSERT that must change exactly one row. An engine that can queue it (``defer_one``) sends
    it with the next trip and fails the transaction there when it changes none (``conflict`` raises
    ``RevisionConflictError``): True. Any other runs it now: whether it changed one row."""
    defer_one = getattr(conn, "defer_one", None)
    if defer_one is None:
        return conn.x(sql, args) == 1
    defer_one(sql, args)
    return True


class Snapshot:
    """What a read-only transaction has read so far, kept for its later statements (``snapshot_of``).

    A read transaction sees one snapshot, so a row it read stays true until it ends: a later read of the same rows
    takes them from here instead of costing a statement, and a statement may read ahead what the reads after it
    always ask for (a head read also reads the store's routing metadata; a nearest-neighbour statement also reads
    its windows' metadata; a hit's version read also reads its Memory's scope; PostgreSQL's ranking statement also
    reads its best candidates' version rows and their Memory's scope). An engine whose statements each
    cost a network round trip (PostgreSQL) gives each read-only transaction a fresh one; a write transaction, a
    ``read_once`` read (each statement its own snapshot) and an in-process engine have none.
    """

    __slots__ = ("heads", "meta", "scopes", "versions", "windows")

    def __init__(self) -> None:
        self.meta: dict[str, str] | None = None  # the routing rows of store_meta (``AuthorityRows.routing_meta``)
        self.heads: dict[str, int | None] = {}  # memory id -> head revision (None: no head)
        self.scopes: dict[str, str | None] = {}  # memory id -> the scope it is bound to (None: unbound)
        self.windows: dict[int, tuple[MemoryId, EntryId, EntryVersionId]] = {}  # vector_rowid -> its entry version
        # (memory id, entry version id) -> its ``AuthorityRows.hit_rows`` row (None: no such version of the Memory)
        self.versions: dict[tuple[str, str], tuple[Any, ...] | None] = {}


class ReadEnded(Exception):
    """A one-trip read (an engine's optional ``read_one_trip``) asked for a statement after its first trip, which
    ended its transaction: nothing it read may be used; the read runs again in a ``read_txn``."""


def snapshot_of(conn: Conn) -> Snapshot | None:
    """The read-only transaction's :class:`Snapshot` on this connection, or None (no reads kept)."""
    found: Snapshot | None = getattr(conn, "snapshot", None)
    return found


# The parameters of one queued multi-row INSERT at most (PostgreSQL's protocol allows 65,535 per statement).
ROW_PARAMS = 30_000


def later_many(conn: Conn, sql: str, rows: Sequence[Sequence[object]]) -> None:
    """:func:`later` for one statement over many parameter rows (``Conn.many`` on an engine that cannot queue). An
    engine that queues (``defer``) gets an ``INSERT … VALUES (?, …)`` as one statement of many rows (up to
    ``ROW_PARAMS`` parameters each): a write's manifest nodes cost its client and server one statement, not one
    each; any other statement is queued once per row."""
    defer = getattr(conn, "defer", None)
    if defer is None:
        conn.many(sql, rows)
        return
    if not rows:
        return
    one = f"({','.join('?' * len(rows[0]))})"
    head, found, tail = sql.partition(f" VALUES {one}")
    if not found or "?" in tail or "?" in head:
        for row in rows:
            defer(sql, row)
        return
    step = max(1, ROW_PARAMS // len(rows[0]))
    for at in range(0, len(rows), step):
        chunk = rows[at : at + step]
        defer(f"{head} VALUES {', '.join([one] * len(chunk))}{tail}", [v for row in chunk for v in row])


class Dialect:
    """SQL forms shared by SQLite and PostgreSQL (``ON CONFLICT``); other engines override what differs."""

    name = "sql"

    def marks(self, n: int) -> str:
        return ",".join("?" * n)

    def column(self, name: str) -> str:
        """A column's name as this engine's statements write it (MySQL mode quotes it)."""
        return name

    def insert_into(self, table: str, columns: Sequence[str], verb: str = "INSERT") -> str:
        """``INSERT INTO table (columns) VALUES (?, …)``, the start of every insert form below."""
        return f"{verb} INTO {table} ({', '.join(map(self.column, columns))}) VALUES ({self.marks(len(columns))})"

    def upsert(self, table: str, columns: Sequence[str], key: Sequence[str], update: Sequence[str]) -> str:
        """INSERT that replaces ``update`` columns of the row with the same ``key``."""
        sets = ", ".join(f"{c} = excluded.{c}" for c in update)
        return f"{self.insert_into(table, columns)} ON CONFLICT ({', '.join(key)}) DO UPDATE SET {sets}"

    def insert_ignore(self, table: str, columns: Sequence[str], key: Sequence[str]) -> str:
        """INSERT that does nothing when a row with the same ``key`` exists (row count 0)."""
        return f"{self.insert_into(table, columns)} ON CONFLICT ({', '.join(key)}) DO NOTHING"

    def insert_ignore_columns(
        self, table: str, columns: Sequence[str], key: Sequence[str], rows: Sequence[Sequence[object]]
    ) -> tuple[str, list[object]] | None:
        """``insert_ignore`` of many rows as one statement of one parameter a column (an engine that binds arrays:
        its text and parameter count stay the same however many rows); None where the engine has no such form
        (``later_many`` sends the rows as ``VALUES`` lists)."""
        return None

    def no_index(self, column: str) -> str:
        """``column`` in a condition the planner should not pick an index for (SQLite: ``+column``)."""
        return column

    def json_array_has(self, column: str) -> str:
        """A condition with one ``?``: the JSON array of strings in ``column`` holds that string."""
        return f"EXISTS (SELECT 1 FROM json_each({column}) WHERE json_each.value = ?)"


class FtsRow(NamedTuple):
    """A full-text candidate of the head projection, best first. ``key`` is its ``projection_id``."""

    memory_id: MemoryId
    entry_id: EntryId
    entry_version_id: EntryVersionId
    entry_content_hash: str
    key: int
    score: float  # the engine's relevance (higher is better)
    text: str | None = None  # the row's searchable text, when the engine read it anyway (else the core reads it)


class ArchiveRow(NamedTuple):
    memory_id: MemoryId
    entry_id: EntryId
    entry_version_id: EntryVersionId
    searchable_text: str
    score: float = 0.0  # the engine's relevance (higher is better; BM25 for SQLite)


class Candidates(NamedTuple):
    """A full-text question: the best ``depth`` head rows of ``memory_ids`` that match any of ``terms`` and pass
    every ``where`` condition (on the head row, alias ``h``; ``args`` fill their placeholders in order). ``page``:
    the hits a lexical-only search serves of them (an engine that reads the hits' versions ahead may read only those
    of the candidates that can reach it; None: any candidate may)."""

    memory_ids: Sequence[str]
    terms: Sequence[str]
    depth: int
    where: Sequence[str] = ()
    args: Sequence[object] = ()
    page: int | None = None


class FullText(Protocol):
    """The engine's full-text dialect over the analyzer's tokens."""

    def put_head(self, conn: Conn, version: EntryVersion, text: str) -> None: ...

    def drop_head(self, conn: Conn, memory_id: MemoryId, entry_id: EntryId) -> None: ...

    def head_candidates(self, conn: Conn, ask: Candidates) -> list[FtsRow]:
        """Top ``ask.depth`` head rows (alias ``h``) matching any of ``ask.terms`` and every ``ask.where`` condition."""
        ...

    def put_archive(self, conn: Conn, version: EntryVersion, text: str) -> None: ...

    def archive_candidates(
        self, conn: Conn, memory_ids: Sequence[str], terms: Sequence[str], depth: int
    ) -> list[ArchiveRow]: ...

    def clear(self, conn: Conn) -> None:
        """Delete every head and archive projection row and reset their indexes (inside a rebuild)."""
        ...

    def check(self, conn: Conn) -> list[str]:
        """Damage of the engine's full-text indexes, as readable lines."""
        ...


class Nearest(NamedTuple):
    """A question to the vector codec: the ``k`` windows of ``memory_ids`` nearest to ``vector``.

    ``exact`` asks for the reference scan; ``generation`` is the store's vector generation (an in-process index
    built under another generation is stale).
    """

    memory_ids: Sequence[str]
    vector: tuple[float, ...]
    k: int
    generation: str
    exact: bool = False


class VectorCodec(Protocol):
    """The engine's vector storage for the shared metadata rows (``vector_rowid`` keys).

    Four optional methods, looked up by name: ``read(conn, rowids) -> {rowid: vector}`` returns stored vectors
    (``memstone copy`` carries them; every engine in this package has it), ``check_dimension(dimension)``
    raises when the engine cannot index a profile of that size (a model migration asks before embedding), and
    ``share(conn)`` is called at the start of a hybrid search's read transaction, before its first statement, so
    that ``begin`` can run the scan beside the FTS statement (PostgreSQL: on a second connection, same snapshot);
    ``prefetch(conn, ask)``, called there before a vector search's first statement, may send ``ask``'s statement
    along with it, for the ``knn`` that asks the same. An
    optional attribute ``exists_sql``: an SQL expression (no parameters) with the value of ``exists``, so a write
    reads it in its first statement instead of a round trip of its own (an engine without it is asked).
    """

    def exists(self, conn: Conn) -> bool:
        """Whether the vector tables exist (a store that never recorded a profile has none)."""
        ...

    def create(self, conn: Conn, dimension: int) -> None:
        """Create the metadata and vector tables for ``dimension`` (idempotent)."""
        ...

    def drop(self, conn: Conn) -> None:
        """Drop the metadata and vector tables (the model migration's swap recreates them)."""
        ...

    def put(self, conn: Conn, rowid: int, memory_id: MemoryId, vector: tuple[float, ...]) -> None: ...

    def delete(self, conn: Conn, rowids: Sequence[int]) -> None: ...

    def present(self, conn: Conn) -> set[int]:
        """The rowids that have a stored vector (verify: a metadata row without one is damage)."""
        ...

    def knn(self, conn: Conn, ask: Nearest) -> list[tuple[float, int]]:
        """The ``k`` nearest windows as (L2 distance, rowid), nearest first; ``exact`` is the reference scan."""
        ...

    def begin(self, conn: Conn, ask: Nearest) -> Callable[[], list[tuple[float, int]]] | None:
        """Start a non-exact scan that finishes after the FTS statement (None: ``knn`` runs later)."""
        ...

    def staging(self, conn: Conn, *, keep: bool) -> None:
        """Create (``keep``) or drop the model migration's staging table ``memory_vector_staging``
        (entry_version_id, chunk, memory_artifact_id, entry_id, vector: float32 little-endian bytes)."""
        ...

    def close(self) -> None: ...


# What an engine offers whose store is persistent, shared by processes and searched by words, vectors and both
# (PostgreSQL, OceanBase, LanceDB); an engine states what it adds or lacks with ``dataclasses.replace``.
SHARED_HYBRID = Capabilities(fts=True, vector=True, hybrid=True, concurrent_processes=True, persistent=True)


class Engine(Protocol):
    """One database engine: connections, execution model, DDL and migrations, and the parts above."""

    @property
    def dialect(self) -> Dialect: ...

    @property
    def fts(self) -> FullText: ...

    @property
    def vectors(self) -> VectorCodec | None: ...

    @property
    def capabilities(self) -> Capabilities: ...

    @property
    def schema_version(self) -> int: ...

    @property
    def conn(self) -> Conn:
        """The calling thread's transaction connection (only inside ``write_txn`` / ``read_txn``)."""
        ...

    def write_txn(self) -> AbstractContextManager[None]: ...

    def read_txn(self) -> AbstractContextManager[None]: ...

    def lock(self, key: str, *, shared: bool = False) -> None: ...

    def conflict(self, memory_id: str, base: int) -> AbstractContextManager[None]: ...

    async def run(self, fn: Callable[..., T], *args: object) -> T:
        """Run a synchronous job off the event loop (the engine's executor)."""
        ...

    async def run_short(self, fn: Callable[..., T], *args: object) -> T:
        """A bounded read-only job: an engine may run it on the caller's thread when that costs no waiting."""
        ...

    def open_sync(self, migrate: Migrator) -> tuple[int, ...]:
        """Connect, create or migrate the schema; returns the migration versions applied by this open.

        Runs on the engine's executor (``StoreCore.open`` calls it through ``run``)."""
        ...

    async def aclose(self) -> None:
        """Close every connection and stop the executor (after the last job)."""
        ...


class Migrator(Protocol):
    """What an engine's data migrations may call on the core (inside the migration's write transaction)."""

    def rebuild_archive(self) -> None: ...


@dataclass(frozen=True, slots=True)
class VectorMeta:
    """Metadata of one stored vector window, binding it to an exact entry version and profile."""

    memory_id: MemoryId
    entry_id: EntryId
    entry_version_id: EntryVersionId
    chunk: int
    chunk_count: int
    entry_content_hash: str
    embedding_content_hash: str
    profile_id: str


__all__ = [
    "SHARED_HYBRID",
    "ArchiveRow",
    "Candidates",
    "Conn",
    "Dialect",
    "Engine",
    "FtsRow",
    "FullText",
    "Migrator",
    "Nearest",
    "Row",
    "Snapshot",
    "VectorCodec",
    "VectorMeta",
    "driver_errors",
    "later",
    "later_many",
    "later_one",
    "snapshot_of",
]
