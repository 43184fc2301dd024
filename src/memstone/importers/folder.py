"""A folder of human-editable Markdown kept in step with the store, both ways (``memstone sync DIR``).

Layout: ``DIR/<scope path>/<kind>/<slug or name>.md`` (``DIR/orgs/acme/projects/web/constraint/no-env.md``), one
file per live entry, YAML frontmatter as the Graphit seed shows it (``id``, ``version_id``, ``type``, ``title``,
``tags``, ``important``, ``mandatory``, ...) and the entry's text as the body. ``DIR/.memstone-sync.json``
remembers, per entry, the file and the version it was written from.

One sync, per entry:

- file edited, store unchanged since the file was written → a new version (surface ``human``);
- file edited, store changed too → a **conflict**: reported, the file left as it is, nothing written (set its
  ``version_id`` to the store's current one after merging, and sync again; or delete the file to take the store's);
- file unedited, store changed → the file is rewritten; entry forgotten in the store → the file is removed;
- file deleted → the entry is forgotten (if the store changed it since, the file comes back instead);
- new file → a new entry (scope and kind from its path unless its frontmatter says otherwise);
- new entry in the store → a new file.

Writes go through ``MemoryService.remember``/``forget``: one Revision per Memory for edits and new entries, one for
the forgets.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..domain.entry_fields import entry_fields
from ..domain.errors import InvalidInput
from ..domain.fields import FieldDict, PlainDict
from ..domain.model import EntryInput
from ..domain.rules import normalize_tags, normalize_text, normalize_title, slugify
from ..domain.scopes import parse_scope
from .files import read_utf8
from .frontmatter import quote, split_frontmatter

if TYPE_CHECKING:
    from ..domain.records import Record
    from ..service import MemoryService

STATE_NAME = ".memstone-sync.json"
STATE_FORMAT = "memstone.sync.v1"


@dataclass(frozen=True, slots=True, kw_only=True)
class SyncConflict(FieldDict):
    """An edit made against an older version than the store's current one (or against a forgotten entry)."""

    path: str
    entry_id: str
    base_version_id: str | None
    current_version_id: str | None
    reason: str


@dataclass(slots=True, kw_only=True)
class SyncReport(PlainDict):
    """What one sync did, in both directions."""

    directory: str
    new_versions: list[str] = field(default_factory=list)  # entry ids revised from edited files
    new_entries: list[str] = field(default_factory=list)  # entry ids created from new files
    forgotten: list[str] = field(default_factory=list)  # entry ids forgotten for deleted files
    files_written: list[str] = field(default_factory=list)  # files (re)written from the store
    files_removed: list[str] = field(default_factory=list)  # files removed for entries forgotten in the store
    conflicts: list[SyncConflict] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.new_versions or self.new_entries or self.forgotten or self.files_written or self.files_removed)


@dataclass(frozen=True, slots=True, kw_only=True)
class FileEntry:
    """A file's frontmatter and body, as the fields of an entry."""

    entry_id: str | None
    version_id: str | None
    kind: str
    title: str | None
    tags: tuple[str, ...]
    slug: str | None
    important: bool
    mandatory: bool
    text: str
    scope: str


def render_file(r: Record) -> str:
    """An entry as its sync file: Graphit frontmatter, then the text."""
    v = r.version
    c = v.content
    lines = [
        "---",
        f"id: {quote(r.entry_id)}",
        f"version_id: {quote(v.entry_version_id)}",
        f"revision: {v.version}",
        f"type: {quote(c.kind)}",
        f"title: {quote(c.title) if c.title is not None else 'null'}",
        f"tags: [{', '.join(quote(t) for t in c.tags)}]",
        f"slug: {quote(c.slug) if c.slug else 'null'}",
        f"important: {'true' if c.important else 'false'}",
        f"mandatory: {'true' if c.mandatory else 'false'}",
        f"scope: {quote(r.scope or '')}",
        f"created_at: {r.created_at}",
        f"updated_at: {v.provenance.created_at}",
        f"updated_by: {quote(v.provenance.author) if v.provenance.author else 'null'}",
        "---",
        "",
        c.text,
    ]
    return "\n".join(lines) + "\n"


