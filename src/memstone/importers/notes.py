"""basic-memory project folders: one Markdown note per entity, with frontmatter, observations and relations.

A note becomes one entry: its title, its body as the text (observations and relations stay in it, so nothing is
lost), tags from the frontmatter, the observation categories and ``#hashtags``, the permalink as the slug, and a
memstone relation for every ``- relation_type [[Target]]`` line (or inline ``[[link]]``) whose target is a note of
the same folder. Links to notes outside the folder are reported as unresolved; their text is kept.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from ..domain.errors import InvalidInput
from ..domain.model import KNOWN_KINDS
from ..domain.rules import MAX_TEXT_BYTES as MAX
from ..domain.rules import slugify
from .files import read_utf8
from .frontmatter import split_frontmatter
from .model import Draft, relation_kind, split_long
from .rules import SKIP_DIRS

_OBSERVATION = re.compile(r"^\s*[-*]\s+\[([^\]]+)\]\s+(.+)$")
_RELATION = re.compile(r"^\s*[-*]\s+([A-Za-z][\w \-]*?)\s+\[\[([^\]]+)\]\]")
_LINK = re.compile(r"\[\[([^\]|#]+)(?:[#|][^\]]*)?\]\]")
_HASHTAG = re.compile(r"(?<![\w&/])#([A-Za-z][\w\-]*)")


def parse_notes(path: Path) -> list[Draft]:
    """Every note of a basic-memory project folder (or one note file)."""
    path = path.expanduser().resolve()
    if path.is_file():
        files, root = [path], path.parent
    elif path.is_dir():
        root = path
        files = []
        for base, dirs, names in os.walk(path):
            dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith("."))
            files.extend(Path(base) / n for n in sorted(names) if n.endswith(".md"))
    else:
        raise InvalidInput(f"{path}: no such file or directory")
    if not files:
        raise InvalidInput(f"{path}: no Markdown notes here", hint="point at a basic-memory project folder")
    notes = [_read(f, root) for f in files]
    by_name: dict[str, str] = {}
    for n in notes:
        for name in (n["title"], n["permalink"], n["stem"]):
            by_name.setdefault(str(name).lower(), str(n["slug"]))
    drafts: list[Draft] = []
    for n in notes:
        relations: set[tuple[str, str]] = set()
        unresolved: list[str] = []
        body = str(n["body"])
        for line in body.split("\n"):
            rel = _RELATION.match(line)
            targets = [(relation_kind(rel.group(1)), rel.group(2))] if rel else []
            if not rel:
                targets = [("links-to", m.group(1)) for m in _LINK.finditer(line)]
            for kind, target in targets:
                slug = by_name.get(target.strip().lower())
                if slug is None:
                    unresolved.append(f"{n['file']}: [[{target}]]")
                elif slug != n["slug"]:
                    relations.add((kind, slug))
        chunks = split_long(body.strip("\n"), int(str(n["body_line"])))
        for i, (chunk, first, last) in enumerate(chunks):
            part = f" (part {i + 1})" if len(chunks) > 1 else ""
            drafts.append(
                Draft(
                    kind=str(n["kind"]),
                    text=chunk,
                    title=f"{n['title']}{part}",
                    tags=tuple(n["tags"]),  # type: ignore[arg-type]
                    slug=str(n["slug"]) if i == 0 else f"{str(n['slug'])[:56]}-part-{i + 1}",
                    path=str(n["file"]),
                    lines=(1 if i == 0 else first, last),
                    excerpt=str(n["text"]) if len(chunks) == 1 and len(str(n["text"]).encode()) <= MAX else chunk,
                    relations=tuple(sorted(relations)) if i == 0 else (),
                    unresolved=tuple(unresolved) if i == 0 else (),
                )
            )
    return drafts


def _read(file: Path, root: Path) -> dict[str, object]:
    where = str(file)
    text = read_utf8(file)
    fm = split_frontmatter(text, where=where)
    title = fm.data.get("title") or file.stem
    if not isinstance(title, str):
        raise InvalidInput(f"{where}:2: title must be text, got {title!r}")
    kind = fm.data.get("type") or "note"
    if not isinstance(kind, str):
        raise InvalidInput(f"{where}:2: type must be text, got {kind!r}")
    tags: set[str] = {"basic-memory"}
    raw_tags = fm.data.get("tags", [])
    if isinstance(raw_tags, str):
        raw_tags = [t.strip() for t in raw_tags.split(",")]
    if not isinstance(raw_tags, list):
        raise InvalidInput(f"{where}:2: tags must be a list, got {raw_tags!r}")
    tags.update(t.lstrip("#") for t in raw_tags if t.strip())
    if kind not in KNOWN_KINDS:
        tags.add(f"type:{kind}"[:64])
    for line in fm.body.split("\n"):
        obs = _OBSERVATION.match(line)
        if obs:
            tags.add(obs.group(1).strip()[:64])
            tags.update(h[:64] for h in _HASHTAG.findall(obs.group(2)))
    if not fm.body.strip():
        raise InvalidInput(f"{where}:{fm.body_line}: the note has no body", hint="write something, or delete it")
    permalink = fm.data.get("permalink")
    rel = file.relative_to(root).with_suffix("").as_posix()
    slug = slugify(str(permalink) if isinstance(permalink, str) and permalink else rel)[:64].rstrip("-")
    return {
        "file": where,
        "title": title.strip(),
        "stem": file.stem,
        "permalink": permalink or rel,
        "slug": slug,
        "kind": kind if kind in KNOWN_KINDS else "fact",
        "tags": sorted(t for t in {" ".join(t.split()).lower() for t in tags} if t)[:32],
        "body": fm.body,
        "body_line": fm.body_line,
        "text": text,
    }


__all__ = ["parse_notes"]
