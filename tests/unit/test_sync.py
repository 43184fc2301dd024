from pathlib import Path

import pytest

from memstone import EntryInput, InvalidInput
from memstone.sync import Memstone


def test_the_sync_facade_runs_the_service_without_await(tmp_path: Path) -> None:
    with Memstone(f"sqlite:///{tmp_path / 's.db'}", embedding=None) as m:
        rev = m.remember(None, entries=[EntryInput(kind="fact", text="We deploy with uv.")])
        hits = m.search("deploy", memories=[rev], mode="fts")
        assert [h.text for h in hits] == ["We deploy with uv."]
        assert m.cite(hits[0]).entry_version_id == hits[0].entry_version_id  # sync methods pass through
        with pytest.raises(InvalidInput):
            m.remember(rev, entries=[EntryInput(kind="fact", text="  ")])
    with Memstone(f"sqlite:///{tmp_path / 's.db'}", embedding=None) as m:
        assert [r.revision for r in m.memories()] == [1]


def test_a_store_that_cannot_open_leaves_no_loop_thread_behind(tmp_path: Path) -> None:
    import threading

    from memstone import MemstoneError

    before = {t.ident for t in threading.enumerate()}
    with pytest.raises(MemstoneError):
        Memstone("notaurl", embedding=None)
    assert [t.name for t in threading.enumerate() if t.ident not in before and t.is_alive()] == []
    assert not (Path.cwd() / "notaurl").exists()