def file_name(r: Record) -> str:
    if r.slug:
        return f"{r.slug}.md"
    return f"{slugify(r.title or r.text)[:40]}-{r.entry_id[-6:].lower()}.md"


def parse_file(path: Path, root: Path) -> FileEntry:
    """Read a sync file; scope and kind default to its place in the folder."""
    where = str(path)
    text = read_utf8(path)
    fm = split_frontmatter(text, where=where)
    parts = path.relative_to(root).parts
    scope_value = fm.data.get("scope")
    if isinstance(scope_value, str) and scope_value:
        scope = parse_scope(scope_value).uri
    else:
        try:
            scope = parse_scope("memstone://" + "/".join(parts[:-2])).uri
        except InvalidInput as exc:
            raise InvalidInput(
                f"{where}: the folder does not name a scope",
                hint="put it under <scope path>/<kind>/, e.g. users/me/fact/",
            ) from exc
    kind = fm.data.get("type") or (parts[-2] if len(parts) >= 2 else None)
    flags = {}
    for name in ("important", "mandatory"):
        value = fm.data.get(name, False)
        if not isinstance(value, bool):
            raise InvalidInput(f"{where}: {name} must be true or false, got {value!r}")
        flags[name] = value
    tags = fm.data.get("tags", [])
    if isinstance(tags, str):
        tags = [t.strip() for t in tags.split(",") if t.strip()]
    if not isinstance(tags, list):
        raise InvalidInput(f"{where}: tags must be a list")
    title, slug = fm.data.get("title"), fm.data.get("slug")
    entry_id, version_id = fm.data.get("id"), fm.data.get("version_id")
    for name, value in (("type", kind), ("title", title), ("slug", slug), ("id", entry_id), ("version_id", version_id)):
        if value is not None and not isinstance(value, str):
            raise InvalidInput(f"{where}: {name} must be text, got {value!r}")
    if not isinstance(kind, str):
        raise InvalidInput(f"{where}: no type", hint="add 'type: fact' (or another kind) to the frontmatter")
    try:
        body = normalize_text(fm.body)
        clean_title = normalize_title(title)
        clean_tags = normalize_tags(tags)
    except InvalidInput as exc:
        raise InvalidInput(f"{where}: {exc.message}", hint=exc.hint) from exc
    return FileEntry(
        entry_id=entry_id or None,  # type: ignore[arg-type]
        version_id=version_id or None,  # type: ignore[arg-type]
        kind=kind,
        title=clean_title,
        tags=clean_tags,
        slug=slug or None,  # type: ignore[arg-type]
        important=flags["important"],
        mandatory=flags["mandatory"],
        text=body,
        scope=scope,
    )


def _same(f: FileEntry, r: Record) -> bool:
    c = r.version.content
    return (f.kind, f.title, f.tags, f.slug, f.important, f.mandatory, f.text) == (
        c.kind,
        c.title,
        c.tags,
        c.slug,
        c.important,
        c.mandatory,
        c.text,
    )


