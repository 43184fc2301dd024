"""Normalized events: JSON round trips, Sources they become, the size limit, reading build files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memstone import InvalidInput, Source
from memstone.capture import (
    Bootstrap,
    EventContext,
    ExplicitSubmit,
    FileSnapshot,
    GitChange,
    Handoff,
    SubmittedEntry,
    TurnStop,
    UserCorrection,
    UserPrompt,
    Verification,
    event_from_dict,
    event_to_dict,
    read_build_files,
)
from memstone.capture.events import MAX_SOURCE_BYTES, event_from_source, event_sources, fit_event
from memstone.domain.ids import SourceId

CTX = EventContext(agent="claude-code", session_id="s1", turn_id="t1", cwd="/repo")
EVENTS = [
    pytest.param(UserPrompt(text="We use uv.", context=CTX), id="user-prompt"),
    pytest.param(UserCorrection(text="No, use pnpm instead of npm."), id="user-correction"),
    pytest.param(
        TurnStop(
            final_report="Fixed it.",
            changed_paths=("a.py",),
            verification=(Verification(command="pytest", outcome="passed", detail="3 passed"),),
            git_head="abc123",
            files=(FileSnapshot(path="pyproject.toml", content="[project]\nname='x'\n"),),
            context=CTX,
        ),
        id="turn-stop",
    ),
    pytest.param(Handoff(summary="Half done.", open_items=("write tests",), changed_paths=("b.py",)), id="handoff"),
    pytest.param(GitChange(base_commit="a1", head_commit="b2", changed_paths=("Makefile",), patch="-x\n+y"), id="git"),
    pytest.param(
        ExplicitSubmit(entries=(SubmittedEntry(kind="decision", text="We chose Postgres.", tags=("db",)),)),
        id="submit",
    ),
    pytest.param(Bootstrap(files=(FileSnapshot(path="go.mod", content="module x\n"),)), id="bootstrap"),
]


@pytest.mark.parametrize("event", EVENTS)
def test_events_round_trip_through_json(event: object) -> None:
    data = event_to_dict(event)  # type: ignore[arg-type]
    assert event_from_dict(json.loads(json.dumps(data))) == event


@pytest.mark.parametrize(
    "data",
    [
        pytest.param({"type": "nope"}, id="unknown-type"),
        pytest.param({"type": "user_prompt"}, id="missing-text"),
        pytest.param({"type": "user_prompt", "text": 3}, id="text-not-string"),
        pytest.param({"type": "turn_stop", "changed_paths": "a.py"}, id="paths-not-list"),
        pytest.param({"type": "turn_stop", "verification": [{"command": "x", "outcome": "great"}]}, id="bad-outcome"),
        pytest.param({"type": "explicit_submit", "entries": [{"kind": "x", "text": "y", "scope": "org"}]}, id="scope"),
    ],
)
def test_bad_event_data_is_refused_by_name(data: dict[str, object]) -> None:
    with pytest.raises(InvalidInput):
        event_from_dict(data)


def test_an_event_becomes_one_source_plus_one_per_file() -> None:
    event = TurnStop(
        final_report="Done with the build.",
        changed_paths=("Makefile",),
        files=(
            FileSnapshot(path="./Makefile", content="test:\n\tpytest\n"),
            FileSnapshot(path="Makefile", content="dup"),
            FileSnapshot(path="empty.toml", content="  "),
        ),
    )
    drafts = event_sources(event)
    assert [(d.key, d.kind, d.uri) for d in drafts] == [
        ("event", "agent-turn", None),
        ("file:Makefile", "build-file", "file:Makefile"),
    ]
    assert "files" not in json.loads(drafts[0].content)  # file contents live in their own Sources


def test_sources_decode_back_into_events() -> None:
    event = UserPrompt(text="Always run make test.", context=CTX)
    (draft,) = event_sources(event)
    source = Source(source_id=SourceId("src_1"), kind=draft.kind, content=draft.content)
    assert event_from_source(source) == event
    file_source = Source(source_id=SourceId("src_2"), kind="build-file", content="x", uri="file:go.mod")
    assert event_from_source(file_source) == FileSnapshot(path="go.mod", content="x")
    assert event_from_source(Source(source_id=SourceId("src_3"), kind="note", content="hello")) is None


def test_fit_event_trims_the_largest_text_under_the_source_limit() -> None:
    big = GitChange(base_commit="a", head_commit="b", changed_paths=("x.py",), patch="+" + "y\n" * 20_000)
    fitted = fit_event(big)
    assert isinstance(fitted, GitChange) and fitted.patch is not None
    assert "…[truncated" in fitted.patch
    assert all(len(d.content.encode()) <= MAX_SOURCE_BYTES for d in event_sources(fitted))
    small = UserPrompt(text="We use uv.")
    assert fit_event(small) is small
    quotes = UserPrompt(text='"' * 9000)  # JSON escaping doubles it; still fits after trimming
    assert len(event_sources(fit_event(quotes))[0].content.encode()) <= MAX_SOURCE_BYTES


def test_read_build_files_reads_known_files_only(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    (tmp_path / "Makefile").write_text("test:\n\tpytest\n")
    (tmp_path / "README.md").write_text("hello")
    (tmp_path / "package.json").write_bytes(b"\xff\xfe not utf-8")
    files = read_build_files(tmp_path)
    assert [f.path for f in files] == ["pyproject.toml", "Makefile"]
