"""The Xema ledger: one Markdown file per entry, its history newest first, one provenance comment per event.

A ledger file renders exactly from authority and parses back to exactly the same values, so an export read
back into an empty store and exported again is byte-identical and keeps every content hash::

    ---
    id: "ent_…"                 frontmatter: the entry as it is now (derived, for people and tools)
    memory: "mem_…"
    owner: "memstone://orgs/acme/projects/web"
    kind: "lesson"
    …
    ---

    ## 2026-08-24T12:00:00.000Z · revise · v2
    <!-- memstone:event {"op":"revise","revision":7,…} -->

    The body of version 2, exactly as stored.

    ## 2026-08-20T09:00:00.000Z · add · v1
    <!-- memstone:event {…} -->

    The body of version 1.

Every event comment carries the change (op, versions, reason), the Revision it belongs to (number, hash,
author, surface, time, operation evidence) and, for add/revise, every hashed content field except the body,
plus the body's length in code points. The body is raw Markdown, read back by that length, so no body text
can break the format. ``<``, ``>`` and ``&`` are escaped inside comments, so a comment can never end early.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import cast

from .canonical import SOURCE_CONTENT_TAG, canonical_json_floatless, tagged_sha256
from .errors import IntegrityError
from .fields import plain_dict
from .ids import EntryId, EntryVersionId, MemoryId, SourceId
from .model import (
    ArtifactRef,
    Change,
    EntryContent,
    EntryState,
    EntryVersion,
    Provenance,
    Relation,
    Revision,
    Source,
    Surface,
)
from .purge import PURGED_TEXT, Tombstone
from .stamp import stamp_of

FORMAT = "memstone-export/v1"
INDEX_NAME = "memstone-export.json"
_EVENT_OPEN = "<!-- memstone:event "
_EVENT_CLOSE = " -->"


@dataclass(frozen=True, slots=True, kw_only=True)
class RevisionMeta:
    """What a ledger event records about the Revision it belongs to (the same in every file it touches)."""

    revision: int
    content_hash: str
    author: str | None
    surface: Surface
    created_at: str
    sources: tuple[SourceId, ...]
    artifacts: tuple[ArtifactRef, ...]

    @classmethod
    def of(cls, rev: Revision) -> RevisionMeta:
        return cls(revision=rev.revision, content_hash=rev.content_hash, **stamp_of(rev))

    def to_dict(self) -> dict[str, object]:
        """Its fields but ``revision``, which the event line carries beside it."""
        return {k: v for k, v in plain_dict(self).items() if k != "revision"}


@dataclass(frozen=True, slots=True, kw_only=True)
class LedgerEvent:
    """One change to one entry: the change itself, its Revision, and the new version for add/revise."""

    change: Change
    meta: RevisionMeta
    version: EntryVersion | None = None
    tombstone: Tombstone | None = None  # the version was purged (issue 12): its tombstone travels with it


@dataclass(frozen=True, slots=True, kw_only=True)
class Ledger:
    """Everything one ledger file holds: the entry's identity and its events, oldest first."""

    memory_id: MemoryId
    scope: str | None
    entry_id: EntryId
    events: tuple[LedgerEvent, ...]

    @property
    def versions(self) -> tuple[EntryVersion, ...]:
        return tuple(e.version for e in self.events if e.version is not None)

    @property
    def current(self) -> EntryVersion:
        return self.versions[-1]

    @property
    def state(self) -> EntryState:
        return "inactive" if self.events[-1].change.op == "deactivate" else "active"


def _q(value: object) -> str:
    return json.dumps(value, ensure_ascii=False)


def _comment_json(value: object) -> str:
    text = canonical_json_floatless(value)
    return text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")


def _content_fields(c: EntryContent) -> dict[str, object]:
    out = c.canonical()
    del out["text"]
    return out


def _event_dict(e: LedgerEvent) -> dict[str, object]:
    c = e.change
    out: dict[str, object] = {
        "op": c.op,
        "revision": e.meta.revision,
        "from": c.from_entry_version_id,
        "to": c.to_entry_version_id,
        "reason": c.reason,
        "rev": e.meta.to_dict(),
    }
    if e.version is not None:
        v = e.version
        version_out: dict[str, object] = {
            "version": v.version,
            "previous_version_id": v.previous_version_id,
            "entry_content_hash": v.entry_content_hash,
            "author": v.provenance.author,
            "surface": v.provenance.surface,
            "created_at": v.provenance.created_at,
            "content": _content_fields(v.content),
            "text_chars": len(v.content.text),
        }
        if e.tombstone is not None:
            t = e.tombstone
            version_out["purge"] = {
                "purge_id": t.purge_id,
                "reason": t.reason,
                "author": t.author,
                "surface": t.surface,
                "purged_at": t.purged_at,
            }
        out["version"] = version_out
    return out


