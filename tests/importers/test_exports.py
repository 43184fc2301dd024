"""basic-memory folders, mem0 exports and the MCP reference memory server's JSONL, including malformed input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memstone import InvalidInput, MemoryService
from memstone.importers import import_from, parse

from .conftest import PROJECT, revision_count, write

COFFEE = """
---
title: Coffee Brewing Methods
type: note
permalink: coffee/coffee-brewing-methods
tags:
- coffee
- brewing
---

# Coffee Brewing Methods

## Observations
- [method] Pour over gives more clarity in the cup #brewing
- [tip] Water at 205°F extracts best (just off the boil)
- [decision] We standardise on a 1:16 ratio for the office machine

## Relations
- relates_to [[Coffee Bean Origins]]
- requires [[Proper Grinding Technique]]
- inspired_by [[A Book Not In This Folder]]
"""

ORIGINS = """
---
title: Coffee Bean Origins
type: note
permalink: coffee/coffee-bean-origins
tags: [coffee, sourcing]
---

# Coffee Bean Origins

- [region] Ethiopian beans are fruity and floral #ethiopia
See also [[Coffee Brewing Methods]].
"""

GRINDING = """
---
title: Proper Grinding Technique
type: procedure
---

Grind just before brewing; burr grinders only.
"""


def basic_memory(tmp_path: Path) -> Path:
    root = tmp_path / "kb"
    write(root, "coffee/coffee-brewing-methods.md", COFFEE)
    write(root, "coffee/coffee-bean-origins.md", ORIGINS)
    write(root, "coffee/proper-grinding-technique.md", GRINDING)
    write(root, ".basic-memory/ignored.md", "not a note\n")
    return root


async def test_basic_memory_notes_become_linked_entries(svc: MemoryService, tmp_path: Path) -> None:
    root = basic_memory(tmp_path)
    result = await import_from(svc, "basic-memory", root, scope=PROJECT)
    assert result.count("add") == 3
    # the links between notes need the new entries' ids: one Revision of content, one of links
    assert len(result.revisions) == 2 and result.revisions[1].changes[0].reason == "import-links"
    assert result.unresolved == (f"{root / 'coffee/coffee-brewing-methods.md'}: [[A Book Not In This Folder]]",)
    records = {r.title: r for r in await svc.list(scopes=[PROJECT])}
    brewing = records["Coffee Brewing Methods"]
    assert brewing.slug == "coffee-coffee-brewing-methods" and brewing.kind == "fact"
    assert {"coffee", "brewing", "method", "tip", "decision", "basic-memory", "type:note"} <= set(brewing.tags)
    assert "205°F" in brewing.text and "[[A Book Not In This Folder]]" in brewing.text  # nothing dropped
    targets = {(rel.kind, rel.target) for rel in brewing.version.content.relations}
    assert targets == {
        ("relates-to", records["Coffee Bean Origins"].entry_id),
        ("requires", records["Proper Grinding Technique"].entry_id),
    }
    assert records["Proper Grinding Technique"].kind == "procedure"
    assert ("links-to", brewing.entry_id) in {
        (x.kind, x.target) for x in records["Coffee Bean Origins"].version.content.relations
    }
    again = await import_from(svc, "basic-memory", root, scope=PROJECT)
    assert again.revisions == () and again.count("unchanged") == 3
    assert await revision_count(svc) == 2


def test_a_basic_memory_note_with_broken_frontmatter_names_the_line(tmp_path: Path) -> None:
    root = basic_memory(tmp_path)
    bad = write(root, "coffee/bad.md", "---\ntitle: Bad\ntags: [unclosed\n---\nbody\n")
    with pytest.raises(InvalidInput) as err:
        parse("basic-memory", root)
    assert f"{bad}:3" in str(err.value)


async def test_nothing_is_half_imported_when_one_note_is_bad(svc: MemoryService, tmp_path: Path) -> None:
    root = basic_memory(tmp_path)
    write(root, "zz-empty.md", "---\ntitle: Empty\n---\n\n")
    with pytest.raises(InvalidInput, match=r"zz-empty\.md:4: the note has no body"):
        await import_from(svc, "basic-memory", root, scope=PROJECT)
    assert await svc.memories() == ()


MEM0 = {
    "results": [
        {
            "id": "3f1c2a6e-8f0b-4c1e-9d7a-1b2c3d4e5f60",
            "memory": "Prefers vegetarian food",
            "hash": "a1b2",
            "metadata": {"source": "chat"},
            "categories": ["food", "preferences"],
            "created_at": "2026-03-01T10:00:00-08:00",
            "updated_at": "2026-03-05T09:00:00-08:00",
            "user_id": "Alice",
            "history": [
                {"event": "ADD", "old_memory": None, "new_memory": "Likes pizza", "created_at": "2026-03-01"},
                {
                    "event": "UPDATE",
                    "old_memory": "Likes pizza",
                    "new_memory": "Prefers vegetarian food",
                    "created_at": "2026-03-05",
                },
            ],
        },
        {
            "id": "9a8b7c6d-0000-4000-8000-000000000002",
            "memory": "Never schedule meetings before 9am",
            "user_id": "alice",
            "agent_id": "calendar-bot",
            "created_at": "2026-03-02T10:00:00Z",
        },
        {"id": "m-3", "memory": "Works on the payments team", "run_id": "run-7"},
    ],
    "relations": [{"source": "alice", "relationship": "works_with", "destination": "bob"}],
}


async def test_mem0_export_with_history_goes_to_user_scopes(svc: MemoryService, tmp_path: Path) -> None:
    path = tmp_path / "mem0.json"
    path.write_text(json.dumps(MEM0, indent=2), "utf-8")
    result = await import_from(svc, "mem0", path, scope=PROJECT)
    assert result.count("add") == 4
    alice = {r.slug: r for r in await svc.list(scopes=["memstone://users/alice"])}
    veg = alice["mem0-3f1c2a6e-8f0b-4c1e-9d7a-1b2c3d4e5f60"]
    assert veg.kind == "preference" and {"food", "preferences", "mem0"} <= set(veg.tags)
    (evidence,) = await svc.sources(list(veg.version.content.sources))
    assert '"old_memory": "Likes pizza"' in evidence.content  # the mem0 history is kept with the entry
    assert evidence.uri is not None and evidence.uri.startswith(f"file://{path}#L3-")
    meeting = alice["mem0-9a8b7c6d-0000-4000-8000-000000000002"]
    assert meeting.kind == "constraint" and "agent:calendar-bot" in meeting.tags
    project = await svc.list(scopes=[PROJECT])
    assert {r.text for r in project} == {"Works on the payments team", "alice works with bob"}
    again = await import_from(svc, "mem0", path, scope=PROJECT)
    assert again.revisions == ()


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        pytest.param(
            '{"results": [\n  {"id": "a", "memory": "ok"},\n  {"id": "b"}\n]}', 3, "no 'memory'", id="no-text"
        ),
        pytest.param(
            '{"results": [\n  {"id": "a", "memory": "ok"},\n  {"id": "b" "memory": 1}\n]}',
            3,
            "not valid JSON",
            id="bad-json",
        ),
        pytest.param(
            '{"results": [\n {"id": "a", "memory": "x"},\n {"id": "a", "memory": "y"}\n]}',
            3,
            "twice",
            id="duplicate-id",
        ),
        pytest.param('{"memories": []}', 1, "'results' list", id="not-get-all"),
    ],
)
async def test_malformed_mem0_names_the_line_and_writes_nothing(
    svc: MemoryService, tmp_path: Path, text: str, line: int, message: str
) -> None:
    path = tmp_path / "mem0.json"
    path.write_text(text, "utf-8")
    with pytest.raises(InvalidInput) as err:
        await import_from(svc, "mem0", path, scope=PROJECT)
    assert f"{path}:{line}" in str(err.value) and message in str(err.value)
    assert await svc.memories() == ()


MCP = (
    "\n".join(
        json.dumps(x)
        for x in [
            {
                "type": "entity",
                "name": "John_Smith",
                "entityType": "person",
                "observations": ["Speaks fluent Spanish", "Graduated in 2019"],
            },
            {"type": "entity", "name": "Anthropic", "entityType": "organization", "observations": []},
            {"type": "relation", "from": "John_Smith", "to": "Anthropic", "relationType": "works_at"},
            {"type": "relation", "from": "John_Smith", "to": "Nobody", "relationType": "knows"},
        ]
    )
    + "\n"
)


async def test_mcp_memory_jsonl_entities_and_relations(svc: MemoryService, tmp_path: Path) -> None:
    path = tmp_path / "memory.jsonl"
    path.write_text(MCP, "utf-8")
    result = await import_from(svc, "mcp-memory", path, scope=PROJECT)
    assert result.count("add") == 2 and len(result.revisions) == 2
    assert result.unresolved == (f"{path}:4: knows -> 'Nobody'",)
    records = {r.title: r for r in await svc.list(scopes=[PROJECT])}
    john = records["John_Smith"]
    assert john.text == "- Speaks fluent Spanish\n- Graduated in 2019"
    assert {"person", "mcp-memory"} <= set(john.tags)
    assert [(r.kind, r.target) for r in john.version.content.relations] == [("works-at", records["Anthropic"].entry_id)]
    (evidence,) = await svc.sources(list(john.version.content.sources))
    assert evidence.uri == f"file://{path}#L1-L3" and '"relationType": "works_at"' in evidence.content
    assert (await import_from(svc, "mcp-memory", path, scope=PROJECT)).revisions == ()


@pytest.mark.parametrize(
    ("lines", "line", "message"),
    [
        pytest.param(['{"type": "entity", "name": "A", "entityType": "x"}', "{oops"], 2, "not valid JSON", id="json"),
        pytest.param(['{"type": "entity", "name": "A"}'], 1, "entityType", id="no-type"),
        pytest.param(['{"type": "note"}'], 1, "unknown line type", id="unknown"),
        pytest.param(
            ['{"type": "relation", "from": "A", "to": "B", "relationType": "r"}'],
            1,
            "unknown entity",
            id="dangling-from",
        ),
    ],
)
async def test_malformed_mcp_memory_names_the_line(
    svc: MemoryService, tmp_path: Path, lines: list[str], line: int, message: str
) -> None:
    path = tmp_path / "memory.jsonl"
    path.write_text("\n".join(lines) + "\n", "utf-8")
    with pytest.raises(InvalidInput) as err:
        await import_from(svc, "mcp-memory", path, scope=PROJECT)
    assert f"{path}:{line}" in str(err.value) and message in str(err.value)
    assert await svc.memories() == ()


async def test_a_secret_in_mem0_history_refuses_the_import(svc: MemoryService, tmp_path: Path) -> None:
    leaked = {"event": "ADD", "new_memory": "token ghp_R4nd0mT0k3nV4lu3Th4tL00ksR34l1234567", "created_at": "x"}
    doc = {"results": [{"id": "m1", "memory": "Uses GitHub", "history": [leaked]}]}
    path = tmp_path / "mem0.json"
    path.write_text(json.dumps(doc, indent=2), "utf-8")
    with pytest.raises(InvalidInput, match="refused"):
        await import_from(svc, "mem0", path, scope=PROJECT)
    assert await svc.memories() == ()