def _input(f: FileEntry, r: Record | None) -> EntryInput:
    c = r.version.content if r is not None else None
    return EntryInput(
        **entry_fields(f),
        relations=c.relations if c is not None else (),
        artifacts=c.artifacts if c is not None else (),
        entry=r.version if r is not None else None,
        reason="edited in the sync folder" if r is not None else "new file in the sync folder",
    )


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class Folder:
    """The sync folder: its files, and the state of the last sync."""

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.root = Path(directory).expanduser().resolve()
        self.state_path = self.root / STATE_NAME
        self.state: dict[str, dict[str, str]] = {}
        if self.state_path.exists():
            try:
                data = json.loads(self.state_path.read_text("utf-8"))
            except ValueError as exc:
                raise InvalidInput(
                    f"{self.state_path}: not valid JSON", hint="delete it to start the folder over"
                ) from exc
            if not isinstance(data, dict) or data.get("format") != STATE_FORMAT:
                raise InvalidInput(f"{self.state_path}: not a memstone sync state")
            self.state = dict(data.get("entries", {}))

    def files(self) -> list[Path]:
        if not self.root.exists():
            return []
        out: list[Path] = []
        for base, dirs, names in os.walk(self.root):
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            out.extend(Path(base) / n for n in sorted(names) if n.endswith(".md") and not n.startswith("."))
        return out

    def rel(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix()

    def write(self, r: Record, report: SyncReport, *, old: str | None = None) -> None:
        scope = parse_scope(r.scope) if r.scope else None
        assert scope is not None
        path = old or "/".join([*scope.path, r.kind, file_name(r)])
        target = self.root / path
        if old is None and target.exists() and self.state.get(r.entry_id, {}).get("path") != path:
            path = "/".join([*scope.path, r.kind, f"{target.stem}-{r.entry_id[-6:].lower()}.md"])
            target = self.root / path
        data = render_file(r).encode("utf-8")
        if not target.exists() or target.read_bytes() != data:
            target.parent.mkdir(parents=True, exist_ok=True)
            tmp = target.with_name(target.name + ".memstone-tmp")
            tmp.write_bytes(data)
            os.replace(tmp, target)
            report.files_written.append(path)
        self.state[r.entry_id] = {
            "path": path,
            "version_id": r.entry_version_id,
            "sha256": _digest(data),
            "scope": scope.uri,
        }

    def save(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        tmp = self.state_path.with_name(STATE_NAME + ".tmp")
        payload = {"format": STATE_FORMAT, "entries": dict(sorted(self.state.items()))}
        tmp.write_text(json.dumps(payload, indent=1, sort_keys=True) + "\n", "utf-8")
        os.replace(tmp, self.state_path)


async def sync_folder(
    svc: MemoryService, directory: str | os.PathLike[str], *, scopes: Sequence[str] = ()
) -> SyncReport:
    """Bring ``directory`` and the store in step (every bound scope, or those named). See the module docstring."""
    folder = Folder(directory)
    report = SyncReport(directory=str(folder.root))
    bound = [s for s, _ in await svc.scopes()]
    wanted = [parse_scope(s).uri for s in scopes] if scopes else bound
    live: dict[str, Record] = {}
    for scope in wanted:
        if scope in bound:
            for r in await svc.list(scopes=[scope], precedence=False):
                live[r.entry_id] = r
    by_path = {v["path"]: eid for eid, v in folder.state.items()}
    edits: dict[str, list[tuple[FileEntry, Record | None, str]]] = {}
    forgets: dict[str, list[Record]] = {}
    rewrite: list[tuple[Record, str | None]] = []
    seen_files: set[str] = set()
    seen_ids: dict[str, str] = {}  # entry id -> the file that holds it (a moved file keeps its entry)
    removals: list[tuple[Path, str, str]] = []
    for path in folder.files():
        rel = folder.rel(path)
        seen_files.add(rel)
        eid = by_path.get(rel)
        if eid is not None and _digest(path.read_bytes()) == folder.state[eid].get("sha256"):
            _claim(seen_ids, eid, path, rel)
            current = live.get(eid)
            if current is None:
                if folder.state[eid].get("scope") in wanted:
                    removals.append((path, rel, eid))
            elif current.entry_version_id != folder.state[eid]["version_id"]:
                rewrite.append((current, rel))
            continue
        f = parse_file(path, folder.root)
        if f.scope not in wanted and scopes:
            continue
        named = f.entry_id or eid
        if named is None:
            edits.setdefault(f.scope, []).append((f, None, rel))
            continue
        eid = named
        _claim(seen_ids, eid, path, rel)
        current = live.get(eid)
        base = f.version_id or folder.state.get(eid, {}).get("version_id")
        if current is not None and _same(f, current):
            rewrite.append((current, rel))  # nothing to write; refresh the frontmatter
        elif current is None:
            report.conflicts.append(
                SyncConflict(
                    path=rel,
                    entry_id=eid,
                    base_version_id=base,
                    current_version_id=None,
                    reason="the entry was forgotten in the store after this file was written",
                )
            )
        elif current.entry_version_id != base:
            report.conflicts.append(
                SyncConflict(
                    path=rel,
                    entry_id=eid,
                    base_version_id=base,
                    current_version_id=current.entry_version_id,
                    reason="edited against an older version than the store's current one",
                )
            )
        else:
            edits.setdefault(current.scope or f.scope, []).append((f, current, rel))
    for eid, info in list(folder.state.items()):
        if info["path"] in seen_files or eid in seen_ids:
            continue
        current = live.get(eid)
        if current is None:
            folder.state.pop(eid)
        elif current.entry_version_id == info["version_id"]:
            forgets.setdefault(current.scope or "", []).append(current)
        else:
            folder.state.pop(eid)
            rewrite.append((current, None))  # deleted a file whose entry changed since: the store's version wins
    in_state = set(folder.state)
    for eid, r in live.items():
        if eid not in in_state and not any(x.entry_id == eid for x, _ in rewrite):
            rewrite.append((r, None))
    # Every file was read and checked above; only now does anything change.
    for path, rel, eid in removals:
        path.unlink()
        report.files_removed.append(rel)
        folder.state.pop(eid)
    await _write_edits(svc, folder, edits, report)
    for scope, gone in forgets.items():
        head = await svc.resolve(scope)
        assert head is not None
        await svc.forget(head, entries=[r.version for r in gone], reason="file deleted in the sync folder")
        for r in gone:
            report.forgotten.append(r.entry_id)
            folder.state.pop(r.entry_id, None)
    for r, at in rewrite:
        if r.entry_id not in report.new_versions:
            folder.write(r, report, old=at)
    folder.save()
    return report


def _claim(seen: dict[str, str], entry_id: str, path: Path, rel: str) -> None:
    """Note that ``path`` holds ``entry_id``; two files holding one entry (a copy) are refused by name."""
    if entry_id in seen:
        raise InvalidInput(
            f"{path}: entry {entry_id} is also the file {seen[entry_id]}",
            hint="a copied file keeps its id: remove the 'id' and 'version_id' lines to make it a new entry",
        )
    seen[entry_id] = rel


async def _write_edits(
    svc: MemoryService, folder: Folder, edits: dict[str, list[tuple[FileEntry, Record | None, str]]], report: SyncReport
) -> None:
    for scope, items in edits.items():
        entries = [_input(f, r) for f, r, _ in items]
        rev = await svc.remember(None, entries=entries, scope=scope, surface="human")
        assert rev is not None
        added = [c.entry_id for c in rev.changes if c.op == "add"]
        records = {r.entry_id: r for r in await svc.list(memories=[rev], precedence=False)}
        fresh = iter(added)
        for _f, r, rel in items:
            if r is not None:
                report.new_versions.append(r.entry_id)
                folder.write(records[r.entry_id], report, old=rel)
            else:
                eid = next(fresh)
                report.new_entries.append(eid)
                folder.write(records[eid], report, old=rel)


async def watch_folder(
    svc: MemoryService,
    directory: str | os.PathLike[str],
    *,
    scopes: Sequence[str] = (),
    interval: float = 1.0,
    on_sync: Callable[[SyncReport], None] | None = None,
    stop: asyncio.Event | None = None,
) -> None:
    """Sync, then again whenever a file or a Memory head changes (polled every ``interval`` s) until ``stop``."""
    stop = stop or asyncio.Event()
    last: object = None
    while not stop.is_set():
        snapshot = await _snapshot(svc, Folder(directory))
        if snapshot != last:
            report = await sync_folder(svc, directory, scopes=scopes)
            if on_sync is not None:
                on_sync(report)
            last = await _snapshot(svc, Folder(directory))
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), timeout=interval)


async def _snapshot(svc: MemoryService, folder: Folder) -> object:
    files = tuple((folder.rel(p), p.stat().st_mtime_ns, p.stat().st_size) for p in folder.files())
    heads = tuple((h.memory_id, h.revision) for h in await svc.memories())
    return files, heads


__all__ = ["Folder", "SyncConflict", "SyncReport", "parse_file", "render_file", "sync_folder", "watch_folder"]
