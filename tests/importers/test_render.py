"""`render` writes the mandatory and important tiers into an agent's rule file; importing it back is a no-op."""

from __future__ import annotations

from pathlib import Path

import pytest

from memstone import EntryInput, InvalidInput, MemoryService
from memstone.importers import import_from
from memstone.importers.render import render, splice

from .conftest import PROJECT, revision_count, write

HAND_WRITTEN = "# Web\r\n\r\n- Use pnpm, not npm\r\n\r\n## Notes\r\ntrailing text without a final newline"


async def seed(svc: MemoryService) -> None:
    await svc.remember(
        None,
        scope=PROJECT,
        entries=[
            EntryInput(kind="constraint", text="Never edit site/ by hand", title="Generated files", mandatory=True),
            EntryInput(kind="convention", text="Prefer small PRs\nunder 300 lines", important=True),
            EntryInput(kind="fact", text="An ordinary fact that is not rendered"),
        ],
    )


async def test_render_adds_a_block_and_leaves_every_other_byte(svc: MemoryService, tmp_path: Path) -> None:
    await seed(svc)
    path = tmp_path / "CLAUDE.md"
    path.write_bytes(HAND_WRITTEN.encode("utf-8"))
    result = await render(svc, "claude-code", scopes=[PROJECT], directory=tmp_path)
    assert result.changed and (result.mandatory, result.important) == (1, 1)
    data = path.read_bytes().decode("utf-8")
    assert data.startswith(HAND_WRITTEN + "\r\n\r\n<!-- memstone:begin")
    assert "- **Generated files** (constraint): Never edit site/ by hand\r\n" in data
    assert "- (convention) Prefer small PRs\r\n  under 300 lines\r\n" in data
    assert "ordinary fact" not in data and data.endswith("<!-- memstone:end -->\r\n")

    # a re-run with nothing new writes nothing; a change replaces only the block
    assert not (await render(svc, "claude-code", scopes=[PROJECT], directory=tmp_path)).changed
    before, block = data.split("<!-- memstone:begin")
    path.write_bytes((before + "<!-- memstone:begin" + block + "\r\nafter the block\r\n").encode("utf-8"))
    await svc.remember(None, scope=PROJECT, entries=[EntryInput(kind="fact", text="Node 22", important=True)])
    assert (await render(svc, "claude-code", scopes=[PROJECT], directory=tmp_path)).important == 2
    again = path.read_bytes().decode("utf-8")
    assert again.startswith(before) and again.endswith("<!-- memstone:end -->\r\n\r\nafter the block\r\n")
    assert "Node 22" in again


async def test_render_then_import_is_a_no_op(svc: MemoryService, tmp_path: Path) -> None:
    write(tmp_path, "CLAUDE.md", "# Web\n\n- Never push to main\n- Prefer squash merges\n")
    first = await import_from(svc, "claude-md", tmp_path, scope=PROJECT)
    assert first.count("add") == 2
    await seed(svc)
    revisions = await revision_count(svc)
    await render(svc, "claude-code", scopes=[PROJECT], directory=tmp_path)
    assert "<!-- memstone:begin" in (tmp_path / "CLAUDE.md").read_text("utf-8")
    result = await import_from(svc, "claude-md", tmp_path, scope=PROJECT)
    assert result.revisions == () and result.count("add") == 0 and result.count("unchanged") == 2
    assert await revision_count(svc) == revisions


@pytest.mark.parametrize("agent", ["codex", "gemini", "cursor"])
async def test_every_agent_file_round_trips(svc: MemoryService, tmp_path: Path, agent: str) -> None:
    await seed(svc)
    result = await render(svc, agent, scopes=[PROJECT], directory=tmp_path)
    fmt = {"codex": "agents-md", "gemini": "gemini-md", "cursor": "cursor"}[agent]
    text = Path(result.path).read_text("utf-8")
    if agent == "cursor":
        assert text.startswith("---\ndescription:") and "alwaysApply: true" in text
    before = await revision_count(svc)
    try:
        outcome = await import_from(svc, fmt, tmp_path, scope=PROJECT)
    except InvalidInput as exc:  # a file holding only the block has no rules of its own
        pytest.fail(f"importing a rendered {agent} file failed: {exc}")
    assert outcome.entries == () and await revision_count(svc) == before


def test_a_stray_end_marker_is_refused() -> None:
    with pytest.raises(InvalidInput, match="no begin marker"):
        splice(b"text\n<!-- memstone:end -->\n", "block\n")
