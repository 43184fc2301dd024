"""Internal construction of the two frozen values a search builds per hit, without their generated ``__init__``.

A frozen slotted dataclass sets each field through ``object.__setattr__`` (a lookup and a call per field, 19 for
a :class:`MemoryHit`). The builders here write the same slots through their own descriptors, positionally, and
return an object equal to the one the public constructor builds (``tests/unit/test_trusted.py`` holds them
together, field by field). They are for the store's own read path only: :func:`stored_content` for content
decoded from a version row (its hash is checked by the caller before it is served), :func:`search_hit` for a
verified search hit. Public construction keeps its ``__init__`` and its checks.
"""

from __future__ import annotations

from collections.abc import Mapping

from .ids import EntryId, EntryVersionId, SourceId
from .model import ArtifactRef, Channel, EntryContent, MemoryHit, Relation
from .purge import PURGE_MARK, PURGED_TEXT

# The fields each builder sets, in its order (the test compares them with ``dataclasses.fields``).
CONTENT_FIELDS = (
    "kind",
    "text",
    "title",
    "tags",
    "slug",
    "important",
    "mandatory",
    "sources",
    "artifacts",
    "relations",
    "purged_hash",
)
HIT_FIELDS = (
    "memory_ref",
    "entry_id",
    "entry_version_id",
    "text",
    "score",
    "matched_by",
    "kind",
    "title",
    "tags",
    "important",
    "mandatory",
    "entry_content_hash",
    "updated_at",
    "ranks",
    "slug",
    "scope",
    "superseded",
    "current_entry_version_id",
    "contributions",
)
_new = object.__new__
(
    _c_kind,
    _c_text,
    _c_title,
    _c_tags,
    _c_slug,
    _c_important,
    _c_mandatory,
    _c_sources,
    _c_artifacts,
    _c_relations,
    _c_purged,
) = (EntryContent.__dict__[n].__set__ for n in CONTENT_FIELDS)
(
    _h_ref,
    _h_entry,
    _h_version,
    _h_text,
    _h_score,
    _h_matched,
    _h_kind,
    _h_title,
    _h_tags,
    _h_important,
    _h_mandatory,
    _h_hash,
    _h_updated,
    _h_ranks,
    _h_slug,
    _h_scope,
    _h_superseded,
    _h_current,
    _h_contributions,
) = (MemoryHit.__dict__[n].__set__ for n in HIT_FIELDS)


def stored_content(
    kind: str,
    text: str,
    title: str | None,
    tags: tuple[str, ...],
    slug: str | None,
    important: bool,
    mandatory: bool,
    sources: tuple[SourceId, ...],
    artifacts: tuple[ArtifactRef, ...],
    relations: tuple[Relation, ...],
) -> EntryContent:
    """``EntryContent(kind=…, …)`` as its ``__init__`` and ``__post_init__`` build it (a text starting with the
    purge mark is read as purged content, see domain/purge.py)."""
    purged_hash = None
    if text.startswith(PURGE_MARK):
        purged_hash = text[len(PURGE_MARK) :]
        text = PURGED_TEXT
    c = _new(EntryContent)
    _c_kind(c, kind)
    _c_text(c, text)
    _c_title(c, title)
    _c_tags(c, tags)
    _c_slug(c, slug)
    _c_important(c, important)
    _c_mandatory(c, mandatory)
    _c_sources(c, sources)
    _c_artifacts(c, artifacts)
    _c_relations(c, relations)
    _c_purged(c, purged_hash)
    return c


def search_hit(
    memory_ref: ArtifactRef,
    entry_id: EntryId,
    entry_version_id: EntryVersionId,
    content: EntryContent,
    score: float,
    matched_by: tuple[Channel, ...],
    entry_content_hash: str,
    updated_at: str,
    ranks: Mapping[str, int],
    scope: str | None,
    contributions: Mapping[str, float],
) -> MemoryHit:
    """The current-version ``MemoryHit`` of a verified ``content`` (not superseded), as its ``__init__`` builds it."""
    h = _new(MemoryHit)
    _h_ref(h, memory_ref)
    _h_entry(h, entry_id)
    _h_version(h, entry_version_id)
    _h_text(h, content.text)
    _h_score(h, score)
    _h_matched(h, matched_by)
    _h_kind(h, content.kind)
    _h_title(h, content.title)
    _h_tags(h, content.tags)
    _h_important(h, content.important)
    _h_mandatory(h, content.mandatory)
    _h_hash(h, entry_content_hash)
    _h_updated(h, updated_at)
    _h_ranks(h, ranks)
    _h_slug(h, content.slug)
    _h_scope(h, scope)
    _h_superseded(h, False)
    _h_current(h, None)
    _h_contributions(h, contributions)
    return h


__all__ = ["CONTENT_FIELDS", "HIT_FIELDS", "search_hit", "stored_content"]
