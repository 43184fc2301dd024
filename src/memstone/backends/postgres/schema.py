"""PostgreSQL DDL and its versioned migrations (run on open and by ``memstone migrate``).

The same tables as every engine (``backends/sql`` writes their rows), with PostgreSQL types; authority tables
refuse UPDATE and DELETE by trigger. Full text: a posting table of Analyzer v1's tokens per head row (the BM25 of
``fts.py``), with per-Memory statistics; the archive has its own posting table. Vectors: the shared metadata table
plus a pgvector table of one dimension with an HNSW index, created when a store records its embedding profile.

``store_meta.schema_version`` names the last migration applied; each step runs in one transaction with the bump,
under an advisory lock so that two processes opening one new database never race.

1. Authority, projections, full-text postings, vector metadata and the migration's staging table.
2. The store bundle's principals: ``auth_principals``, ``auth_tokens`` (hashes only), ``auth_grants``.
3. Governed maintenance: the scope lease, the digest ledger, run, proposal and event records (``seq`` orders them).
4. Capture: the review queue and the store's settings.
5. Purge tombstones (``memory_purges``) and the append-only trigger that lets a purge's UPDATE through.
6. Postings keyed by the head row's ``projection_id`` (a bigint) instead of its two text ids: the posting heap and
   its term index are what a write touches at random, and at 100k entries they outgrew a 1 GB buffer pool.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...domain.errors import CapabilityNotSupportedError
from ..sql.ddl import (
    IMMUTABLE_TABLES,
    POSTGRES,
    archive_table,
    auth_tables,
    authority_tables,
    capture_tables,
    head_table,
    maintenance_tables,
)
from .purge import TOMBSTONES

BASE = (
    authority_tables(POSTGRES)
    + """CREATE INDEX IF NOT EXISTS idx_memory_entry_versions_slug
    ON memory_entry_versions (memory_artifact_id, slug, kind) WHERE slug IS NOT NULL;
CREATE INDEX IF NOT EXISTS idx_memory_entry_versions_linked
    ON memory_entry_versions (memory_artifact_id) WHERE relations <> '[]';

CREATE OR REPLACE FUNCTION memstone_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '% is append-only', TG_TABLE_NAME;
END $$;

"""
    + head_table(POSTGRES)
    + """CREATE INDEX IF NOT EXISTS idx_memory_entry_heads_slug
    ON memory_entry_heads (memory_artifact_id, kind, slug) WHERE slug IS NOT NULL;

-- Full text: one row per (head row, analyzer token) with its term frequency and the row's token count (dl);
-- the empty term '' marks every indexed row (so a row with no token still counts), and per-Memory totals feed
-- BM25's N and average length. Rows are keyed by (memory, entry) like the head row they index.
CREATE TABLE IF NOT EXISTS memory_entry_postings (
    memory_artifact_id text NOT NULL,
    entry_id text NOT NULL,
    term text NOT NULL,
    tf integer NOT NULL,
    dl integer NOT NULL,
    PRIMARY KEY (memory_artifact_id, entry_id, term)
);
CREATE INDEX IF NOT EXISTS idx_memory_entry_postings_term
    ON memory_entry_postings (term) INCLUDE (memory_artifact_id, entry_id, tf, dl);
CREATE TABLE IF NOT EXISTS memory_fts_stats (
    memory_artifact_id text PRIMARY KEY,
    docs bigint NOT NULL,
    total_len bigint NOT NULL
);

"""
    + archive_table(POSTGRES)
    + """CREATE TABLE IF NOT EXISTS memory_entry_archive_postings (
    entry_version_id text NOT NULL,
    memory_artifact_id text NOT NULL,
    term text NOT NULL,
    tf integer NOT NULL,
    PRIMARY KEY (entry_version_id, term)
);
CREATE INDEX IF NOT EXISTS idx_memory_entry_archive_postings_term
    ON memory_entry_archive_postings (term, memory_artifact_id);

