"""OceanBase's part of a purge (issue 12; the engine-neutral steps are in ``backends/sql/purge.py``).

OceanBase has no append-only triggers here (authority is append-only by the core's statements), and its FULLTEXT
indexes are maintained by the server with the rows, so the rows' UPDATE and DELETE are all a purge needs in SQL.
After COMMIT the old row versions still sit in the tenant's memtables and SSTables until a major compaction
merges them away: the purge asks for one (``ALTER SYSTEM MAJOR FREEZE``) and reports False when the server refuses
it (a user without the right, or a kernel without the statement); the bytes then leave at the next scheduled
compaction (docs/engines/oceanbase.md). The redo log keeps them until it is recycled, as any engine's log does.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ..sql.engine import Conn, Engine


class OceanBasePurge:
    """The OceanBase purge codec (``OceanBaseEngine.purge``)."""

    def __init__(self, ddl: Callable[[str], None]) -> None:
        self._ddl = ddl  # one statement outside any transaction

    def allow_rewrite(self, conn: Conn) -> None:
        return None

    def restore(self, conn: Conn) -> None:
        return None

    def drop_archive(self, conn: Conn, version_ids: Sequence[str]) -> None:
        return None  # the FULLTEXT index follows the rows

    def erase_fulltext(self, conn: Conn) -> None:
        return None

    def compact(self, engine: Engine) -> bool:
        import pymysql

        try:
            self._ddl("ALTER SYSTEM MAJOR FREEZE")
        except pymysql.err.Error:
            return False
        return True


__all__ = ["OceanBasePurge"]
