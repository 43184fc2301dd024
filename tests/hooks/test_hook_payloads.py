"""Payload normalization and output shapes, per agent (pure functions; no store)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hook_helpers import payload

from memstone.agents.payloads import EVENTS, NATIVE_EVENTS, clip, fallback_output, output, parse_payload
from memstone.agents.project import current_branch, normalize_remote, project_root, project_scope


@pytest.mark.parametrize(
    ("agent", "event"),
    [pytest.param(a, e, id=f"{a}-{e}") for a in NATIVE_EVENTS for e in EVENTS if e in NATIVE_EVENTS[a]],
)
def test_each_agents_payload_normalizes(agent: str, event: str, tmp_path: Path) -> None:
    ev = parse_payload(agent, event, json.dumps(payload(agent, event, cwd=tmp_path)))  # type: ignore[arg-type]
    assert ev.session_id == "sess-1"
    assert ev.cwd == str(tmp_path)
    assert ev.native_event == NATIVE_EVENTS[agent][event]  # type: ignore[index]
    if event == "user-prompt-submit":
        assert ev.prompt == "hello"
    if event == "stop":
        assert ev.assistant_message == "Done."


def test_output_shapes() -> None:
    assert output("claude-code", "session-start", "x") == {
        "hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "x"}
    }
    assert output("gemini", "user-prompt-submit", "x") == {
        "hookSpecificOutput": {"hookEventName": "BeforeAgent", "additionalContext": "x"}
    }
    assert output("cursor", "session-start", "x") == {"additional_context": "x"}
    assert output("cursor", "user-prompt-submit", None) == {"continue": True}
    assert output("codex", "stop", "x") is None  # capture-only events print nothing
    assert output("claude-code", "session-start", None) is None
    assert fallback_output("cursor", "user-prompt-submit") == {"continue": True}
    assert fallback_output("claude-code", "user-prompt-submit") is None


def test_clip_cuts_at_a_line_and_says_so() -> None:
    text = "\n".join(f"line {i} " + "x" * 90 for i in range(200))
    cut = clip(text)
    assert len(cut) <= 9_500 and cut.endswith("use memory_search for the rest)")
    assert clip("short") == "short"


@pytest.mark.parametrize(
    ("url", "normalized"),
    [
        ("git@github.com:Acme/Web.git", "github.com/acme/web"),
        ("https://user:secret@github.com/Acme/Web", "github.com/acme/web"),
        ("ssh://git@host:2222/team/app.git", "host:2222/team/app"),
        ("https://gitlab.com/a/b/", "gitlab.com/a/b"),
    ],
)
def test_remotes_normalize_without_credentials(url: str, normalized: str) -> None:
    assert normalize_remote(url) == normalized


def test_two_clones_share_a_project_scope_and_unrelated_folders_do_not(tmp_path: Path) -> None:
    for name in ("one/web", "two/web-clone"):
        (tmp_path / name / ".git").mkdir(parents=True)
        (tmp_path / name / ".git" / "config").write_text('[remote "origin"]\n\turl = git@github.com:acme/web.git\n')
    (tmp_path / "three" / "web" / ".git").mkdir(parents=True)
    (tmp_path / "one" / "web" / "src").mkdir()
    one = project_scope(tmp_path / "one" / "web" / "src")
    assert one is not None and one.startswith("memstone://orgs/local/projects/web-")
    assert one == project_scope(tmp_path / "two" / "web-clone")
    assert project_scope(tmp_path / "three" / "web") not in (None, one)


def _repository_with_worktree(tmp_path: Path) -> tuple[Path, Path]:
    """A repository ``web`` (its ``.git`` written by hand) and its worktree ``web-feature`` (a ``gitdir:`` file)."""
    main = tmp_path / "web"
    (main / ".git" / "worktrees" / "feature").mkdir(parents=True)
    (main / ".git" / "worktrees" / "feature" / "commondir").write_text("../..\n")
    tree = tmp_path / "web-feature"
    (tree / "src").mkdir(parents=True)
    (tree / ".git").write_text(f"gitdir: {main / '.git' / 'worktrees' / 'feature'}\n")
    return main, tree


def test_a_worktree_finds_its_repository_remote(tmp_path: Path) -> None:
    main, tree = _repository_with_worktree(tmp_path)
    (main / ".git" / "config").write_text('[remote "origin"]\n\turl = https://github.com/acme/web\n')
    scope = project_scope(main)
    assert scope is not None and scope.startswith("memstone://orgs/local/projects/web-")
    assert project_scope(tree) == scope  # the remote names the project, whichever work tree it is read from


def test_the_branch_is_read_in_a_repository_and_in_its_worktree(tmp_path: Path) -> None:
    main, tree = _repository_with_worktree(tmp_path)
    (main / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (main / ".git" / "worktrees" / "feature" / "HEAD").write_text("ref: refs/heads/feature/login\n")
    assert current_branch(main) == "main"
    assert current_branch(tree / "src") == "feature/login"
    (main / ".git" / "HEAD").write_text("0123456789abcdef0123456789abcdef01234567\n")  # detached
    assert current_branch(main) is None
    (tree / ".git").write_text("not a gitdir line\n")
    assert current_branch(tree) is None


def test_home_and_root_are_not_projects() -> None:
    assert project_root(Path.home()) is None or (Path.home() / ".git").exists()
    assert project_root("/") is None
