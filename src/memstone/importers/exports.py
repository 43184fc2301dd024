"""Exports of other memory tools: mem0 (the JSON of ``get_all``) and the MCP reference memory server (JSONL).

mem0: ``{"results": [...], "relations": [...]}`` or a bare list. Each memory becomes an entry of the scope of its
``user_id`` (``memstone://users/<user_id>``; none: the import's scope), its categories and agent/run ids as tags,
and ``mem0-<id>`` as its slug. A memory's ``history`` (a list of mem0 history events, inside the memory or in a
top-level ``{"history": {id: [...]}}``) is kept in its evidence, so nothing is lost. Graph relations become facts.

MCP memory (``memory.jsonl``): an ``entity`` line becomes an entry (its observations as a bullet list, its
``entityType`` as a tag); a ``relation`` line becomes a memstone relation from the ``from`` entity to the ``to``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from ..domain.errors import InvalidInput
from .files import read_utf8
from .model import Draft, relation_kind, stable_slug
from .wording import classify

_SCOPE_ID = re.compile(r"[^a-z0-9._\-]+")


def _load_text(path: Path) -> str:
    path = path.expanduser().resolve()
    if not path.is_file():
        raise InvalidInput(f"{path}: no such file", hint="point at the exported file")
    return read_utf8(path)


def _line_of(text: str, index: int) -> int:
    return text.count("\n", 0, index) + 1


def user_scope(user_id: str) -> str:
    """``memstone://users/<id>`` for a mem0 user id (lowercased; other characters become ``-``)."""
    clean = _SCOPE_ID.sub("-", user_id.strip().lower()).strip("-._")[:128]
    return f"memstone://users/{clean or 'anonymous'}"


