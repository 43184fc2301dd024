"""Plan an import against the store, then write it: validated first, evidence, one Revision per Memory.

Identity is the draft's slug in its scope. An entry is ``unchanged`` when its evidence already holds the draft's
exact input (so a re-import of unchanged input writes nothing, even after the entry was edited in memstone);
``revise`` when the input changed; ``add`` when no entry holds the slug; ``forgotten`` when the entry was forgotten
(an import never brings it back). Relations between entries created by the same import need the new entries'
ids, so such an import writes a second Revision that only adds those relations.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Literal

from ..domain.entry_fields import entry_fields
from ..domain.errors import InvalidInput, MemstoneError, SecretRefusedError
from ..domain.model import EntryInput, Relation, Revision
from ..domain.rules import normalize_kind, normalize_slug, normalize_tags, normalize_text, normalize_title
from ..domain.secrets import describe_findings, find_secrets
from .model import Draft

if TYPE_CHECKING:
    from ..domain.records import Record
    from ..service import MemoryService

Status = Literal["add", "revise", "unchanged", "forgotten"]
Progress = Callable[[int, int], None]


@dataclass(frozen=True, slots=True, kw_only=True)
class PlannedEntry:
    """What an import does (or, in a dry run, would do) with one draft."""

    status: Status
    scope: str
    draft: Draft
    entry_id: str | None = None

    def to_dict(self) -> dict[str, object]:
        d = self.draft
        return {
            "status": self.status,
            "scope": self.scope,
            "entry_id": self.entry_id,
            "kind": d.kind,
            "title": d.title,
            "slug": d.slug,
            "important": d.important,
            "mandatory": d.mandatory,
            "tags": list(d.tags),
            "file": d.path,
            "lines": list(d.lines),
            "relations": [{"kind": k, "target_slug": t} for k, t in d.relations],
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class ImportResult:
    """The outcome of ``import_from``: every planned entry, the Revisions written, what could not be linked."""

    format: str
    path: str
    dry_run: bool
    entries: tuple[PlannedEntry, ...]
    revisions: tuple[Revision, ...] = ()
    sources_written: int = 0
    unresolved: tuple[str, ...] = field(default=())
    stale: tuple[str, ...] = field(default=())  # "ent_… (file#L3-L4)": imported before, gone from the input now

    def count(self, status: Status) -> int:
        return sum(1 for e in self.entries if e.status == status)

    def to_dict(self) -> dict[str, object]:
        return {
            "format": self.format,
            "path": self.path,
            "dry_run": self.dry_run,
            "added": self.count("add"),
            "revised": self.count("revise"),
            "unchanged": self.count("unchanged"),
            "forgotten": self.count("forgotten"),
            "sources_written": self.sources_written,
            "revisions": [r.to_dict() for r in self.revisions],
            "entries": [e.to_dict() for e in self.entries],
            "unresolved": list(self.unresolved),
            "stale": list(self.stale),
        }


def validate(drafts: Sequence[Draft], closed_kinds: frozenset[str] | None) -> list[Draft]:
    """Every draft checked by the rules the service applies (and for secrets), naming the file and line."""
    out = []
    slugs: dict[tuple[str | None, str], str] = {}
    for d in drafts:
        try:
            clean = replace(
                d,
                kind=normalize_kind(d.kind, closed_kinds=closed_kinds),
                text=normalize_text(d.text),
                title=normalize_title(d.title),
                tags=normalize_tags(d.tags),
                slug=normalize_slug(d.slug) or "",
            )
            normalize_text(d.excerpt, what="the evidence")
        except InvalidInput as exc:
            raise InvalidInput(f"{d.where}: {exc.message}", hint=exc.hint) from exc
        found = find_secrets(d.excerpt) or find_secrets(d.text)
        if found:
            raise SecretRefusedError(
                f"{d.where}: refused: {describe_findings(found, where='this input')}; nothing was imported",
                hint="remove the credential from the file (name its environment variable instead), then import again",
            )
        key = (d.scope, clean.slug)
        if key in slugs:
            raise InvalidInput(f"{d.where}: two entries would share the slug {clean.slug!r} (also {slugs[key]})")
        slugs[key] = d.where
        out.append(clean)
    return out


async def plan(svc: MemoryService, drafts: Sequence[Draft], *, scope: str) -> list[PlannedEntry]:
    """What importing ``drafts`` would do, read from the store (nothing is written)."""
    planned: list[PlannedEntry] = []
    by_scope: dict[str, list[Draft]] = {}
    for d in drafts:
        by_scope.setdefault(d.scope or scope, []).append(d)
    for target, group in by_scope.items():
        existing = await _existing(svc, target)
        evidence = await _evidence(svc, [r for r in existing.values() if r.state == "active"])
        pending = {d.slug for d in group if d.slug not in existing}
        for d in group:
            rec = existing.get(d.slug)
            if rec is None:
                planned.append(PlannedEntry(status="add", scope=target, draft=d))
            elif rec.state != "active":
                planned.append(PlannedEntry(status="forgotten", scope=target, draft=d, entry_id=rec.entry_id))
            else:
                wanted = _relations(d, existing, pending)
                same = normalize_text(d.excerpt) in evidence.get(rec.entry_id, set()) and wanted is not None
                same = same and set(wanted or ()) <= set(rec.version.content.relations)
                status: Status = "unchanged" if same else "revise"
                planned.append(PlannedEntry(status=status, scope=target, draft=d, entry_id=rec.entry_id))
    return planned


async def stale(svc: MemoryService, drafts: Sequence[Draft], *, scope: str) -> tuple[str, ...]:
    """Live entries an earlier import took from these files that the input no longer holds (never forgotten
    by an import: the caller decides)."""
    files = {f"file://{d.path}#" for d in drafts}
    out = []
    for target in sorted({d.scope or scope for d in drafts}):
        existing = await _existing(svc, target)
        wanted = {d.slug for d in drafts if (d.scope or scope) == target}
        live = [r for slug, r in existing.items() if r.state == "active" and slug not in wanted]
        ids = sorted({s for r in live for s in r.version.content.sources})
        uris = {src.source_id: src.uri or "" for src in (await svc.sources(ids) if ids else ())}
        for r in live:
            came = sorted(u for s in r.version.content.sources if (u := uris.get(s, "")).split("#")[0] + "#" in files)
            if came:
                out.append(f"{r.entry_id} ({came[-1].removeprefix('file://')})")
    return tuple(out)


async def write(
    svc: MemoryService, planned: Sequence[PlannedEntry], *, progress: Progress | None = None
) -> tuple[tuple[Revision, ...], int]:
    """Record each changed draft's evidence, then one ``remember`` per Memory; then the deferred relations."""
    todo = [p for p in planned if p.status in ("add", "revise")]
    revisions: list[Revision] = []
    written = 0
    by_scope: dict[str, list[PlannedEntry]] = {}
    for p in todo:
        by_scope.setdefault(p.scope, []).append(p)
    for scope, group in by_scope.items():
        existing = await _existing(svc, scope)
        pending = {p.draft.slug for p in group if p.status == "add"}
        entries, sources = [], []
        deferred: list[Draft] = []
        for p in group:
            d = p.draft
            source = await svc.record_source("file", d.excerpt, uri=d.uri)
            written += 1
            if progress is not None:
                progress(written, len(todo))
            sources.append(source)
            relations = _relations(d, existing, pending)
            if relations is None:
                deferred.append(d)
            rec = existing.get(d.slug) if p.status == "revise" else None
            entries.append(_input(d, relations or (), [source.source_id], rec))
        rev = await svc.remember(None, entries=entries, sources=sources, scope=scope, surface="import")
        if rev is not None:
            revisions.append(rev)
        if deferred:
            existing = await _existing(svc, scope)
            links = []
            for d in deferred:
                rec = existing[d.slug]
                relations = _relations(d, existing, set()) or ()
                merged = tuple(sorted({*rec.version.content.relations, *relations}))
                links.append(_input(d, merged, None, rec, reason="import-links"))
            rev = await svc.remember(None, entries=links, scope=scope, surface="import")
            if rev is not None:
                revisions.append(rev)
    return tuple(revisions), written


