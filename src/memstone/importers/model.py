"""What every importer produces: drafts of entries, each with the exact lines of input it came from."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field

from ..domain.rules import MAX_TEXT_BYTES, slugify

# The sync folder and `memstone render` mark what memstone wrote; importers skip a rendered block.
BLOCK_BEGIN = "<!-- memstone:begin"
BLOCK_END = "<!-- memstone:end"


@dataclass(frozen=True, slots=True, kw_only=True)
class Draft:
    """One entry an importer wants, before it is checked against the store.

    ``slug`` is the entry's identity across re-imports (stable for the same rule in the same file); ``excerpt``
    is the exact input it came from (``path`` lines ``lines``), recorded as its evidence; ``relations`` name
    target drafts by slug.
    """

    kind: str
    text: str
    slug: str
    path: str
    lines: tuple[int, int]
    excerpt: str
    title: str | None = None
    tags: tuple[str, ...] = ()
    important: bool = False
    mandatory: bool = False
    relations: tuple[tuple[str, str], ...] = ()
    scope: str | None = None
    unresolved: tuple[str, ...] = field(default=())

    @property
    def where(self) -> str:
        return f"{self.path}:{self.lines[0]}"

    @property
    def uri(self) -> str:
        return f"file://{self.path}#L{self.lines[0]}-L{self.lines[1]}"


def stable_slug(lead: str, *identity: str) -> str:
    """A readable kebab-case slug from ``lead`` plus a short hash of ``identity`` (at most 64 characters)."""
    digest = hashlib.sha256("\0".join(identity).encode("utf-8")).hexdigest()[:8]
    head = slugify(lead)[:40].rstrip("-") or "entry"
    return f"{head}-{digest}"


def relation_kind(name: str) -> str:
    """``works_at`` / ``Relates To`` → ``works-at`` / ``relates-to`` (memstone relation kinds are kebab-case)."""
    words = re.findall(r"[a-z0-9]+", name.lower())
    return "-".join(words)[:64].rstrip("-") or "relates-to"


def split_long(text: str, first_line: int) -> list[tuple[str, int, int]]:
    """Split text over the entry size limit at blank lines: ``(chunk, first line, last line)`` each."""
    if len(text.encode("utf-8")) <= MAX_TEXT_BYTES - 256:
        return [(text, first_line, first_line + text.count("\n"))]
    out: list[tuple[str, int, int]] = []
    lines = text.split("\n")
    start = 0
    size = 0
    for i, line in enumerate(lines):
        size += len(line.encode("utf-8")) + 1
        boundary = not line.strip() or i == len(lines) - 1
        if (size > (MAX_TEXT_BYTES - 256) // 2 and boundary) or size > MAX_TEXT_BYTES - 256:
            out.append(("\n".join(lines[start : i + 1]), first_line + start, first_line + i))
            start, size = i + 1, 0
    if start < len(lines) and "\n".join(lines[start:]).strip():
        out.append(("\n".join(lines[start:]), first_line + start, first_line + len(lines) - 1))
    return [(c, a, b) for c, a, b in out if c.strip()]


__all__ = ["BLOCK_BEGIN", "BLOCK_END", "Draft", "relation_kind", "split_long", "stable_slug"]
