"""OceanBase (MySQL mode) DDL, after the RFC's "OceanBase adapter" section, and the schema migrations.

Differences from the RFC's reference DDL, each found on seekdb 1.4.0 (OceanBase 4.3.5.3):

- ``CHARACTER SET ascii`` does not exist there (only ``utf8mb4`` and ``binary``): ids and hashes are
  ``utf8mb4_bin`` VARCHARs (still byte-compared; the engine only ever writes ASCII into them).
- The SPACE parser's defaults drop tokens shorter than 3 characters (``min_token_size=3``), which would lose
  Analyzer v1 terms such as ``ui`` or ``uv``: the index sets ``min_token_size=1`` (``max_token_size`` is capped at
  84; longer tokens and the parser's built-in English stopwords are found by a substring scan, see fts.py).
- ``searchable_text`` is MEDIUMTEXT: 8192 bytes of CJK text analyze to up to ~19 bytes a character.
- Vectors: the head row carries an entry's first (usually only) embedding window in ``embedding_d{dim}`` with the
  HNSW index, as the RFC shows; the few long entries that need more windows keep windows 2.. in
  ``memory_vector_windows_d{dim}``. The binding of each window to its entry version, content hash and profile
  is the store core's ``memory_entry_vector_metadata`` row (``embedding_rowid`` names it), not a column of the
  head row. Vector columns and tables are named by dimension and created on a connection of their own, never
  inside a transaction (vectors.py), so a model migration swaps profiles in one DML transaction.
- Tables are index-organized (the default): the HNSW index of a HEAP table lagged ~0.2 s (up to 2 s under load)
  behind each write on seekdb, an index-organized table's a few ms (up to 50 ms). Either way the vector channel
  also scans the rows whose vectors were written in the last ``vector_fresh_window_s`` exactly
  (``embedding_written_at``), so a search always sees the writes before it (docs/engines/oceanbase.md).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ...domain.errors import CapabilityNotSupportedError

ID = "VARCHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin"
HASH = "VARCHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin"
TEXT = "CHARACTER SET utf8mb4 COLLATE utf8mb4_bin"
FTS_PARSER = "WITH PARSER SPACE PARSER_PROPERTIES=(min_token_size=1, max_token_size=84)"
MAX_TOKEN = 84

AUTHORITY: tuple[str, ...] = (
    f"""CREATE TABLE IF NOT EXISTS store_meta (
    `key` VARCHAR(64) {TEXT} NOT NULL,
    value LONGTEXT {TEXT} NOT NULL,
    PRIMARY KEY (`key`))""",
    f"""CREATE TABLE IF NOT EXISTS store_locks (
    lock_key VARCHAR(600) {TEXT} NOT NULL,
    PRIMARY KEY (lock_key))""",
    f"""CREATE TABLE IF NOT EXISTS artifact_revisions (
    artifact_id {ID} NOT NULL,
    revision BIGINT NOT NULL,
    family VARCHAR(64) {TEXT} NOT NULL DEFAULT 'memory',
    content LONGTEXT {TEXT} NOT NULL,
    content_hash {HASH} NOT NULL,
    manifest_root {HASH} NOT NULL,
    entry_count BIGINT NOT NULL,
    active_count BIGINT NOT NULL,
    lineage LONGTEXT {TEXT} NOT NULL,
    author VARCHAR(512) {TEXT},
    surface VARCHAR(64) {TEXT} NOT NULL,
    created_at VARCHAR(64) {TEXT} NOT NULL,
    PRIMARY KEY (artifact_id, revision))""",
    f"""CREATE TABLE IF NOT EXISTS artifact_heads (
    artifact_id {ID} NOT NULL,
    revision BIGINT NOT NULL,
    PRIMARY KEY (artifact_id),
    CONSTRAINT fk_artifact_heads_revision FOREIGN KEY (artifact_id, revision)
        REFERENCES artifact_revisions (artifact_id, revision))""",
    f"""CREATE TABLE IF NOT EXISTS manifest_nodes (
    node_hash {HASH} NOT NULL,
    body LONGBLOB NOT NULL,
    PRIMARY KEY (node_hash))""",
    f"""CREATE TABLE IF NOT EXISTS memory_entry_versions (
    memory_artifact_id {ID} NOT NULL,
    entry_id {ID} NOT NULL,
    entry_version_id {ID} NOT NULL,
    version BIGINT NOT NULL,
    previous_version_id {ID},
    kind VARCHAR(128) {TEXT} NOT NULL,
    title TEXT {TEXT},
    text TEXT {TEXT} NOT NULL,
    tags LONGTEXT {TEXT} NOT NULL,
    slug VARCHAR(128) {TEXT},
    important TINYINT NOT NULL,
    mandatory TINYINT NOT NULL,
    source_refs LONGTEXT {TEXT} NOT NULL,
    artifact_refs LONGTEXT {TEXT} NOT NULL,
    relations LONGTEXT {TEXT} NOT NULL,
    entry_content_hash {HASH} NOT NULL,
    created_in_revision BIGINT NOT NULL,
    author VARCHAR(512) {TEXT},
    surface VARCHAR(64) {TEXT} NOT NULL,
    created_at VARCHAR(64) {TEXT} NOT NULL,
    PRIMARY KEY (entry_version_id),
    UNIQUE KEY uk_memory_entry_versions_number (memory_artifact_id, entry_id, version),
    UNIQUE KEY uk_memory_entry_versions_identity (memory_artifact_id, entry_id, entry_version_id),
    KEY idx_memory_entry_versions_hash (memory_artifact_id, entry_content_hash),
    KEY idx_memory_entry_versions_entry (entry_id, version),
    KEY idx_memory_entry_versions_slug (memory_artifact_id, slug, kind),
    CONSTRAINT fk_memory_entry_versions_previous FOREIGN KEY (previous_version_id)
        REFERENCES memory_entry_versions (entry_version_id),
    CONSTRAINT fk_memory_entry_versions_revision FOREIGN KEY (memory_artifact_id, created_in_revision)
        REFERENCES artifact_revisions (artifact_id, revision))""",
    f"""CREATE TABLE IF NOT EXISTS sources (
    source_id {ID} NOT NULL,
    kind VARCHAR(64) {TEXT} NOT NULL,
    uri TEXT {TEXT},
    content LONGTEXT {TEXT} NOT NULL,
    content_hash {HASH} NOT NULL,
    created_at VARCHAR(64) {TEXT} NOT NULL,
    PRIMARY KEY (source_id))""",
    f"""CREATE TABLE IF NOT EXISTS scope_bindings (
    scope VARCHAR(512) {TEXT} NOT NULL,
    memory_id {ID} NOT NULL,
    created_at VARCHAR(64) {TEXT} NOT NULL,
    PRIMARY KEY (scope),
    UNIQUE KEY uk_scope_bindings_memory (memory_id),
    CONSTRAINT fk_scope_bindings_memory FOREIGN KEY (memory_id) REFERENCES artifact_heads (artifact_id))""",
)

PROJECTIONS: tuple[str, ...] = (
    f"""CREATE TABLE IF NOT EXISTS memory_entry_heads (
    projection_id BIGINT NOT NULL AUTO_INCREMENT,
    memory_artifact_id {ID} NOT NULL,
    head_revision BIGINT NOT NULL,
    entry_id {ID} NOT NULL,
    entry_version_id {ID} NOT NULL,
    entry_content_hash {HASH} NOT NULL,
    searchable_text MEDIUMTEXT {TEXT} NOT NULL,
    kind VARCHAR(128) {TEXT} NOT NULL,
    slug VARCHAR(128) {TEXT},
    tags LONGTEXT {TEXT} NOT NULL,
    important TINYINT NOT NULL,
    mandatory TINYINT NOT NULL,
    updated_at VARCHAR(64) {TEXT} NOT NULL,
    embedding_rowid BIGINT,
    embedding_written_at DATETIME(6),
    PRIMARY KEY (projection_id),
    UNIQUE KEY uk_memory_entry_heads_entry (memory_artifact_id, entry_id),
    KEY idx_memory_entry_heads_version (entry_version_id),
    KEY idx_memory_entry_heads_kind (memory_artifact_id, kind, slug),
    KEY idx_memory_entry_heads_fresh (memory_artifact_id, embedding_written_at),
    KEY idx_memory_entry_heads_embedding (embedding_rowid),
    FULLTEXT INDEX ftx_memory_entry_heads_text (searchable_text) {FTS_PARSER},
    CONSTRAINT fk_memory_entry_heads_version FOREIGN KEY (memory_artifact_id, entry_id, entry_version_id)
        REFERENCES memory_entry_versions (memory_artifact_id, entry_id, entry_version_id))""",
    f"""CREATE TABLE IF NOT EXISTS memory_entry_archive (
    archive_id BIGINT NOT NULL AUTO_INCREMENT,
    memory_artifact_id {ID} NOT NULL,
    entry_id {ID} NOT NULL,
    entry_version_id {ID} NOT NULL,
    searchable_text MEDIUMTEXT {TEXT} NOT NULL,
    PRIMARY KEY (archive_id),
    UNIQUE KEY uk_memory_entry_archive_version (entry_version_id),
    KEY idx_memory_entry_archive_memory (memory_artifact_id),
    FULLTEXT INDEX ftx_memory_entry_archive_text (searchable_text) {FTS_PARSER},
    CONSTRAINT fk_memory_entry_archive_version FOREIGN KEY (entry_version_id)
        REFERENCES memory_entry_versions (entry_version_id))""",
    f"""CREATE TABLE IF NOT EXISTS memory_entry_vector_metadata (
    vector_rowid BIGINT NOT NULL AUTO_INCREMENT,
    memory_artifact_id {ID} NOT NULL,
    entry_id {ID} NOT NULL,
    entry_version_id {ID} NOT NULL,
    chunk INT NOT NULL,
    chunk_count INT NOT NULL,
    entry_content_hash {HASH} NOT NULL,
    embedding_content_hash {HASH} NOT NULL,
    profile_id VARCHAR(256) {TEXT} NOT NULL,
    PRIMARY KEY (vector_rowid),
    UNIQUE KEY uk_vector_metadata_window (entry_version_id, chunk),
    KEY idx_vector_metadata_entry (memory_artifact_id, entry_id))""",
    f"""CREATE TABLE IF NOT EXISTS memory_vector_staging (
    entry_version_id {ID} NOT NULL,
    chunk INT NOT NULL,
    memory_artifact_id {ID} NOT NULL,
    entry_id {ID} NOT NULL,
    vector LONGBLOB NOT NULL,
    PRIMARY KEY (entry_version_id, chunk))""",
)

AUTH: tuple[str, ...] = (
    f"""CREATE TABLE IF NOT EXISTS auth_principals (
    principal_id {ID} NOT NULL,
    user_name VARCHAR(128) {TEXT} NOT NULL,
    org VARCHAR(128) {TEXT} NOT NULL,
    name VARCHAR(512) {TEXT},
    created_at VARCHAR(64) {TEXT} NOT NULL,
    PRIMARY KEY (principal_id),
    UNIQUE KEY uk_auth_principals_user (user_name))""",
    f"""CREATE TABLE IF NOT EXISTS auth_tokens (
    token_id {ID} NOT NULL,
    principal_id {ID} NOT NULL,
    token_hash {HASH} NOT NULL,
    prefix VARCHAR(32) {TEXT} NOT NULL,
    label VARCHAR(512) {TEXT},
    created_at VARCHAR(64) {TEXT} NOT NULL,
    revoked_at VARCHAR(64) {TEXT},
    PRIMARY KEY (token_id),
    UNIQUE KEY uk_auth_tokens_hash (token_hash),
    CONSTRAINT fk_auth_tokens_principal FOREIGN KEY (principal_id) REFERENCES auth_principals (principal_id))""",
    f"""CREATE TABLE IF NOT EXISTS auth_grants (
    principal_id {ID} NOT NULL,
    scope VARCHAR(512) {TEXT} NOT NULL,
    permission VARCHAR(16) {TEXT} NOT NULL,
    created_at VARCHAR(64) {TEXT} NOT NULL,
    PRIMARY KEY (principal_id, scope),
    CONSTRAINT fk_auth_grants_principal FOREIGN KEY (principal_id) REFERENCES auth_principals (principal_id))""",
)

_SCOPE = f"scope VARCHAR(512) {TEXT} NOT NULL"
_STATUS = f"status VARCHAR(32) {TEXT} NOT NULL"


def _record_table(name: str, columns: tuple[str, ...], keys: tuple[str, ...]) -> str:
    """A table of JSON records in write order (maintenance's and capture's): ``seq``, ``columns``, the record, then
    the primary key on ``seq`` and ``keys``."""
    lines = (
        "seq BIGINT NOT NULL AUTO_INCREMENT",
        *columns,
        f"record LONGTEXT {TEXT} NOT NULL",
        "PRIMARY KEY (seq)",
        *keys,
    )
    return f"CREATE TABLE IF NOT EXISTS {name} (\n    " + ",\n    ".join(lines) + ")"


MAINTENANCE: tuple[str, ...] = (
    f"""CREATE TABLE IF NOT EXISTS maintenance_lease (
    scope VARCHAR(512) {TEXT} NOT NULL,
    run_id {ID} NOT NULL,
    holder VARCHAR(512) {TEXT} NOT NULL,
    expires_at DOUBLE NOT NULL,
    PRIMARY KEY (scope))""",
    f"""CREATE TABLE IF NOT EXISTS maintenance_ledger (
    scope VARCHAR(512) {TEXT} NOT NULL,
    entry_id {ID} NOT NULL,
    content_hash {HASH} NOT NULL,
    PRIMARY KEY (scope, entry_id))""",
    _record_table(
        "maintenance_runs",
        (f"run_id {ID} NOT NULL", _SCOPE, _STATUS),
        ("UNIQUE KEY uk_maintenance_runs_run (run_id)", "KEY idx_maintenance_runs_scope (scope)"),
    ),
    _record_table(
        "maintenance_proposals",
        (f"proposal_id {ID} NOT NULL", f"run_id {ID} NOT NULL", _SCOPE, _STATUS),
        (
            "UNIQUE KEY uk_maintenance_proposals_id (proposal_id)",
            "KEY idx_maintenance_proposals_run (run_id)",
            "KEY idx_maintenance_proposals_scope (scope, status)",
        ),
    ),
    _record_table(
        "maintenance_events",
        (f"event_id {ID} NOT NULL", _SCOPE),
        ("UNIQUE KEY uk_maintenance_events_id (event_id)", "KEY idx_maintenance_events_scope (scope)"),
    ),
)

CAPTURE: tuple[str, ...] = (
    _record_table(
        "capture_queue",
        (
            f"item_id {ID} NOT NULL",
            f"item_type VARCHAR(32) {TEXT} NOT NULL",
            f"scope VARCHAR(512) {TEXT}",
            _STATUS,
            f"text_key {HASH}",
            f"flag_key {HASH}",
            f"created_at VARCHAR(64) {TEXT} NOT NULL",
        ),
        (
            "UNIQUE KEY uk_capture_queue_item (item_id)",
            "KEY idx_capture_queue_text (text_key)",
            "KEY idx_capture_queue_flag (flag_key)",
            "KEY idx_capture_queue_status (status, scope)",
        ),
    ),
    f"""CREATE TABLE IF NOT EXISTS store_settings (
    name VARCHAR(128) {TEXT} NOT NULL,
    value LONGTEXT {TEXT} NOT NULL,
    updated_at VARCHAR(64) {TEXT} NOT NULL,
    PRIMARY KEY (name))""",
)

SEED_META = (("analyzer", "v1"),)
# The isolation contract's ``meta:<key>`` locks are rows of store_locks, there from the start.
SEED_LOCKS = (
    "meta:kinds",
    "meta:embedding_profile",
    "meta:migration",
    "meta:vector_generation",
    "meta:principals",
)


def head_vector_column(dimension: int) -> str:
    return f"embedding_d{_dim(dimension)}"


def windows_table(dimension: int) -> str:
    return f"memory_vector_windows_d{_dim(dimension)}"


HNSW_MAX = 4096  # OceanBase's VECTOR type allows up to 16,000 dimensions; HNSW (vsag) indexes up to 4,096


def _dim(dimension: int) -> int:
    if isinstance(dimension, bool) or not isinstance(dimension, int) or not 1 <= dimension <= HNSW_MAX:
        raise CapabilityNotSupportedError(
            "vector",
            f"a {dimension!r}-dimension embedding profile cannot be indexed on OceanBase: its HNSW index takes "
            f"at most {HNSW_MAX} dimensions",
            hint=f"choose a model of at most {HNSW_MAX} dimensions",
        )
    return dimension


def check_dimension(dimension: int) -> None:
    """Refuse a profile the HNSW index cannot take (the codec asks before a model migration embeds anything)."""
    _dim(dimension)


def vector_ddl(dimension: int, present_columns: set[str], present_tables: set[str]) -> list[str]:
    """The statements that add the vector projection of one dimension (only what is missing)."""
    col = head_vector_column(dimension)
    table = windows_table(dimension)
    out: list[str] = []
    if col not in present_columns:
        out.append(f"ALTER TABLE memory_entry_heads ADD COLUMN {col} VECTOR({dimension})")
        out.append(
            f"CREATE VECTOR INDEX vidx_memory_entry_heads_d{dimension} ON memory_entry_heads ({col}) "
            "WITH (distance=L2, type=hnsw, lib=vsag)"
        )
    if table not in present_tables:
        out.append(
            f"""CREATE TABLE IF NOT EXISTS {table} (
    vector_rowid BIGINT NOT NULL,
    memory_artifact_id {ID} NOT NULL,
    embedding VECTOR({dimension}) NOT NULL,
    written_at DATETIME(6) NOT NULL,
    PRIMARY KEY (vector_rowid),
    KEY idx_{table}_fresh (memory_artifact_id, written_at),
    VECTOR INDEX vidx_{table} (embedding) WITH (distance=L2, type=hnsw, lib=vsag))"""
        )
    return out


# Purge tombstones (issue 12; purge.py and backends/sql/purge.py write them).
TOMBSTONES = f"""CREATE TABLE IF NOT EXISTS memory_purges (
    purge_id {ID} NOT NULL,
    memory_artifact_id {ID} NOT NULL,
    entry_id {ID} NOT NULL,
    entry_version_id {ID} NOT NULL,
    version BIGINT NOT NULL,
    entry_content_hash {HASH} NOT NULL,
    reason LONGTEXT {TEXT} NOT NULL,
    author VARCHAR(512) {TEXT},
    surface VARCHAR(64) {TEXT} NOT NULL,
    purged_at VARCHAR(64) {TEXT} NOT NULL,
    PRIMARY KEY (purge_id),
    UNIQUE KEY uk_memory_purges_version (entry_version_id),
    KEY idx_memory_purges_entry (entry_id, version),
    CONSTRAINT fk_memory_purges_version FOREIGN KEY (entry_version_id)
        REFERENCES memory_entry_versions (entry_version_id))"""


@dataclass(frozen=True, slots=True)
class Migration:
    version: int
    summary: str
    statements: Callable[[], tuple[str, ...]]


MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        1,
        "authority, head and archive projections with FULLTEXT, vector metadata and staging",
        lambda: AUTHORITY + PROJECTIONS,
    ),
    Migration(2, "principals: auth tables", lambda: AUTH),
    Migration(3, "maintenance: scope lease, digest ledger, runs, proposals and events", lambda: MAINTENANCE),
    Migration(4, "capture: the review queue and the store's settings", lambda: CAPTURE),
    Migration(5, "purge tombstones", lambda: (TOMBSTONES,)),
)
LATEST = MIGRATIONS[-1].version

__all__ = ["LATEST", "MIGRATIONS", "SEED_LOCKS", "SEED_META", "head_vector_column", "vector_ddl", "windows_table"]
