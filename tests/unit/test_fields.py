"""``PlainDict``: a value whose ``to_dict`` is its fields, JSON-ready, in declaration order (issue 11)."""

from __future__ import annotations

import json

from memstone.domain.ids import EntryId, EntryVersionId, MemoryId, SourceId
from memstone.domain.model import (
    ArtifactRef,
    Change,
    EntryContent,
    EntryVersion,
    MemoryHit,
    Revision,
    RevisionChanges,
    SearchResult,
    Source,
)
from memstone.domain.records import Record


def _revision() -> Revision:
    change = Change(
        op="add", entry_id=EntryId("ent_1"), from_entry_version_id=None, to_entry_version_id=EntryVersionId("ver_1")
    )
    return Revision(
        memory_id=MemoryId("mem_1"),
        revision=2,
        content_hash="h",
        manifest_root="m",
        entry_count=1,
        active_count=1,
        changes=(change,),
        sources=(SourceId("src_1"),),
        artifacts=(ArtifactRef(memory_id=MemoryId("mem_0"), revision=1),),
        author="ann",
        surface="human",
        created_at="2026-01-01T00:00:00Z",
    )


def test_a_plain_dict_is_its_fields_in_order_with_nested_values_as_dicts_and_tuples_as_lists() -> None:
    d = _revision().to_dict()
    assert list(d) == [
        "memory_id",
        "revision",
        "content_hash",
        "manifest_root",
        "entry_count",
        "active_count",
        "changes",
        "sources",
        "artifacts",
        "author",
        "surface",
        "created_at",
    ]
    assert d["changes"] == [
        {
            "op": "add",
            "entry_id": "ent_1",
            "from_entry_version_id": None,
            "to_entry_version_id": "ver_1",
            "reason": None,
        },
    ]
    assert d["sources"] == ["src_1"]
    assert d["artifacts"] == [{"memory_id": "mem_0", "revision": 1}]
    summary = RevisionChanges(memory_ref=_revision().ref, changes=_revision().changes).to_dict()
    assert summary == {"memory_ref": {"memory_id": "mem_1", "revision": 2}, "changes": d["changes"]}
    assert json.loads(json.dumps(d)) == d  # JSON-ready: nothing but dicts, lists and scalars


def test_a_record_and_its_version_show_the_same_content_fields() -> None:
    content = EntryContent(kind="fact", text="t", title="T", tags=("a", "b"), slug="s", important=True)
    version = EntryVersion(
        memory_id=MemoryId("mem_1"),
        entry_id=EntryId("ent_1"),
        entry_version_id=EntryVersionId("ver_1"),
        version=1,
        previous_version_id=None,
        content=content,
        entry_content_hash="h",
        created_in_revision=1,
    )
    ref = ArtifactRef(memory_id=MemoryId("mem_1"), revision=1)
    record = Record(memory_ref=ref, version=version, state="active", created_at="")
    for name in ("kind", "text", "title", "tags", "slug", "important", "mandatory"):
        assert getattr(record, name) == getattr(version, name) == getattr(content, name)
    assert record.category == "important"


def test_the_dicts_read_off_the_fields_keep_their_wire_order_and_are_json_ready() -> None:
    # SearchResult and Source declare their fields in the order their JSON always had (dups9): a field moved or
    # added shows here, not as a silent change to every search answer.
    ref = ArtifactRef(memory_id=MemoryId("mem_1"), revision=2)
    hit = MemoryHit(
        memory_ref=ref,
        entry_id=EntryId("ent_1"),
        entry_version_id=EntryVersionId("ver_1"),
        text="t",
        score=0.5,
        matched_by=("fts",),
        tags=("a",),
        ranks={"fts": 1},
    )
    d = SearchResult(hits=(hit,), mode="fts", requested_mode="auto").to_dict()
    assert list(d) == ["mode", "requested_mode", "fallback_reason", "order", "hits", "shadowed"]
    h = d["hits"][0]  # type: ignore[index]
    assert list(h) == [
        "memory_ref", "entry_id", "entry_version_id", "kind", "title", "text", "tags", "slug", "important",
        "mandatory", "score", "matched_by", "ranks", "contributions", "entry_content_hash", "updated_at", "scope",
        "superseded", "current_entry_version_id", "stale",
    ]  # fmt: skip
    assert h["memory_ref"] == {"memory_id": "mem_1", "revision": 2} and h["tags"] == ["a"]
    assert h["ranks"] == {"fts": 1} and h["ranks"] is not hit.ranks
    assert json.loads(json.dumps(d)) == d
    source = Source(source_id=SourceId("src_1"), kind="note", content="c").to_dict()
    assert list(source) == ["source_id", "kind", "uri", "content", "content_hash", "created_at"]
    v = _revision()
    version = EntryVersion(
        memory_id=v.memory_id,
        entry_id=EntryId("ent_1"),
        entry_version_id=EntryVersionId("ver_1"),
        version=1,
        previous_version_id=None,
        content=EntryContent(kind="fact", text="t"),
        entry_content_hash="h",
        created_in_revision=2,
    ).to_dict()
    assert list(version)[:5] == ["memory_id", "entry_id", "entry_version_id", "version", "previous_version_id"]
    assert list(version)[-5:] == ["entry_content_hash", "created_in_revision", "author", "surface", "created_at"]
    assert version["kind"] == "fact" and "content" not in version and "provenance" not in version
