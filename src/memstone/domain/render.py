"""The Graphit presentation: an entry version as Markdown with YAML frontmatter (derived, never persisted)."""

from __future__ import annotations

import json

from .model import EntryVersion


def _q(value: str) -> str:
    # A JSON string is a valid YAML double-quoted scalar.
    return json.dumps(value, ensure_ascii=False)


def render_markdown(version: EntryVersion, *, created_at: str, state: str, current: bool) -> str:
    """Render one entry version as the Graphit Markdown + YAML frontmatter presentation."""
    c = version.content
    lines = [
        "---",
        f"id: {_q(version.entry_id)}",
        f"title: {_q(c.title) if c.title is not None else 'null'}",
        f"type: {_q(c.kind)}",
        f"tags: [{', '.join(_q(t) for t in c.tags)}]",
        f"created_at: {created_at}",
        f"updated_at: {version.provenance.created_at}",
        f"important: {'true' if c.important else 'false'}",
        f"mandatory: {'true' if c.mandatory else 'false'}",
        f"revision: {version.version}",
        f"updated_by: {_q(version.provenance.author) if version.provenance.author else 'null'}",
        f"memory: {_q(version.memory_id)}",
        f"version_id: {_q(version.entry_version_id)}",
        f"previous_version_id: {_q(version.previous_version_id) if version.previous_version_id else 'null'}",
        f"slug: {_q(c.slug) if c.slug else 'null'}",
        f"state: {_q(state)}",
        f"current: {'true' if current else 'false'}",
        f"content_hash: {_q(version.entry_content_hash)}",
    ]
    if c.relations:
        lines.append("relations:")
        lines.extend(f"  - {{kind: {_q(r.kind)}, target: {_q(r.target)}}}" for r in c.relations)
    if c.sources:
        lines.append(f"sources: [{', '.join(_q(s) for s in c.sources)}]")
    lines.append("---")
    lines.append("")
    if c.title:
        lines.append(f"# {c.title}")
        lines.append("")
    lines.append(c.text)
    return "\n".join(lines) + "\n"
