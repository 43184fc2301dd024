"""SQLite backend (the embedded default)."""

from .store import SQLiteMemoryBackend, open_sqlite, parse_sqlite_url

__all__ = ["SQLiteMemoryBackend", "open_sqlite", "parse_sqlite_url"]
