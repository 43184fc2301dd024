"""SQLite's page cache is sized for a search's working set; the URL option changes it (issue 15).

SQLite's own default (2 MiB) made a 100k fts search read ~75 pages from the OS and a hybrid one ~200 every time
(bench/sqlite_cache.py); the engine sets 64 MiB unless the store URL says ``cache_mib=N``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from memstone import InvalidInput, open_service
from memstone.backends.sqlite import SQLiteMemoryBackend
from memstone.backends.sqlite.options import CACHE_MIB, split_url


async def _cache_kib(url: str) -> int:
    async with open_service(url, embedding=None) as svc:
        backend = svc.backend
        assert isinstance(backend, SQLiteMemoryBackend)
        ((size,),) = backend.conn.execute("PRAGMA cache_size").fetchall()
        return -int(size)  # negative: KiB


async def test_the_default_page_cache_holds_a_large_store_s_search(tmp_path: Path) -> None:
    assert CACHE_MIB == 64
    assert await _cache_kib(f"sqlite:///{tmp_path / 'm.db'}") == 64 * 1024


async def test_cache_mib_sets_the_page_cache(tmp_path: Path) -> None:
    assert await _cache_kib(f"sqlite:///{tmp_path / 'm.db'}?cache_mib=8") == 8 * 1024
    assert await _cache_kib(f"sqlite:///{tmp_path / 'm.db'}?durability=fast&cache_mib=256") == 256 * 1024


@pytest.mark.parametrize("value", ["0", "-1", "abc", "", "1.5", "99999999", "６４"])
def test_a_bad_cache_mib_is_refused_with_the_accepted_range(value: str) -> None:
    with pytest.raises(InvalidInput) as info:
        split_url(f"sqlite:///m.db?cache_mib={value}")
    assert "cache_mib=1..65536" in (info.value.hint or "")