def _input(
    d: Draft,
    relations: Sequence[Relation],
    sources: list[str] | None,
    rec: Record | None,
    *,
    reason: str = "import",
) -> EntryInput:
    return EntryInput(
        **entry_fields(d),
        relations=tuple(relations),
        sources=sources,  # type: ignore[arg-type]
        entry=rec.version if rec is not None else None,
        reason=reason,
    )


def _relations(d: Draft, existing: dict[str, Record], pending: set[str]) -> tuple[Relation, ...] | None:
    """The draft's relations as entry ids; None when a target is created by this same import (no id yet).

    A target that was forgotten is left out (an import does not link to what the user removed).
    """
    out = []
    for kind, slug in d.relations:
        rec = existing.get(slug)
        if rec is not None and rec.state == "active":
            out.append(Relation(kind=kind, target=rec.entry_id))
        elif rec is None and slug in pending:
            return None
    return tuple(sorted(set(out)))


async def _existing(svc: MemoryService, scope: str) -> dict[str, Record]:
    head = await svc.resolve(scope)
    if head is None:
        return {}
    records = await svc.list(memories=[head], include_inactive=True, precedence=False)
    out: dict[str, Record] = {}
    for r in records:
        if r.slug and (r.slug not in out or r.state == "active"):
            out[r.slug] = r
    return out


async def _evidence(svc: MemoryService, records: Sequence[Record]) -> dict[str, set[str]]:
    ids = sorted({s for r in records for s in r.version.content.sources})
    content = {}
    for i in range(0, len(ids), 500):
        for s in await svc.sources(ids[i : i + 500]):
            content[s.source_id] = s.content
    return {r.entry_id: {content[s] for s in r.version.content.sources if s in content} for r in records}


__all__ = ["ImportResult", "MemstoneError", "PlannedEntry", "plan", "stale", "validate", "write"]
