"""Prefixed ULID identifiers: ``mem_``, ``ent_``, ``ver_``, ``src_`` + 26 Crockford base32 characters."""

from __future__ import annotations

import os
import re
import threading
import time
from typing import NewType

from .errors import InvalidInput, shown

MemoryId = NewType("MemoryId", str)
EntryId = NewType("EntryId", str)
EntryVersionId = NewType("EntryVersionId", str)
SourceId = NewType("SourceId", str)

_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
_ID_RE = re.compile(r"^[A-Za-z0-9_.:\-]{1,128}$")
PREFIXES = {"memory": "mem_", "entry": "ent_", "version": "ver_", "source": "src_"}


def _encode(value: int, length: int) -> str:
    out = []
    for _ in range(length):
        out.append(_CROCKFORD[value & 31])
        value >>= 5
    return "".join(reversed(out))


class UlidGenerator:
    """Monotonic ULIDs: within one millisecond the random part increments, so ids sort by creation."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._last_ms = -1
        self._last_rand = 0

    def __call__(self, prefix: str) -> str:
        with self._lock:
            ms = time.time_ns() // 1_000_000
            if ms <= self._last_ms:
                ms = self._last_ms
                self._last_rand = (self._last_rand + 1) & ((1 << 80) - 1)
            else:
                self._last_ms = ms
                self._last_rand = int.from_bytes(os.urandom(10), "big") >> 1  # headroom for increments
            return prefix + _encode(ms, 10) + _encode(self._last_rand, 16)


new_ulid = UlidGenerator()


def check_id(value: object, *, what: str, prefix: str | None = None) -> str:
    """Validate an id: ASCII, at most 128 characters, of a safe alphabet, with the expected prefix."""
    if not isinstance(value, str) or not _ID_RE.fullmatch(value):
        raise InvalidInput(
            f"invalid {what} id {shown(value)}",
            hint="ids are ASCII letters, digits and _.:- , at most 128 characters",
        )
    if prefix is not None and not value.startswith(prefix):
        raise InvalidInput(f"invalid {what} id {shown(value)}: expected it to start with {prefix!r}")
    return value
