"""SQLite backend (the embedded default)."""

from .store import SQLiteMemoryBackend, parse_sqlite_url

__all__ = ["SQLiteMemoryBackend", "parse_sqlite_url"]
