"""The read path's builders (domain/trusted.py) give exactly what the public constructors give."""

from __future__ import annotations

import dataclasses

import pytest

from memstone.backends.sql.rows import content_from_row, stored_purge
from memstone.domain.ids import EntryId, EntryVersionId, MemoryId, SourceId
from memstone.domain.model import ArtifactRef, EntryContent, MemoryHit, Relation
from memstone.domain.purge import purge_mark
from memstone.domain.trusted import CONTENT_FIELDS, HIT_FIELDS, search_hit, stored_content

HASH = "sha256:" + "ab" * 32


def test_the_builders_set_every_field_in_order() -> None:
    assert tuple(f.name for f in dataclasses.fields(EntryContent)) == CONTENT_FIELDS
    assert tuple(f.name for f in dataclasses.fields(MemoryHit)) == HIT_FIELDS


CONTENTS = [
    EntryContent(kind="fact", text="plain"),
    EntryContent(kind="decision", text='t "q" é\n', title="T", tags=("a", "b"), slug="s", important=True),
    EntryContent(
        kind="lesson",
        text="with refs",
        mandatory=True,
        sources=(SourceId("src_1"),),
        artifacts=(ArtifactRef(memory_id=MemoryId("mem_1"), revision=3),),
        relations=(Relation(kind="supersedes", target=EntryId("ent_2")),),
    ),
    EntryContent(kind="fact", text=purge_mark(HASH)),
]


@pytest.mark.parametrize("content", CONTENTS, ids=range(len(CONTENTS)))
def test_stored_content_is_the_constructors_content(content: EntryContent) -> None:
    built = stored_content(
        content.kind,
        purge_mark(content.purged_hash) if content.purged_hash else content.text,
        content.title,
        content.tags,
        content.slug,
        content.important,
        content.mandatory,
        content.sources,
        content.artifacts,
        content.relations,
    )
    assert built == content
    assert repr(built) == repr(content)
    assert built.content_hash == content.content_hash
    with pytest.raises(dataclasses.FrozenInstanceError):
        built.text = "changed"  # type: ignore[misc]


def test_a_stored_row_decodes_to_the_written_content() -> None:
    purged = CONTENTS[-1]
    text, title = stored_purge(HASH)
    row: tuple[object, ...] = (purged.kind, title, text, "[]", None, 0, 0, "[]", "[]", "[]")
    assert content_from_row(row) == purged
    full = CONTENTS[2]
    row = (
        "lesson",
        None,
        "with refs",
        "[]",
        None,
        0,
        1,
        '["src_1"]',
        '[{"memory_id":"mem_1","revision":3}]',
        '[{"kind":"supersedes","target":"ent_2"}]',
    )
    assert content_from_row(row) == full


def test_search_hit_is_the_constructors_hit() -> None:
    c = CONTENTS[1]
    ref = ArtifactRef(memory_id=MemoryId("mem_1"), revision=2)
    ranks, parts = {"fts": 1}, {"bm25": 1.5, "fusion": 0.5}
    built = search_hit(
        ref, EntryId("ent_1"), EntryVersionId("ver_1"), c, 0.5, ("fts",), HASH, "2026-01-01", ranks, "u/x", parts
    )
    # The content's own fields by name, the rest as a search passes them.
    shown = ("text", "kind", "title", "tags", "important", "mandatory", "slug")
    expected = MemoryHit(
        memory_ref=ref,
        entry_id=EntryId("ent_1"),
        entry_version_id=EntryVersionId("ver_1"),
        score=0.5,
        matched_by=("fts",),
        entry_content_hash=HASH,
        updated_at="2026-01-01",
        ranks=ranks,
        scope="u/x",
        contributions=parts,
        **{name: getattr(c, name) for name in shown},
    )
    assert built == expected
    assert repr(built) == repr(expected)
    assert built.to_dict() == expected.to_dict()
