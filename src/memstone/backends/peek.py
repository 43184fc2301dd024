"""A store's schema version, read without opening the store: ``memstone --version`` and ``doctor`` use it, so it
works when the store cannot open (a newer schema, a broken file) and imports no engine.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from .url import StoreURL, local_file, parse_store_url


def peek_schema_version(url: str | StoreURL) -> str:
    """The schema version a store records, or why it cannot be read here. A malformed URL raises InvalidInput.

    >>> peek_schema_version("sqlite:///:memory:")
    'no store file yet'
    """
    parsed = url if isinstance(url, StoreURL) else parse_store_url(url)
    path = local_file(parsed)
    if path is None:
        return "no store file yet" if parsed.in_memory else "read when the store opens (memstone doctor)"
    return _sqlite_schema_version(path)


def _sqlite_schema_version(path: Path) -> str:
    if not path.exists():
        return "no store file yet"
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)  # the stdlib: no extension, nothing written
        try:
            row = conn.execute("SELECT value FROM store_meta WHERE key = 'schema_version'").fetchone()
        finally:
            conn.close()
    except sqlite3.Error as exc:
        return f"unreadable ({exc})"
    return str(row[0]) if row else "missing"


__all__ = ["peek_schema_version"]
