"""Markdown both ways: export a store to the Xema layout and import it back, losslessly.

Layout under the export directory::

    memstone-export.json                                   index: format, Memories, every file and its SHA-256
    orgs/<org>/memories/org/<kind>/<slug>.md               one ledger per entry (see domain/ledger.py)
    orgs/<org>/projects/<project>/memories/project/<kind>/<slug>.md
    users/<user>/memories/user/<kind>/<slug>.md
    unbound/<memory-id>/memories/memory/<kind>/<slug>.md    Memories bound to no scope
    sources/<source-id>.md                                  evidence cited by entries or Revisions

Each scope directory holds Xema's ``/memories/{org|project|user}/{kind}/{slug}.md``. An entry without a slug is
written under a stable generated one (from its first version and its id), which is never added to its content.

Import replays every Revision exactly (same ids, versions, reasons, authors, times, evidence), so every entry
content hash and every Revision hash is preserved and a second export is byte-identical. Before anything is
written, import checks every file against the index, re-renders every ledger, re-hashes every version and
recomputes every Revision hash; the first mismatch is refused with an error that names the file.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath

from ..domain.errors import Conflict, IntegrityError, InvalidInput
from ..domain.fields import FieldDict
from ..domain.ids import EntryVersionId, MemoryId, SourceId
from ..domain.ledger import (
    FORMAT,
    INDEX_NAME,
    Ledger,
    LedgerEvent,
    RevisionMeta,
    events_of,
    parse_ledger,
    parse_source,
    render_ledger,
    render_source,
)
from ..domain.manifest import EMPTY_ROOT, ManifestReader
from ..domain.model import ArtifactRef, EntryVersion, Revision, Source
from ..domain.plan import apply_plan
from ..domain.purge import PURGED_TEXT, Tombstone
from ..domain.rules import normalize_kind, slugify
from ..domain.scopes import parse_scope
from ..domain.stamp import stamp_of
from ..ports import (
    MemoryBackend,
    MemoryVersionsQuery,
    RevisionQuery,
    RevisionsQuery,
    ScopeQuery,
    SourcesQuery,
    WritePlan,
)
from .core import ServiceCore
from .settle import settle


@dataclass(frozen=True, slots=True, kw_only=True)
class ExportReport(FieldDict):
    """What ``export`` wrote."""

    directory: str
    memories: int
    entries: int
    versions: int
    revisions: int
    sources: int
    files: int


@dataclass(frozen=True, slots=True, kw_only=True)
class ImportReport(FieldDict):
    """What ``import`` did: Revisions written, and those the store already had (an idempotent re-import)."""

    directory: str
    memories: int
    revisions_written: int
    revisions_present: int
    sources_written: int
    files: int


def generated_slug(first: EntryVersion) -> str:
    """A stable file name for an entry without a slug: its first version's words plus its id's tail."""
    c = first.content
    return f"{slugify(c.title or c.text)}-{first.entry_id[-8:].lower()}"


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _dump(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, indent=1, sort_keys=True) + "\n"


def _base_dir(memory_id: MemoryId, scope: str | None) -> tuple[str, ...]:
    if scope is None:
        return ("unbound", memory_id, "memories", "memory")
    parsed = parse_scope(scope)
    return (*parsed.path, "memories", parsed.tier)


# ---------------------------------------------------------------------------------------------- export
async def export_markdown(
    svc: ServiceCore,
    directory: str | os.PathLike[str],
    *,
    scopes: Sequence[str] = (),
    memories: Sequence[Revision | ArtifactRef | str] = (),
) -> ExportReport:
    """Write the whole history of the selected Memories (default: every Memory) as Xema ledgers."""
    root = Path(directory)
    bindings = {m: (s, at) for s, m, at in await svc.backend.read(ScopeQuery())}
    if scopes or memories:
        refs, _ = await svc._select(scopes, memories, what="export")
        heads = [await svc.head(r.memory_id) for r in refs]
    else:
        heads = sorted(await svc.memories(), key=lambda h: h.memory_id)
    files: dict[str, bytes] = {}
    index_memories = []
    source_ids: set[SourceId] = set()
    n_entries = n_versions = n_revisions = 0
    purged = {t.entry_version_id: t for t in await svc.backend.tombstones()}
    for head in heads:
        scope, bound_at = bindings.get(head.memory_id, (None, None))
        revisions = await svc.backend.read(RevisionsQuery(memory_id=head.memory_id, first=1, last=head.revision))
        versions = await svc.backend.read(MemoryVersionsQuery(memory_id=head.memory_id))
        n_revisions += len(revisions)
        n_versions += len(versions)
        for rev in revisions:
            source_ids.update(rev.sources)
        for v in versions:
            source_ids.update(v.content.sources)
        ledgers = [
            Ledger(memory_id=head.memory_id, scope=scope, entry_id=eid, events=tuple(events))
            for eid, events in events_of(head.memory_id, revisions, versions, purged).items()
        ]
        n_entries += len(ledgers)
        base = _base_dir(head.memory_id, scope)
        wanted = []
        for ledger in ledgers:
            current = ledger.current
            name = current.content.slug or generated_slug(ledger.versions[0])
            kind_dir = current.content.kind.lower()
            wanted.append(((kind_dir, name, ledger.state != "active", ledger.entry_id.encode("utf-8")), ledger))
        used: set[str] = set()
        for (kind_dir, name, _, _), ledger in sorted(wanted, key=lambda w: w[0]):
            candidate, n = name, 1
            while f"{kind_dir}/{candidate}".lower() in used:
                n += 1
                candidate = f"{name}-{n}"
            used.add(f"{kind_dir}/{candidate}".lower())
            files[str(PurePosixPath(*base, kind_dir, f"{candidate}.md"))] = render_ledger(ledger).encode("utf-8")
        index_memories.append(
            {
                "memory_id": head.memory_id,
                "scope": scope,
                "bound_at": bound_at,
                "revisions": head.revision,
                "head_content_hash": head.content_hash,
            }
        )
    sources = await svc.backend.read(SourcesQuery(source_ids=tuple(sorted(source_ids))))
    for source in sources:
        files[f"sources/{source.source_id}.md"] = render_source(source).encode("utf-8")
    index = {
        "format": FORMAT,
        "memories": index_memories,
        "files": [{"path": p, "sha256": _sha256(files[p])} for p in sorted(files)],
    }
    _prepare(root)
    for path in sorted(files):
        target = _safe_path(root, path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(files[path])
    _safe_path(root, INDEX_NAME).write_bytes(_dump(index).encode("utf-8"))
    return ExportReport(
        directory=str(root),
        memories=len(heads),
        entries=n_entries,
        versions=n_versions,
        revisions=n_revisions,
        sources=len(sources),
        files=len(files) + 1,
    )


def _prepare(root: Path) -> None:
    """An export goes to a new or empty directory, or replaces an earlier memstone export in place."""
    if not root.exists():
        root.mkdir(parents=True)
        return
    if not root.is_dir():
        raise InvalidInput(f"{root} is not a directory")
    if not any(root.iterdir()):
        return
    index_path = _safe_path(root, INDEX_NAME)
    if not index_path.is_file():
        raise InvalidInput(
            f"{root} is not empty and holds no earlier memstone export",
            hint="export into a new or empty directory (or one a previous export wrote)",
        )
    old = _read_index(root)
    for item in old["files"]:
        path = _safe_path(root, item["path"])
        if path.is_file():
            path.unlink()
    index_path.unlink()
    for dirpath, _, _ in sorted(os.walk(root), key=lambda w: -len(w[0])):
        if Path(dirpath) != root and not any(Path(dirpath).iterdir()):
            Path(dirpath).rmdir()


# ---------------------------------------------------------------------------------------------- import
def _read_index(root: Path) -> dict[str, list[dict[str, object]]]:
    path = _safe_path(root, INDEX_NAME)
    if not path.is_file():
        raise InvalidInput(f"{root} has no {INDEX_NAME}", hint="import reads a directory written by `memstone export`")
    try:
        index = json.loads(path.read_bytes().decode("utf-8"))
    except (ValueError, RecursionError) as exc:
        raise IntegrityError(f"{path}: the export index is not valid JSON") from exc
    if not isinstance(index, dict) or index.get("format") != FORMAT:
        raise IntegrityError(f"{path}: not a {FORMAT} index")
    files, mems = index.get("files"), index.get("memories")
    if not isinstance(files, list) or not isinstance(mems, list):
        raise IntegrityError(f"{path}: the export index has no file or memory list")
    for item in [*files, *mems]:
        if not isinstance(item, dict):
            raise IntegrityError(f"{path}: malformed export index")
    return {"files": files, "memories": mems}


def _safe_path(root: Path, rel: object) -> Path:
    """``rel`` under ``root``, refused unless it is a plain relative path that stays inside ``root``.

    No part of it may be a symbolic link (a planted link would let an export overwrite or delete, or an import
    read, files elsewhere), and the resolved path must lie under the resolved ``root``.
    """
    if not isinstance(rel, str) or not rel or rel.startswith("/") or "\\" in rel:
        raise IntegrityError(f"{root / INDEX_NAME}: unsafe path {rel!r}")
    parts = PurePosixPath(rel).parts
    if any(p in ("", ".", "..") for p in parts):
        raise IntegrityError(f"{root / INDEX_NAME}: unsafe path {rel!r}")
    path = root
    for part in parts:
        path = path / part
        if path.is_symlink():
            raise IntegrityError(
                f"{path}: is a symbolic link; memstone reads and writes only plain files inside {root}",
                hint="remove the link, or export to (import from) a directory without links",
            )
    base = root.resolve()
    if not path.resolve().is_relative_to(base):  # pragma: no cover - no link and no '..' cannot leave root
        raise IntegrityError(f"{path}: leads out of {root}")
    return path


@dataclass(slots=True)
class _Memory:
    memory_id: MemoryId
    scope: str | None
    bound_at: str | None
    revisions: int
    head_hash: str
    plans: dict[int, tuple[WritePlan, RevisionMeta, list[str]]]


async def import_markdown(svc: ServiceCore, directory: str | os.PathLike[str]) -> ImportReport:
    """Read an export back. Idempotent: Revisions the store already has (with the same hashes) are skipped."""
    root = Path(directory)
    index = _read_index(root)
    ledgers: list[tuple[str, Ledger]] = []
    sources: list[Source] = []
    for item in index["files"]:
        rel = item.get("path")
        path = _safe_path(root, rel)
        if not path.is_file():
            raise IntegrityError(f"{path}: listed in the export index but missing")
        data = path.read_bytes()
        if _sha256(data) != item.get("sha256"):
            raise IntegrityError(
                f"{path}: tampered with (its SHA-256 does not match the export index)",
                hint="restore the file from the original export",
            )
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise IntegrityError(f"{path}: not UTF-8") from exc
        if str(rel).startswith("sources/"):
            sources.append(parse_source(text, name=str(path)))
        else:
            ledgers.append((str(path), parse_ledger(text, name=str(path))))
    _check_erased(sources, ledgers)
    memories = _plan_memories(root, index["memories"], ledgers)
    closed = await svc.kinds()
    for name, ledger in ledgers:
        for v in ledger.versions:
            try:
                normalize_kind(v.content.kind, closed_kinds=closed)
            except InvalidInput as exc:
                raise InvalidInput(f"{name}: {exc.message}", hint=exc.hint) from exc
    # Everything is checked; now compare with what the store already holds, then write.
    done: dict[MemoryId, int] = {}
    present = 0
    for mem in memories.values():
        done[mem.memory_id] = await _already_present(svc, mem)
        present += done[mem.memory_id]
        await _check_binding(svc, mem)
    written_sources = 0
    wanted = tuple(sorted(s.source_id for s in sources))
    known = {s.source_id for s in await svc.backend.read(SourcesQuery(source_ids=wanted))}
    for source in sources:
        if source.source_id not in known:
            written_sources += 1
        stored = await svc.backend.put_source(source)
        if stored.content_hash != source.content_hash:
            raise Conflict(f"source {source.source_id} already exists in this store with other content")
    written = versions = 0
    while True:
        progressed = False
        pending = False
        for mid in sorted(memories):
            mem = memories[mid]
            r = done[mid] + 1
            if r > mem.revisions:
                continue
            pending = True
            plan, meta, names = mem.plans[r]
            if not _deps_met(plan, done, memories):
                continue
            bind_now = mem.scope is not None and r == 1 and mem.bound_at == meta.created_at
            rev = await svc._commit(replace(plan, bind_scope=mem.scope if bind_now else None))
            if rev.content_hash != meta.content_hash:  # pragma: no cover - the simulation already proved it
                raise IntegrityError(f"{', '.join(names)}: revision {r} of {mid} did not reproduce its hash")
            if r == 1 and mem.scope is not None and not bind_now:
                assert mem.bound_at is not None
                async with svc.backend.begin() as uow:
                    await uow.bind(mem.scope, mid, mem.bound_at)
            done[mid] = r
            written += 1
            versions += len(plan.new_versions)
            progressed = True
        if not pending:
            break
        if not progressed:
            raise IntegrityError(f"{root}: the export cites Revisions it does not contain (artifact references)")
    for mem in memories.values():
        await _check_binding(svc, mem, bind_missing=True)
    await carry_purges(svc.backend, [e.tombstone for _, ledger in ledgers for e in ledger.events if e.tombstone])
    await settle(svc.backend, versions)  # the store's tables were written in bulk
    return ImportReport(
        directory=str(root),
        memories=len(memories),
        revisions_written=written,
        revisions_present=present,
        sources_written=written_sources,
        files=len(index["files"]) + 1,
    )


def _plan_memories(
    root: Path, listed: list[dict[str, object]], ledgers: list[tuple[str, Ledger]]
) -> dict[MemoryId, _Memory]:
    index_name = str(root / INDEX_NAME)
    memories: dict[MemoryId, _Memory] = {}
    for m in listed:
        mid, scope, bound_at, revs, head_hash = (
            m.get("memory_id"),
            m.get("scope"),
            m.get("bound_at"),
            m.get("revisions"),
            m.get("head_content_hash"),
        )
        if not isinstance(mid, str) or not isinstance(revs, int) or not isinstance(head_hash, str):
            raise IntegrityError(f"{index_name}: malformed memory entry")
        if scope is not None and (not isinstance(scope, str) or parse_scope(scope).uri != scope):
            raise IntegrityError(f"{index_name}: bad scope {scope!r}")
        memories[MemoryId(mid)] = _Memory(
            memory_id=MemoryId(mid),
            scope=scope,
            bound_at=bound_at if isinstance(bound_at, str) else None,
            revisions=revs,
            head_hash=head_hash,
            plans={},
        )
    grouped: dict[MemoryId, dict[int, list[tuple[str, LedgerEvent]]]] = {}
    for name, ledger in ledgers:
        mem = memories.get(ledger.memory_id)
        if mem is None or mem.scope != ledger.scope:
            raise IntegrityError(f"{name}: names a Memory or scope the export index does not list")
        for e in ledger.events:
            grouped.setdefault(ledger.memory_id, {}).setdefault(e.meta.revision, []).append((name, e))
    for mid, mem in memories.items():
        by_rev = grouped.get(mid, {})
        if sorted(by_rev) != list(range(1, mem.revisions + 1)):
            raise IntegrityError(f"{index_name}: the ledgers of {mid} do not hold Revisions 1..{mem.revisions}")
        nodes: dict[str, bytes] = {}
        reader = ManifestReader(nodes.__getitem__)
        manifest_root = EMPTY_ROOT
        numbers: dict[EntryVersionId, int] = {}  # every version replayed so far, for apply_plan's checks
        for r in range(1, mem.revisions + 1):
            items = by_rev[r]
            names = sorted({n for n, _ in items})
            metas = {e.meta for _, e in items}
            if len(metas) != 1:
                raise IntegrityError(f"{', '.join(names)}: disagree about revision {r} of {mid}")
            (meta,) = metas
            changes = tuple(sorted((e.change for _, e in items), key=lambda c: c.entry_id.encode("utf-8")))
            versions = tuple(e.version for _, e in items if e.version is not None)
            plan = WritePlan(
                tombstones=tuple(e.tombstone for _, e in items if e.tombstone is not None),
                memory_id=mid,
                base_revision=r - 1,
                changes=changes,
                new_versions=versions,
                **stamp_of(meta),
            )
            try:
                # The same rules the store core applies on commit (domain/plan.py), replayed file by file.
                applied = apply_plan(plan, manifest_root, reader, numbers.get)
            except InvalidInput as exc:
                raise IntegrityError(
                    f"{', '.join(names)}: revision {r} of {mid} is not a valid Revision: {exc.message}",
                    hint="restore the files from the original export",
                ) from exc
            manifest_root = applied.revision.manifest_root
            nodes.update(applied.nodes)
            numbers.update({v.entry_version_id: v.version for v in versions})
            if applied.revision.content_hash != meta.content_hash:
                raise IntegrityError(
                    f"{', '.join(names)}: revision {r} of {mid} does not reproduce its hash (a file was edited)",
                    hint="restore the files from the original export",
                )
            mem.plans[r] = (plan, meta, names)
        if mem.revisions and mem.plans[mem.revisions][1].content_hash != mem.head_hash:
            raise IntegrityError(f"{index_name}: the head of {mid} does not match its ledgers")
    return memories


async def _already_present(svc: ServiceCore, mem: _Memory) -> int:
    """How many of the export's Revisions the store already has; a store that disagrees is a conflict."""
    first = await svc.backend.read(RevisionQuery(ref=ArtifactRef(memory_id=mem.memory_id, revision=1)))
    if first is None:
        return 0
    stored = (await svc.head(mem.memory_id)).revision
    upto = min(stored, mem.revisions)
    revisions = await svc.backend.read(RevisionsQuery(memory_id=mem.memory_id, first=1, last=upto))
    for rev in revisions:
        if rev.content_hash != mem.plans[rev.revision][1].content_hash:
            raise Conflict(
                f"{mem.memory_id} in this store differs from the export at revision {rev.revision}",
                hint="import into an empty store, or one that holds an earlier state of the same Memory",
            )
    return upto


