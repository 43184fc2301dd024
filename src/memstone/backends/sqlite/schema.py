"""SQLite DDL. Authority (revisions, heads, manifest nodes, entry versions, sources, scope bindings) and
projections (head rows, FTS5, vectors) are separate tables; authority tables refuse UPDATE and DELETE."""

from __future__ import annotations

from ..sql.ddl import IMMUTABLE_TABLES, SQLITE, archive_table, authority_tables, head_table

FTS_TOKENIZE = "unicode61 remove_diacritics 0 tokenchars '_' categories 'L* N* Co M*'"

AUTHORITY = authority_tables(SQLITE)


def immutability_triggers() -> str:
    out = []
    for table in IMMUTABLE_TABLES:
        for op in ("UPDATE", "DELETE"):
            out.append(
                f"CREATE TRIGGER IF NOT EXISTS trg_{table}_no_{op.lower()} BEFORE {op} ON {table} "
                f"BEGIN SELECT RAISE(ABORT, '{table} is append-only'); END;"
            )
    return "\n".join(out)


def fts_index(fts: str, table: str, rowid: str, prefix: str, *, update: bool = False) -> str:
    """An FTS5 index of ``table.searchable_text`` (external content, keyed by ``rowid``), kept in step by triggers
    on insert and delete (and on update of the text when rows change in place)."""
    insert = f"INSERT INTO {fts} (rowid, searchable_text) VALUES (new.{rowid}, new.searchable_text);"
    delete = (
        f"INSERT INTO {fts} ({fts}, rowid, searchable_text)\n"
        f"        VALUES ('delete', old.{rowid}, old.searchable_text);"
    )
    triggers = [("insert", "AFTER INSERT", [insert]), ("delete", "AFTER DELETE", [delete])]
    if update:
        triggers.append(("update", "AFTER UPDATE OF searchable_text", [delete, insert]))
    ddl = f"""CREATE VIRTUAL TABLE IF NOT EXISTS {fts} USING fts5(
    searchable_text,
    content='{table}',
    content_rowid='{rowid}',
    tokenize="{FTS_TOKENIZE}"
);
"""
    for name, when, body in triggers:
        lines = "".join(f"    {b}\n" for b in body)
        ddl += f"CREATE TRIGGER IF NOT EXISTS trg_{prefix}_fts_{name} {when} ON {table} BEGIN\n{lines}END;\n"
    return ddl


PROJECTIONS = f"""{head_table(SQLITE)}
{fts_index("memory_entry_search_fts", "memory_entry_heads", "projection_id", "heads", update=True)}"""


# The bits table belonged to an earlier fast path; it is still dropped with the others when a store migrates.
VECTOR_TABLES = (
    "memory_entry_search_vector",
    "memory_entry_search_vector_bits",
    "memory_entry_vector_metadata",
)


def vector_ddl(dimension: int) -> str:
    """The vector projection for one fixed dimension: metadata plus the exact sqlite-vec table."""
    if not 1 <= dimension <= 8192:
        raise ValueError(f"dimension {dimension} is outside sqlite-vec's 1..8192")
    return f"""
CREATE TABLE IF NOT EXISTS memory_entry_vector_metadata (
    vector_rowid INTEGER PRIMARY KEY AUTOINCREMENT,  -- never reused: the in-process index relies on it
    memory_artifact_id TEXT NOT NULL,
    entry_id TEXT NOT NULL,
    entry_version_id TEXT NOT NULL,
    chunk INTEGER NOT NULL,
    chunk_count INTEGER NOT NULL,
    entry_content_hash TEXT NOT NULL,
    embedding_content_hash TEXT NOT NULL,
    profile_id TEXT NOT NULL,
    UNIQUE (entry_version_id, chunk)
) STRICT;
CREATE INDEX IF NOT EXISTS idx_vector_metadata_entry ON memory_entry_vector_metadata (memory_artifact_id, entry_id);
CREATE VIRTUAL TABLE IF NOT EXISTS memory_entry_search_vector USING vec0(
    memory_artifact_id TEXT PARTITION KEY,
    embedding float[{dimension}] distance_metric=l2
);
"""


# The record surface (issue 4): slug lookups, incoming links, and the archive projection (superseded versions,
# searched by include_superseded). Additions only, all IF NOT EXISTS, so existing stores gain them on open.
RECORDS = f"""
CREATE INDEX IF NOT EXISTS idx_memory_entry_heads_slug
    ON memory_entry_heads (memory_artifact_id, kind, slug) WHERE slug IS NOT NULL;
CREATE INDEX IF NOT EXISTS idx_memory_entry_versions_slug
    ON memory_entry_versions (memory_artifact_id, slug, kind) WHERE slug IS NOT NULL;
CREATE INDEX IF NOT EXISTS idx_memory_entry_versions_linked
    ON memory_entry_versions (memory_artifact_id) WHERE relations != '[]';
{archive_table(SQLITE)}
{fts_index("memory_entry_archive_fts", "memory_entry_archive", "archive_id", "archive")}"""

RECORDS_OBJECTS = (
    "idx_memory_entry_heads_slug",
    "idx_memory_entry_versions_slug",
    "idx_memory_entry_versions_linked",
    "memory_entry_archive",
    "idx_memory_entry_archive_memory",
    "memory_entry_archive_fts",
    "trg_archive_fts_insert",
    "trg_archive_fts_delete",
)
