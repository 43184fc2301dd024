"""How a SQLite store is opened: the URL's options, read-only detection, and the FTS5 integrity check.

URL options (``sqlite:///path.db?mode=ro&durability=fast``):

- ``mode=ro`` opens the file read-only: reads, search and ``verify`` work, every write is refused. A file (or its
  directory) this process cannot write is opened read-only on its own, so a backup can be searched and verified.
- ``durability=full`` (the default) makes every acknowledged write survive power loss and an OS crash
  (``synchronous=FULL`` in WAL mode: the WAL is synced at each commit). ``durability=fast`` (``synchronous=NORMAL``)
  survives a killed process but may lose the last commits on power loss; choose it only where that is acceptable.
- ``cache_mib=64`` (the default) is the connection's page cache, in MiB (``PRAGMA cache_size``), allocated as
  pages are read. SQLite's own default (2 MiB) held neither a 100k store's full-text index nor what a vector
  search reads beside it: a 100k fts search re-read ~75 pages from the OS each time, a hybrid one ~200; with 64 MiB,
  none (``bench/sqlite_cache.py``, docs/benchmarks.md). A smaller value saves memory on a small machine.
"""

from __future__ import annotations

import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Literal
from urllib.parse import parse_qsl, quote

import apsw

from ...domain.errors import BackendUnavailable, InvalidInput

Durability = Literal["full", "fast"]
SYNCHRONOUS: dict[Durability, str] = {"full": "FULL", "fast": "NORMAL"}
CACHE_MIB = 64
MAX_CACHE_MIB = 65536
BUSY_ATTEMPTS = 3


@dataclass(frozen=True, slots=True)
class StoreOptions:
    read_only: bool = False
    durability: Durability = "full"
    cache_mib: int = CACHE_MIB


def split_url(url: str) -> tuple[str, StoreOptions]:
    """``sqlite:///x.db?mode=ro&durability=fast`` → (``sqlite:///x.db``, its options); unknown options are refused."""
    base, sep, query = url.partition("?")
    if not sep:
        return url, StoreOptions()
    read_only, durability, cache_mib = False, "full", CACHE_MIB
    for key, value in parse_qsl(query, keep_blank_values=True):
        if key == "mode" and value in ("ro", "rw"):
            read_only = value == "ro"
        elif key == "durability" and value in ("full", "fast"):
            durability = value
        elif key == "cache_mib" and value.isascii() and value.isdigit() and 1 <= int(value) <= MAX_CACHE_MIB:
            cache_mib = int(value)
        else:
            raise InvalidInput(
                f"unknown store URL option {key}={value!r}",
                hint=f"sqlite URLs take mode=ro|rw, durability=full|fast and cache_mib=1..{MAX_CACHE_MIB} "
                f"(the page cache in MiB, default {CACHE_MIB})",
            )
    fast = durability == "fast"
    return base, StoreOptions(read_only=read_only, durability="fast" if fast else "full", cache_mib=cache_mib)


def must_open_read_only(path: str) -> bool:
    """True when this process cannot write the store: the file, or the directory its journal files go in."""
    if path == ":memory:":
        return False
    file = Path(path)
    if file.exists():
        if not os.access(file, os.W_OK):
            return True
        return not os.access(file.parent, os.W_OK | os.X_OK) and not _wal_files_writable(file)
    return False


def _wal_files_writable(file: Path) -> bool:
    """A read-only directory is fine while the WAL and shared-memory files exist and are writable."""
    return all(os.access(Path(f"{file}{suffix}"), os.W_OK) for suffix in ("-wal", "-shm"))


def read_only_uri(path: str) -> str:
    """The URI that opens ``path`` read-only. In a directory nobody can create the WAL's shared-memory file in
    (a read-only mount, a backup), a WAL database is readable only as immutable: no writer can exist there."""
    file = Path(path).resolve()
    uri = f"file:{quote(str(file))}?mode=ro"
    if not Path(f"{file}-shm").exists() and not os.access(file.parent, os.W_OK | os.X_OK):
        uri += "&immutable=1"
    return uri


def read_only_refusal(path: str) -> BackendUnavailable:
    return BackendUnavailable(
        f"the store {path} is read-only (opened for reading): the write was refused",
        hint="reads, search and verify work; to write, make the file and its directory writable, or copy it",
    )


def fts_integrity(
    conn: apsw.Connection, path: str, tables: tuple[str, ...], *, read_only: bool, busy_timeout_ms: int
) -> dict[str, str]:
    """FTS5's ``integrity-check`` of each table, never written inside ``conn``'s read snapshot.

    The check is an INSERT, so it needs the write lock. It runs on a second connection in its own short write
    transaction (rolled back), waiting for writers through the busy timeout and retrying a few times; a store
    that stays busy raises BackendUnavailable, never damage. A read-only store is checked on a temporary copy.
    Returns the damage found, by table (an engine error other than busy or locked is damage).
    """
    if path == ":memory:" or conn.txn_state("main") == apsw.SQLITE_TXN_WRITE:
        return _check(conn, tables)  # no other connection can see this store, or this one already holds the lock
    if read_only:
        with tempfile.TemporaryDirectory(prefix="memstone-verify-") as tmp:
            copy = apsw.Connection(str(Path(tmp) / "copy.db"))
            try:
                with copy.backup("main", conn, "main") as backup:
                    backup.step()
                return _check(copy, tables)
            finally:
                copy.close()
    for attempt in range(BUSY_ATTEMPTS):
        other = apsw.Connection(path, flags=apsw.SQLITE_OPEN_READWRITE)
        try:
            other.set_busy_timeout(busy_timeout_ms)
            other.execute("BEGIN IMMEDIATE")
            try:
                return _check(other, tables)
            finally:
                other.execute("ROLLBACK")
        except (apsw.BusyError, apsw.LockedError) as exc:
            if attempt == BUSY_ATTEMPTS - 1:
                raise BackendUnavailable(
                    f"{path} stayed busy with writers; the full-text indexes could not be checked",
                    orig=exc,
                    hint="run verify again when writes pause; nothing was found damaged",
                ) from exc
            time.sleep(0.05 * (attempt + 1))
        finally:
            other.close()
    raise AssertionError("unreachable")  # pragma: no cover


def _check(conn: apsw.Connection, tables: tuple[str, ...]) -> dict[str, str]:
    damage: dict[str, str] = {}
    for table in tables:
        try:
            conn.execute(f"INSERT INTO {table} ({table}, rank) VALUES ('integrity-check', 1)")
        except (apsw.BusyError, apsw.LockedError):
            raise
        except apsw.Error as exc:
            damage[table] = str(exc)
    return damage


__all__ = ["StoreOptions", "fts_integrity", "must_open_read_only", "read_only_refusal", "read_only_uri", "split_url"]