def render_ledger(ledger: Ledger) -> str:
    """The ledger file's exact text."""
    current = ledger.current
    c = current.content
    first = ledger.versions[0]
    by_id = {v.entry_version_id: v for v in ledger.versions}
    lines = [
        "---",
        f"id: {_q(ledger.entry_id)}",
        f"memory: {_q(ledger.memory_id)}",
        f"owner: {_q(ledger.scope)}",
        f"kind: {_q(c.kind)}",
        f"slug: {_q(c.slug)}",
        f"title: {_q(c.title)}",
        f"tags: [{', '.join(_q(t) for t in c.tags)}]",
        f"important: {_q(c.important)}",
        f"mandatory: {_q(c.mandatory)}",
        f"state: {_q(ledger.state)}",
        f"created_at: {_q(first.provenance.created_at)}",
        f"updated_at: {_q(current.provenance.created_at)}",
        f"updated_by: {_q(current.provenance.author)}",
        f"revision: {current.version}",
        f"content_hash: {_q(current.entry_content_hash)}",
        "---",
        "",
    ]
    blocks = []
    for e in reversed(ledger.events):
        vid = e.change.to_entry_version_id or e.change.from_entry_version_id
        number = by_id[vid].version if vid in by_id else 0
        block = f"## {e.meta.created_at} · {e.change.op} · v{number}\n{_EVENT_OPEN}{_comment_json(_event_dict(e))}"
        block += _EVENT_CLOSE + "\n"
        if e.version is not None:
            block += "\n" + e.version.content.text + "\n"
        blocks.append(block)
    return "\n".join(lines) + "\n" + "\n".join(blocks)


class _Reader:
    def __init__(self, text: str, name: str) -> None:
        self.text = text
        self.pos = 0
        self.name = name

    def fail(self, why: str) -> IntegrityError:
        return IntegrityError(
            f"{self.name}: {why}",
            hint="this file is not an unmodified memstone export; restore it from the original export",
        )

    def line(self) -> str:
        end = self.text.find("\n", self.pos)
        if end < 0:
            raise self.fail("unexpected end of file")
        out = self.text[self.pos : end]
        self.pos = end + 1
        return out

    def take(self, n: int) -> str:
        if self.pos + n > len(self.text):
            raise self.fail("a body is shorter than its recorded length")
        out = self.text[self.pos : self.pos + n]
        self.pos += n
        return out

    def expect(self, literal: str) -> None:
        if not self.text.startswith(literal, self.pos):
            raise self.fail(f"expected {literal!r} at character {self.pos}")
        self.pos += len(literal)

    @property
    def done(self) -> bool:
        return self.pos >= len(self.text)


def _frontmatter(reader: _Reader) -> dict[str, object]:
    reader.expect("---\n")
    fields: dict[str, object] = {}
    while True:
        line = reader.line()
        if line == "---":
            break
        key, sep, raw = line.partition(": ")
        if not sep:
            raise reader.fail(f"bad frontmatter line {line[:40]!r}")
        try:
            fields[key] = json.loads(raw)
        except (ValueError, RecursionError) as exc:
            raise reader.fail(f"bad frontmatter value for {key}") from exc
    reader.expect("\n")
    return fields


def _str(d: Mapping[str, object], key: str, reader: _Reader, *, optional: bool = False) -> str | None:
    value = d.get(key)
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise reader.fail(f"field {key!r} must be a string")
    return value


def _int(d: Mapping[str, object], key: str, reader: _Reader) -> int:
    value = d.get(key)
    if not isinstance(value, int) or isinstance(value, bool):
        raise reader.fail(f"field {key!r} must be an integer")
    return value


def _dict(d: Mapping[str, object], key: str, reader: _Reader) -> dict[str, object]:
    value = d.get(key)
    if not isinstance(value, dict):
        raise reader.fail(f"field {key!r} must be an object")
    return cast(dict[str, object], value)


def _list(d: Mapping[str, object], key: str, reader: _Reader) -> list[object]:
    value = d.get(key)
    if not isinstance(value, list):
        raise reader.fail(f"field {key!r} must be a list")
    return cast(list[object], value)


def _refs(items: list[object], reader: _Reader) -> tuple[ArtifactRef, ...]:
    out = []
    for a in items:
        if not isinstance(a, dict):
            raise reader.fail("an artifact reference must be an object")
        out.append(ArtifactRef(memory_id=MemoryId(str(a.get("memory_id"))), revision=_int(a, "revision", reader)))
    return tuple(out)


