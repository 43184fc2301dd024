"""Shared constants and helpers of the capture tests (a uniquely named module: tests are not packages here)."""

from __future__ import annotations

from pathlib import Path

PROJECT = "memstone://orgs/acme/projects/ledgerd"
USER = "memstone://users/anonymous"


def db_bytes(db_path: Path) -> bytes:
    """Every byte of the database and its WAL/SHM files, to prove what is (not) stored."""
    return b"".join(p.read_bytes() for p in sorted(db_path.parent.glob(db_path.name + "*")) if p.is_file())