CREATE TABLE IF NOT EXISTS memory_entry_vector_metadata (
    vector_rowid bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    memory_artifact_id text NOT NULL,
    entry_id text NOT NULL,
    entry_version_id text NOT NULL,
    chunk integer NOT NULL,
    chunk_count integer NOT NULL,
    entry_content_hash text NOT NULL,
    embedding_content_hash text NOT NULL,
    profile_id text NOT NULL,
    UNIQUE (entry_version_id, chunk)
);
CREATE INDEX IF NOT EXISTS idx_vector_metadata_entry ON memory_entry_vector_metadata (memory_artifact_id, entry_id);
CREATE TABLE IF NOT EXISTS memory_vector_staging (
    entry_version_id text NOT NULL,
    chunk integer NOT NULL,
    memory_artifact_id text NOT NULL,
    entry_id text NOT NULL,
    vector bytea NOT NULL,
    PRIMARY KEY (entry_version_id, chunk)
);
"""
)


AUTH = auth_tables(POSTGRES)


MAINTENANCE = maintenance_tables(POSTGRES)


CAPTURE = capture_tables(POSTGRES)


def immutability_triggers() -> str:
    out = []
    for table in IMMUTABLE_TABLES:
        out.append(
            f"CREATE OR REPLACE TRIGGER trg_{table}_append_only BEFORE UPDATE OR DELETE ON {table} "
            "FOR EACH ROW EXECUTE FUNCTION memstone_append_only();"
        )
    return "\n".join(out)


VECTOR_MAX = 2000  # pgvector's HNSW indexes ``vector`` (float32) up to 2,000 dimensions
HALFVEC_MAX = 4000  # and ``halfvec`` (float16) up to 4,000


def vector_type(dimension: int) -> str:
    """The pgvector type a profile of ``dimension`` is stored as: ``vector`` up to 2,000 dimensions, ``halfvec``
    (half the bytes, float16 precision) up to 4,000; more is refused, since HNSW cannot index it."""
    if not 1 <= dimension <= HALFVEC_MAX:
        raise CapabilityNotSupportedError(
            "vector",
            f"a {dimension}-dimension embedding profile cannot be indexed on PostgreSQL: pgvector's HNSW takes at "
            f"most {VECTOR_MAX} dimensions as vector and {HALFVEC_MAX} as halfvec",
            hint=f"choose a model of at most {HALFVEC_MAX} dimensions (or one that can be shortened to it)",
        )
    return "vector" if dimension <= VECTOR_MAX else "halfvec"


def vector_ddl(dimension: int, table: str = "memory_entry_vectors") -> str:
    """The pgvector table of one dimension and its HNSW index (L2 on unit vectors, like every engine).

    ``memory_entry_vectors`` holds the store profile's vectors; ``memory_entry_vectors_d<dimension>`` those of the
    organizations whose own profile has that dimension (``backends/sql/routes.py``)."""
    kind = vector_type(dimension)
    return f"""
CREATE TABLE IF NOT EXISTS {table} (
    vector_rowid bigint PRIMARY KEY,
    memory_artifact_id text NOT NULL,
    embedding {kind}({dimension}) NOT NULL
);
CREATE INDEX IF NOT EXISTS idx_{table}_hnsw ON {table}
    USING hnsw (embedding {kind}_l2_ops) WITH (m = 16, ef_construction = 64);
CREATE INDEX IF NOT EXISTS idx_{table}_memory ON {table} (memory_artifact_id);
"""


# The posting table of migration 1 rebuilt keyed by the head row's projection_id (which an upsert of the head row
# keeps): 8 bytes instead of ~60 of two text ids in the heap and in both indexes; the row index is on projection_id
# alone (deduplicated by the B-tree: a row's postings share one key). Postings of no head row are not carried.
POSTINGS_BY_PROJECTION = """
CREATE TABLE memory_entry_postings_v6 (
    projection_id bigint NOT NULL,
    term text NOT NULL,
    tf integer NOT NULL,
    dl integer NOT NULL
);
INSERT INTO memory_entry_postings_v6 (projection_id, term, tf, dl)
    SELECT h.projection_id, p.term, p.tf, p.dl FROM memory_entry_postings p
    JOIN memory_entry_heads h ON h.memory_artifact_id = p.memory_artifact_id AND h.entry_id = p.entry_id;
DROP TABLE memory_entry_postings;
ALTER TABLE memory_entry_postings_v6 RENAME TO memory_entry_postings;
CREATE INDEX idx_memory_entry_postings_row ON memory_entry_postings (projection_id);
CREATE INDEX idx_memory_entry_postings_term ON memory_entry_postings (term) INCLUDE (projection_id, tf, dl);
UPDATE memory_fts_stats s SET (docs, total_len) = (SELECT count(*), coalesce(sum(p.dl), 0)
    FROM memory_entry_heads h JOIN memory_entry_postings p ON p.projection_id = h.projection_id AND p.term = ''
    WHERE h.memory_artifact_id = s.memory_artifact_id);
"""


# A store written one ``remember`` at a time is never vacuumed by a bulk operation's upkeep (``service/settle.py``):
# autovacuum's insert threshold (1,000 rows + 20 % of the table by default) left the newest postings of a 100k
# store, 15 % of its pages, without the visibility map, so the BM25 statement's index-only scans of the term index
# read those postings' heap rows too (7,316 heap fetches in one query, issue 13). The posting table is vacuumed
# after 2 % of it is new instead; such a vacuum reads only the pages not yet all-visible.
POSTINGS_AUTOVACUUM = """
ALTER TABLE memory_entry_postings SET (autovacuum_vacuum_insert_scale_factor = 0.02);
"""


@dataclass(frozen=True, slots=True)
class Migration:
    version: int
    summary: str
    ddl: str


MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "authority, projections, full-text postings, vector metadata", BASE + immutability_triggers()),
    Migration(2, "principals: auth tables", AUTH),
    Migration(3, "maintenance: scope lease, digest ledger, runs, proposals and events", MAINTENANCE),
    Migration(4, "capture: the review queue and the store's settings", CAPTURE),
    Migration(5, "purge tombstones", TOMBSTONES),
    Migration(6, "full-text postings keyed by the head row's projection id", POSTINGS_BY_PROJECTION),
    Migration(7, "the posting table vacuumed after 2 % of new rows (its visibility map)", POSTINGS_AUTOVACUUM),
)
LATEST = MIGRATIONS[-1].version