def _content(d: dict[str, object], text: str, reader: _Reader, *, purged_hash: str | None) -> EntryContent:
    relations = []
    for r in _list(d, "relations", reader):
        if not isinstance(r, dict):
            raise reader.fail("a relation must be an object")
        relations.append(Relation(kind=str(r.get("kind")), target=EntryId(str(r.get("target")))))
    important, mandatory = d.get("important"), d.get("mandatory")
    if not isinstance(important, bool) or not isinstance(mandatory, bool):
        raise reader.fail("important and mandatory must be true or false")
    kind = _str(d, "kind", reader)
    assert kind is not None
    return EntryContent(
        kind=kind,
        text=text,
        title=_str(d, "title", reader, optional=True),
        tags=tuple(str(t) for t in _list(d, "tags", reader)),
        slug=_str(d, "slug", reader, optional=True),
        important=important,
        mandatory=mandatory,
        sources=tuple(SourceId(str(s)) for s in _list(d, "sources", reader)),
        artifacts=_refs(_list(d, "artifacts", reader), reader),
        relations=tuple(relations),
        purged_hash=purged_hash,
    )


def parse_ledger(text: str, *, name: str) -> Ledger:
    """Read a ledger file back. Anything that would not re-render to the same bytes, or whose content does not
    match its recorded hash, is refused with an IntegrityError naming the file."""
    reader = _Reader(text, name)
    head = _frontmatter(reader)
    entry_id = _str(head, "id", reader)
    memory_id = _str(head, "memory", reader)
    scope = _str(head, "owner", reader, optional=True)
    assert entry_id is not None and memory_id is not None
    newest_first: list[LedgerEvent] = []
    while not reader.done:
        if newest_first:
            reader.expect("\n")
        reader.expect("## ")
        reader.line()
        reader.expect(_EVENT_OPEN)
        end = reader.text.find(_EVENT_CLOSE + "\n", reader.pos)
        if end < 0:
            raise reader.fail("an event comment is not closed")
        try:
            data = json.loads(reader.text[reader.pos : end])
        except (ValueError, RecursionError) as exc:
            raise reader.fail("an event comment is not valid JSON") from exc
        reader.pos = end + len(_EVENT_CLOSE) + 1
        if not isinstance(data, dict):
            raise reader.fail("an event comment must be an object")
        newest_first.append(_event(data, EntryId(entry_id), MemoryId(memory_id), reader))
    if not newest_first:
        raise reader.fail("the ledger has no events")
    ledger = Ledger(
        memory_id=MemoryId(memory_id), scope=scope, entry_id=EntryId(entry_id), events=tuple(reversed(newest_first))
    )
    if not ledger.versions:
        raise reader.fail("the ledger has no content version")
    if render_ledger(ledger) != text:
        raise reader.fail("it does not match the export it claims to be (frontmatter or layout was edited)")
    return ledger


