"""Capture settings (per-scope modes in a JSON file) and the review queue file (durable, locked, audited)."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from memstone import InvalidInput, NotFound
from memstone.capture import Candidate, CaptureSettings, QueueItem, ReviewFlag, ReviewQueue, capture_files
from memstone.domain.ids import EntryId, EntryVersionId, SourceId


def test_settings_round_trip_and_defaults(tmp_path: Path) -> None:
    path = tmp_path / "x.capture.json"
    assert CaptureSettings.load(path) == CaptureSettings()  # a missing file means the defaults
    settings = CaptureSettings(record_sources="when_used", working_notes=False).with_mode("memstone://orgs/a", "off")
    settings = settings.with_mode(None, "review")
    settings.save(path)
    assert CaptureSettings.load(path) == settings
    assert settings.mode_for("memstone://orgs/a") == "off" and settings.mode_for(None) == "review"
    assert json.loads(path.read_text())["modes"] == {"memstone://orgs/a": "off"}


@pytest.mark.parametrize(
    "data",
    [
        pytest.param({"default_mode": "sometimes"}, id="bad-mode"),
        pytest.param({"modes": {"memstone://orgs/a": "maybe"}}, id="bad-scope-mode"),
        pytest.param({"colour": "blue"}, id="unknown-key"),
        pytest.param({"record_sources": "never"}, id="bad-record"),
        pytest.param({"extractor": {"model": "m"}}, id="extractor-without-url"),
        pytest.param({"extractor": {"base_url": "http://x", "model": "m", "timeout": -1}}, id="bad-timeout"),
    ],
)
def test_bad_settings_are_refused_by_name(data: dict[str, object]) -> None:
    with pytest.raises(InvalidInput):
        CaptureSettings.from_dict(data)


def test_invalid_settings_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_text("{nope")
    with pytest.raises(InvalidInput):
        CaptureSettings.load(path)


@pytest.mark.parametrize(
    ("url", "name"),
    [
        pytest.param("sqlite:///rel/m.db", "m.db.capture.json", id="relative"),
        pytest.param("sqlite:////abs/m.db", "m.db.capture.json", id="absolute"),
        pytest.param("sqlite:////abs/m.db?durability=fast", "m.db.capture.json", id="engine-options"),
    ],
)
def test_capture_files_sit_beside_the_database(url: str, name: str) -> None:
    files = capture_files(url)
    assert files is not None and files.settings.name == name and files.queue.name == "m.db.capture-queue.json"


def test_a_bare_path_is_not_a_store_url_for_capture_either() -> None:
    # The engine refuses it (backends/url.py); read as a path here, capture would keep files for a store that
    # can never open (issue 11).
    with pytest.raises(InvalidInput) as info:
        capture_files("/abs/m.db")
    assert "sqlite:///" in (info.value.hint or "")


def item(n: int, text: str | None = None) -> QueueItem:
    return QueueItem(
        item_id=f"cap_{n:04d}",
        item_type="candidate",
        scope="memstone://orgs/a",
        memory_id=None,
        created_at="2026-01-01T00:00:00Z",
        candidate=Candidate(kind="constraint", text=text or f"Rule number {n} for everyone.", origin="statement"),
        action="add",
        evidence=(("event", SourceId(f"src_{n}")),),
    )


def test_queue_items_survive_a_round_trip_through_the_file(tmp_path: Path) -> None:
    queue = ReviewQueue(tmp_path / "q.json")
    flag = QueueItem(
        item_id="cap_flag",
        item_type="flag",
        scope="memstone://orgs/a",
        memory_id=None,
        created_at="t",
        flag=ReviewFlag(
            entry_id=EntryId("ent_1"),
            entry_version_id=EntryVersionId("ver_1"),
            entry_excerpt="x",
            paths=("Makefile",),
            base_commit="a",
            head_commit="b",
        ),
    )
    queue.add([item(1), flag])
    again = ReviewQueue(tmp_path / "q.json")
    assert again.items() == (item(1), flag)
    assert again.add([flag]) == ()  # the same flag is not queued twice while pending
    decided = again.decide("cap_0001", "rejected", decided_at="t2", decided_by="bob", note="no")
    assert decided.status == "rejected" and again.pending() == (flag,)
    with pytest.raises(InvalidInput):
        again.decide("cap_0001", "accepted", decided_at="t3")
    with pytest.raises(NotFound):
        again.get("cap_nope")


def test_concurrent_writers_do_not_lose_items(tmp_path: Path) -> None:
    path = tmp_path / "q.json"

    def writer(start: int) -> None:
        q = ReviewQueue(path)  # one queue object per "process"
        for n in range(start, start + 10):
            q.add([item(n)])

    threads = [threading.Thread(target=writer, args=(k * 100,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(ReviewQueue(path).pending()) == 40


def test_a_corrupt_queue_file_is_refused_not_overwritten(tmp_path: Path) -> None:
    path = tmp_path / "q.json"
    path.write_text("garbage")
    with pytest.raises(InvalidInput):
        ReviewQueue(path).add([item(1)])
    assert path.read_text() == "garbage"
