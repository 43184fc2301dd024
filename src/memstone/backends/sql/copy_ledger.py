"""What an earlier ``memstone copy`` brought into this store, so a rerun converges (issue 13).

A copy writes the source's bundle rows (grants, settings, the capture queue, maintenance records) keyed by their
own ids. A row the source deleted since an earlier copy (a removed grant, an unseen ledger entry, a dropped
setting or queue row) must go from the target too, but a row the target made itself must stay. So the target
keeps, per table and per source, the keys the last copy from that source wrote: a ``copied:<table>:<origin>`` row
of ``store_meta``. A rerun deletes the keys that ledger lists and the source no longer has, then records the
source's keys. ``origin`` names the source (``service/copy.py``: its oldest Memory id, stable for the life of a
store); a row another source brought, or the target's own, is never deleted.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from .engine import Engine


def converge(engine: Engine, origin: str, table: str, key: Sequence[str], keys: Sequence[tuple[object, ...]]) -> int:
    """Inside the caller's write transaction: delete the rows of ``table`` an earlier copy from ``origin`` wrote
    whose ``key`` columns are not among ``keys`` (the source's now), and record ``keys``; returns rows deleted."""
    meta = f"copied:{table}:{origin}"
    engine.lock(f"meta:{meta}")
    conn = engine.conn
    rows = conn.q("SELECT value FROM store_meta WHERE key = ?", (meta,))
    now = {tuple(str(v) for v in k) for k in keys}
    before = {tuple(str(v) for v in k) for k in json.loads(str(rows[0][0]))} if rows else set()
    where = " AND ".join(f"{c} = ?" for c in key)
    deleted = sum(conn.x(f"DELETE FROM {table} WHERE {where}", k) for k in sorted(before - now))
    if now != before:
        value = json.dumps(sorted(now), separators=(",", ":"))
        conn.x(engine.dialect.upsert("store_meta", ("key", "value"), ("key",), ("value",)), (meta, value))
    return deleted


__all__ = ["converge"]