def _event(data: dict[str, object], entry_id: EntryId, memory_id: MemoryId, reader: _Reader) -> LedgerEvent:
    op = data.get("op")
    if op not in ("add", "revise", "deactivate", "reactivate"):
        raise reader.fail(f"unknown event op {op!r}")
    revision = _int(data, "revision", reader)
    change = Change(
        op=op,
        entry_id=entry_id,
        from_entry_version_id=cast(EntryVersionId | None, _str(data, "from", reader, optional=True)),
        to_entry_version_id=cast(EntryVersionId | None, _str(data, "to", reader, optional=True)),
        reason=_str(data, "reason", reader, optional=True),
    )
    rev = _dict(data, "rev", reader)
    content_hash = _str(rev, "content_hash", reader)
    created_at = _str(rev, "created_at", reader)
    surface = _str(rev, "surface", reader)
    assert content_hash is not None and created_at is not None and surface is not None
    meta = RevisionMeta(
        revision=revision,
        content_hash=content_hash,
        author=_str(rev, "author", reader, optional=True),
        surface=cast(Surface, surface),
        created_at=created_at,
        sources=tuple(SourceId(str(s)) for s in _list(rev, "sources", reader)),
        artifacts=_refs(_list(rev, "artifacts", reader), reader),
    )
    version: EntryVersion | None = None
    if op in ("add", "revise"):
        vd = _dict(data, "version", reader)
        reader.expect("\n")
        body = reader.take(_int(vd, "text_chars", reader))
        reader.expect("\n")
        recorded = _str(vd, "entry_content_hash", reader)
        purge = vd.get("purge")
        if purge is not None and (not isinstance(purge, dict) or body != PURGED_TEXT):
            raise reader.fail(f"version {change.to_entry_version_id} has a malformed purge record")
        content = _content(_dict(vd, "content", reader), body, reader, purged_hash=recorded if purge else None)
        if content.content_hash != recorded:
            raise reader.fail(f"version {change.to_entry_version_id} does not match its content hash")
        v_surface = _str(vd, "surface", reader)
        v_created = _str(vd, "created_at", reader)
        assert recorded is not None and v_surface is not None and v_created is not None
        if change.to_entry_version_id is None:
            raise reader.fail(f"{op} event names no new version")
        version = EntryVersion(
            memory_id=memory_id,
            entry_id=entry_id,
            entry_version_id=change.to_entry_version_id,
            version=_int(vd, "version", reader),
            previous_version_id=cast(EntryVersionId | None, _str(vd, "previous_version_id", reader, optional=True)),
            content=content,
            entry_content_hash=recorded,
            created_in_revision=revision,
            provenance=Provenance(
                author=_str(vd, "author", reader, optional=True),
                surface=cast(Surface, v_surface),
                created_at=v_created,
            ),
        )
        if isinstance(purge, dict):
            tombstone = Tombstone(
                purge_id=str(_str(purge, "purge_id", reader)), memory_id=memory_id, entry_id=entry_id,
                entry_version_id=version.entry_version_id, version=version.version, entry_content_hash=recorded,
                reason=str(_str(purge, "reason", reader)), author=_str(purge, "author", reader, optional=True),
                surface=str(_str(purge, "surface", reader)), purged_at=str(_str(purge, "purged_at", reader)),
            )  # fmt: skip
            return LedgerEvent(change=change, meta=meta, version=version, tombstone=tombstone)
    return LedgerEvent(change=change, meta=meta, version=version)


def render_source(source: Source) -> str:
    """A Source (evidence) as Markdown with frontmatter; the body is its exact content."""
    return (
        "---\n"
        f"id: {_q(source.source_id)}\n"
        f"kind: {_q(source.kind)}\n"
        f"uri: {_q(source.uri)}\n"
        f"created_at: {_q(source.created_at)}\n"
        f"content_hash: {_q(source.content_hash)}\n"
        "---\n\n"
        f"{source.content}\n"
    )


def parse_source(text: str, *, name: str) -> Source:
    """Read a Source file back, refusing it (by name) when its content does not match its hash."""
    reader = _Reader(text, name)
    head = _frontmatter(reader)
    if not text.endswith("\n"):
        raise reader.fail("unexpected end of file")
    content = text[reader.pos : -1]
    source = Source(
        source_id=SourceId(str(_str(head, "id", reader))),
        kind=str(_str(head, "kind", reader)),
        uri=_str(head, "uri", reader, optional=True),
        content=content,
        content_hash=str(_str(head, "content_hash", reader)),
        created_at=str(_str(head, "created_at", reader)),
    )
    erased = content == PURGED_TEXT  # evidence a purge erased keeps its id and original hash (domain/purge.py)
    if not erased and tagged_sha256(SOURCE_CONTENT_TAG, content.encode("utf-8")) != source.content_hash:
        raise reader.fail(f"source {source.source_id} does not match its content hash")
    if render_source(source) != text:
        raise reader.fail("it does not match the export it claims to be")
    return source


def events_of(
    memory_id: MemoryId,
    revisions: Sequence[Revision],
    versions: Sequence[EntryVersion],
    tombstones: Mapping[EntryVersionId, Tombstone] | None = None,
) -> dict[EntryId, list[LedgerEvent]]:
    """Group a Memory's whole history into per-entry ledgers (events oldest first); ``tombstones`` by version id."""
    by_id = {v.entry_version_id: v for v in versions}
    purged = tombstones or {}
    out: dict[EntryId, list[LedgerEvent]] = {}
    for rev in revisions:
        meta = RevisionMeta.of(rev)
        for c in rev.changes:
            version = by_id.get(c.to_entry_version_id) if c.op in ("add", "revise") and c.to_entry_version_id else None
            if c.op in ("add", "revise") and version is None:
                raise IntegrityError(f"{memory_id} revision {rev.revision} names a missing version")
            tombstone = purged.get(version.entry_version_id) if version is not None else None
            out.setdefault(c.entry_id, []).append(
                LedgerEvent(change=c, meta=meta, version=version, tombstone=tombstone)
            )
    return out


__all__ = [
    "FORMAT",
    "INDEX_NAME",
    "Ledger",
    "LedgerEvent",
    "RevisionMeta",
    "events_of",
    "parse_ledger",
    "parse_source",
    "render_ledger",
    "render_source",
]