async def _check_binding(svc: ServiceCore, mem: _Memory, *, bind_missing: bool = False) -> None:
    if mem.scope is None:
        return
    bound = await svc.resolve(mem.scope)
    if bound is not None and bound.memory_id != mem.memory_id:
        raise Conflict(f"scope {mem.scope} is bound to {bound.memory_id} here, not {mem.memory_id}")
    other = (await svc._scope_map()).get(mem.memory_id)
    if other is not None and other != mem.scope:
        raise Conflict(f"{mem.memory_id} is bound to {other} here, not {mem.scope}")
    if bound is None and bind_missing:
        async with svc.backend.begin() as uow:
            if not await uow.bind(mem.scope, mem.memory_id, mem.bound_at or svc._clock()):
                raise Conflict(f"{mem.memory_id} is bound to another scope here, not {mem.scope}")


def _check_erased(sources: Sequence[Source], ledgers: Sequence[tuple[str, Ledger]]) -> None:
    """A source a purge erased may be cited only by purged versions (else a file was edited)."""
    erased = {s.source_id for s in sources if s.content == PURGED_TEXT}
    for name, ledger in ledgers:
        for e in ledger.events:
            if e.version is not None and e.tombstone is None and erased & set(e.version.content.sources):
                raise IntegrityError(
                    f"{name}: cites an erased source but was not purged",
                    hint="restore the files from the original export",
                )


async def carry_purges(backend: MemoryBackend, tombstones: Sequence[Tombstone]) -> int:
    """Purge here what the source purged after this store got the version (a re-import or a resumed copy);
    returns how many versions were purged now. Versions written by this run came with their tombstones."""
    have = {t.entry_version_id for t in await backend.tombstones()}
    missing = tuple(t for t in tombstones if t.entry_version_id not in have)
    if missing:
        await backend.purge_versions(missing)
    return len(missing)


def _deps_met(plan: WritePlan, done: dict[MemoryId, int], memories: dict[MemoryId, _Memory]) -> bool:
    refs = set(plan.artifacts)
    for v in plan.new_versions:
        refs.update(v.content.artifacts)
    for ref in refs:
        if ref.memory_id == plan.memory_id:
            if ref.revision > plan.base_revision:
                return False
        elif ref.memory_id in memories and done.get(ref.memory_id, 0) < ref.revision:
            return False
    return True


__all__ = ["ExportReport", "ImportReport", "carry_purges", "export_markdown", "generated_slug", "import_markdown"]
