"""Storage upkeep on SQLite (the daemon's storage loop, ``backends/sqlite/upkeep.py``): FTS optimize and a WAL
checkpoint every time; VACUUM only when a quarter of the file is free pages, after which none is. Real file."""

from __future__ import annotations

from pathlib import Path

import memstone
from memstone import EntryInput


async def test_upkeep_vacuums_a_file_that_is_mostly_free_pages_and_leaves_a_compact_one_alone(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'memstone.db'}"
    async with memstone.open_service(url, embedding=None) as svc:
        await svc.remember(scope="memstone://users/u", entries=[EntryInput(kind="fact", text="Deploy with uv.")])
        engine = svc.backend.engine  # type: ignore[attr-defined]

        def bloat() -> None:  # pages that end up free: a table filled, then dropped
            raw = engine.raw
            raw.execute("CREATE TABLE scratch (b BLOB)")
            raw.execute(
                "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 500) "
                "INSERT INTO scratch SELECT randomblob(4000) FROM n"
            )
            raw.execute("DROP TABLE scratch")

        await engine.run(bloat)
        first = await svc.backend.storage_upkeep()  # type: ignore[attr-defined]
        assert first["vacuumed"] is True and first["free_pages"] * 4 >= first["pages"]
        assert first["fts_optimized"] == ["memory_entry_search_fts", "memory_entry_archive_fts"]
        second = await svc.backend.storage_upkeep()  # type: ignore[attr-defined]
        assert second["vacuumed"] is False and second["free_pages"] == 0
        assert (await svc.search("uv", scopes=["memstone://users/u"])).hits
        assert (await svc.verify()).ok