def _json(text: str, where: str, line: int | None = None) -> Any:
    """``text`` read as JSON; not JSON raises :class:`InvalidInput` at ``where``, on ``line`` (of a file read line
    by line) or else on the line the parser stopped at."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        at = f"{where}:{exc.lineno if line is None else line}"
        raise InvalidInput(f"{at}: not valid JSON ({exc.msg}, column {exc.colno})") from exc


def _elements(text: str, where: str) -> tuple[list[tuple[Any, int, int, str]], Any]:
    """The memories of a mem0 export with their line ranges and exact text, and the whole document."""
    doc = _json(text, where)
    if isinstance(doc, dict):
        if not isinstance(doc.get("results"), list):
            raise InvalidInput(f"{where}:1: a mem0 export has a 'results' list", hint="export with get_all()")
        start = text.index("[", text.index('"results"'))
    elif isinstance(doc, list):
        start = text.index("[")
    else:
        raise InvalidInput(f"{where}:1: a mem0 export is a JSON object or list")
    # Walk the results array with raw_decode to learn where each element starts and ends.
    decoder = json.JSONDecoder()
    out = []
    i = start + 1
    while True:
        while i < len(text) and text[i] in " \t\r\n,":
            i += 1
        if i >= len(text) or text[i] == "]":
            break
        value, end = decoder.raw_decode(text, i)
        out.append((value, _line_of(text, i), _line_of(text, end), text[i:end]))
        i = end
    return out, doc


def parse_mem0(path: Path) -> list[Draft]:
    where = str(path.expanduser().resolve())
    text = _load_text(path)
    elements, doc = _elements(text, where)
    history_map = doc.get("history") if isinstance(doc, dict) else None
    if history_map is not None and not isinstance(history_map, dict):
        raise InvalidInput(f"{where}:1: 'history' must map memory ids to lists of events")
    drafts: list[Draft] = []
    seen: set[str] = set()
    for value, first, last, raw in elements:
        at = f"{where}:{first}"
        if not isinstance(value, dict):
            raise InvalidInput(f"{at}: a memory must be a JSON object")
        memory, mid = value.get("memory"), value.get("id")
        if not isinstance(memory, str) or not memory.strip():
            raise InvalidInput(f"{at}: the memory has no 'memory' text", hint="each result needs id and memory")
        if not isinstance(mid, str) or not mid.strip():
            raise InvalidInput(f"{at}: the memory has no 'id'")
        if mid in seen:
            raise InvalidInput(f"{at}: memory id {mid} appears twice")
        seen.add(mid)
        categories = value.get("categories") or []
        if not isinstance(categories, list) or not all(isinstance(c, str) for c in categories):
            raise InvalidInput(f"{at}: 'categories' must be a list of strings")
        tags = ["mem0", *categories]
        for key in ("agent_id", "run_id"):
            if isinstance(value.get(key), str) and value[key]:
                tags.append(f"{key.removesuffix('_id')}:{value[key]}"[:64])
        history = value.get("history")
        if history is None and history_map is not None:
            history = history_map.get(mid)
        if history is not None and not isinstance(history, list):
            raise InvalidInput(f"{at}: 'history' must be a list of mem0 history events")
        excerpt = raw if not history or "history" in value else f"{raw}\n{json.dumps(history, indent=2)}"
        user = value.get("user_id")
        reading = classify(memory, heading=None, every_session=False)
        drafts.append(
            Draft(
                kind=reading.kind,
                text=memory,
                title=None,
                tags=tuple(sorted({t.strip().lower() for t in tags if t.strip()})),
                slug=f"mem0-{re.sub(r'[^a-z0-9]+', '-', mid.lower()).strip('-')}"[:64].rstrip("-"),
                important=reading.kind == "constraint",
                path=where,
                lines=(first, last),
                excerpt=excerpt,
                scope=user_scope(user) if isinstance(user, str) and user.strip() else None,
            )
        )
    relations = doc.get("relations") if isinstance(doc, dict) else None
    for i, rel in enumerate(relations or []):
        if not isinstance(rel, dict):
            raise InvalidInput(f"{where}: relations[{i}] must be a JSON object")
        source, verb = rel.get("source"), rel.get("relationship") or rel.get("relation")
        target = rel.get("destination") or rel.get("target")
        if not all(isinstance(v, str) and v for v in (source, verb, target)):
            raise InvalidInput(f"{where}: relations[{i}] needs source, relationship and destination")
        sentence = f"{source} {str(verb).replace('_', ' ')} {target}"
        drafts.append(
            Draft(
                kind="fact",
                text=sentence,
                title=None,
                tags=("graph", "mem0"),
                slug=stable_slug(sentence, "mem0-relation", str(source), str(verb), str(target)),
                path=where,
                lines=(1, _line_of(text, len(text))),
                excerpt=json.dumps(rel, ensure_ascii=False, sort_keys=True),
            )
        )
    return drafts


def parse_mcp_memory(path: Path) -> list[Draft]:
    where = str(path.expanduser().resolve())
    text = _load_text(path)
    entities: dict[str, dict[str, Any]] = {}
    relations: list[tuple[str, str, str, int]] = []
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        at = f"{where}:{number}"
        item = _json(line, where, number)
        if not isinstance(item, dict):
            raise InvalidInput(f"{at}: each line is a JSON object")
        kind = item.get("type")
        if kind == "entity":
            name, etype, obs = item.get("name"), item.get("entityType"), item.get("observations", [])
            if not isinstance(name, str) or not name.strip():
                raise InvalidInput(f"{at}: an entity needs a name")
            if not isinstance(etype, str) or not etype.strip():
                raise InvalidInput(f"{at}: entity {name!r} needs an entityType")
            if not isinstance(obs, list) or not all(isinstance(o, str) for o in obs):
                raise InvalidInput(f"{at}: observations of {name!r} must be a list of strings")
            if name in entities:
                raise InvalidInput(f"{at}: entity {name!r} appears twice (first on line {entities[name]['line']})")
            entities[name] = {"type": etype, "obs": obs, "line": number, "raw": line}
        elif kind == "relation":
            src, dst, verb = item.get("from"), item.get("to"), item.get("relationType")
            if not all(isinstance(v, str) and v.strip() for v in (src, dst, verb)):
                raise InvalidInput(f"{at}: a relation needs from, to and relationType")
            relations.append((str(src), str(dst), str(verb), number))
        else:
            raise InvalidInput(f"{at}: unknown line type {kind!r}", hint="expected 'entity' or 'relation'")
    slugs = {name: stable_slug(name, "mcp-memory", name) for name in entities}
    links: dict[str, set[tuple[str, str]]] = {name: set() for name in entities}
    unresolved: dict[str, list[str]] = {name: [] for name in entities}
    lines: dict[str, list[int]] = {name: [] for name in entities}
    raw_lines: dict[str, list[str]] = {name: [] for name in entities}
    for src, dst, verb, number in relations:
        if src not in entities:
            raise InvalidInput(f"{where}:{number}: relation from unknown entity {src!r}")
        if dst not in entities:
            unresolved[src].append(f"{where}:{number}: {verb} -> {dst!r}")
            continue
        links[src].add((relation_kind(verb), slugs[dst]))
        lines[src].append(number)
        raw_lines[src].append(text.split("\n")[number - 1])
    drafts = []
    for name, e in entities.items():
        body = "\n".join(f"- {o}" for o in e["obs"]) if e["obs"] else f"{name} ({e['type']})"
        drafts.append(
            Draft(
                kind="fact",
                text=body,
                title=name,
                tags=tuple(sorted({"mcp-memory", str(e["type"]).strip().lower()[:64]})),
                slug=slugs[name],
                path=where,
                lines=(e["line"], max([e["line"], *lines[name]])),
                excerpt="\n".join([e["raw"], *raw_lines[name]]),
                relations=tuple(sorted(links[name])),
                unresolved=tuple(unresolved[name]),
            )
        )
    return drafts


__all__ = ["parse_mcp_memory", "parse_mem0", "user_scope"]
