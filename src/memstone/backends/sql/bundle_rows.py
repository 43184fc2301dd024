"""The store bundle's records besides the history, as rows that travel between engines (``memstone copy``).

The capture review queue, the store's settings and the maintenance records (runs, proposals, events and the
ledger) are the same columns on every engine (each engine's schema names them alike; only types differ), so one
engine-neutral reader and writer copies them: rows are read in their table's order (``seq`` where the table has
one, so a queue keeps its order in the target, which numbers them anew) and written keyed by their own ids. A row
already in the target with the same id takes the source's values (a proposal decided at the source since an
earlier copy is decided in the target too); a row an earlier copy from the same source wrote and the source has
deleted since is deleted (``copy_ledger.py``); the target's own rows stay. Leases are not
copied: they belong to a running process. Principals travel through their own store
(:meth:`~memstone.backends.sql.principals.SqlPrincipalStore.insert_records`).
"""

from __future__ import annotations

from typing import NamedTuple

from ...ports import BundleRows
from .copy_ledger import converge
from .engine import Engine


class Table(NamedTuple):
    name: str
    key: tuple[str, ...]
    values: tuple[str, ...]
    order: str


TABLES = (
    Table("store_settings", ("name",), ("value", "updated_at"), "name"),
    Table(
        "capture_queue",
        ("item_id",),
        ("item_type", "scope", "status", "text_key", "flag_key", "created_at", "record"),
        "seq",
    ),
    Table("maintenance_runs", ("run_id",), ("scope", "status", "record"), "seq"),
    Table("maintenance_proposals", ("proposal_id",), ("run_id", "scope", "status", "record"), "seq"),
    Table("maintenance_events", ("event_id",), ("scope", "record"), "seq"),
    Table("maintenance_ledger", ("scope", "entry_id"), ("content_hash",), "scope, entry_id"),
)


def read_rows(engine: Engine) -> BundleRows:
    """Every row of the bundle's record tables (inside the caller's read transaction)."""
    out: dict[str, list[tuple[object, ...]]] = {}
    for t in TABLES:
        columns = ", ".join((*t.key, *t.values))
        out[t.name] = [tuple(r) for r in engine.conn.q(f"SELECT {columns} FROM {t.name} ORDER BY {t.order}")]
    return out


def write_rows(engine: Engine, rows: BundleRows, origin: str | None = None) -> int:
    """Write rows read by :func:`read_rows` on any engine (inside the caller's write transaction); returns how
    many were new, changed or (with ``origin``, the source's name) deleted since an earlier copy."""
    changed = 0
    conn = engine.conn
    for t in TABLES:
        given = rows.get(t.name, ())
        if origin is not None:
            changed += converge(engine, origin, t.name, t.key, [row[: len(t.key)] for row in given])
        if not given:
            continue
        engine.lock(f"meta:{t.name}")
        columns = (*t.key, *t.values)
        where = " AND ".join(f"{k} = ?" for k in t.key)
        upsert = engine.dialect.upsert(t.name, columns, t.key, t.values)
        for row in given:
            there = conn.q(f"SELECT {', '.join(t.values)} FROM {t.name} WHERE {where}", row[: len(t.key)])
            if there and tuple(there[0]) == tuple(row[len(t.key) :]):
                continue
            conn.x(upsert, row)
            changed += 1
    return changed


__all__ = ["TABLES", "Table", "read_rows", "write_rows"]
