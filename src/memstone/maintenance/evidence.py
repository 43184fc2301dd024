"""Evidence checks for the stale judge: code-anchored entries whose cited file changed in git, and summaries
whose summarized entries changed after them.

A *code-anchored* entry cites a file through a ``file:`` Source (``file://src/app.py#L3-L4`` from an import,
``file:pyproject.toml`` from capture). Its evidence changed when all of these hold:

- the Source's stored text no longer matches what the file says now (the cited lines, or the whole file when
  no lines are cited), or the file is gone from the work tree; and
- git records it: a commit touching the path after the entry's version was written, or uncommitted changes
  to the path (a deleted file counts as changed).

So an unchanged excerpt is never stale, whatever git says, and a Source whose text was never a verbatim copy
is stale only when git shows the file changed since. A path outside the repository is not judged.

A *summary* is an entry with a ``summarizes`` relation: it is stale when an entry it summarizes was revised
after the summary's version was written, or is no longer active.

The checks read git and files only; no model is called.
"""

from __future__ import annotations

import datetime as _dt
import re
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..domain.errors import InvalidInput
from ..domain.ids import EntryId, SourceId
from ..domain.model import EntryVersion, Source

SUMMARIZES = "summarizes"
_LINES = re.compile(r"^L(\d+)(?:-L?(\d+))?$")
GIT_TIMEOUT_S = 30.0


@dataclass(frozen=True, slots=True)
class Anchor:
    """One file an entry cites: the path as written, the line range (None: the whole file), the stored text."""

    path: str
    lines: tuple[int, int] | None
    excerpt: str


def anchor_of(source: Source) -> Anchor | None:
    """The file a ``file:`` Source cites, or None for any other Source."""
    uri = source.uri or ""
    if uri.startswith("file://"):
        rest = uri.removeprefix("file://")
    elif uri.startswith("file:"):
        rest = uri.removeprefix("file:")
    else:
        return None
    path, _, frag = rest.partition("#")
    if not path.strip():
        return None
    lines = None
    if m := _LINES.match(frag):
        first = int(m.group(1))
        lines = (first, int(m.group(2) or first))
    return Anchor(path=path.strip(), lines=lines, excerpt=source.content)


class GitEvidence:
    """Evidence checks against one git work tree (``root``: any directory inside it)."""

    def __init__(self, root: str | Path) -> None:
        where = Path(root).expanduser()
        top = self._git(where, "rev-parse", "--show-toplevel")
        if top is None:
            raise InvalidInput(
                f"{where} is not inside a git work tree", hint="pass the repository the memories cite (--repo DIR)"
            )
        self.root = Path(top.strip()).resolve()
        self.git_calls = 0

    @staticmethod
    def _git(cwd: Path, *args: str) -> str | None:
        try:
            done = subprocess.run(
                ["git", "-C", str(cwd), *args], capture_output=True, text=True, timeout=GIT_TIMEOUT_S, check=False
            )
        except (OSError, ValueError, subprocess.TimeoutExpired):  # ValueError: a NUL in the path (tests/fuzz)
            return None
        return done.stdout if done.returncode == 0 else None

    def _rel(self, path: str) -> str | None:
        p = Path(path)
        full = (p if p.is_absolute() else self.root / p).resolve()
        try:
            return full.relative_to(self.root).as_posix()
        except ValueError:
            return None  # outside the repository: not ours to judge

    def changed(self, anchor: Anchor, since: str) -> str | None:
        """Why ``anchor`` changed after ``since`` (an ISO time), or None when it did not."""
        rel = self._rel(anchor.path)
        if rel is None:
            return None
        full = self.root / rel
        now = _read(full, anchor.lines)
        if now is not None and _same(now, anchor.excerpt):
            return None
        self.git_calls += 1
        dirty = self._git(self.root, "status", "--porcelain", "--", rel)
        if dirty and dirty.strip():
            return f"{rel} has uncommitted changes" if now is not None else f"{rel} was deleted"
        self.git_calls += 1
        out = self._git(self.root, "log", "-1", "--format=%H %ct", "--", rel)
        if not out or not out.strip():
            return f"{rel} is not in the repository" if now is None else None
        commit, stamp = out.split()
        if int(stamp) <= int(_epoch(since)):
            return None
        what = "deleted" if now is None else "changed"
        return f"{rel} was {what} by commit {commit[:12]} after the entry was written"


def work_tree(path: str | Path) -> str | None:
    """The top of the git work tree ``path`` is in, or None (not in one, or no git)."""
    top = GitEvidence._git(Path(path), "rev-parse", "--show-toplevel")
    return top.strip() if top and top.strip() else None


def code_stale(
    live: Sequence[EntryVersion], sources: Mapping[SourceId, Source], git: GitEvidence
) -> dict[EntryId, str]:
    """Entry id → why its cited file changed since its version was written."""
    out: dict[EntryId, str] = {}
    for v in live:
        for sid in v.content.sources:
            src = sources.get(sid)
            anchor = anchor_of(src) if src is not None else None
            if anchor is None:
                continue
            why = git.changed(anchor, v.provenance.created_at)
            if why is not None:
                cited = f"#L{anchor.lines[0]}-L{anchor.lines[1]}" if anchor.lines else ""
                out[v.entry_id] = f"its evidence {anchor.path}{cited} changed: {why}"
                break
    return out


def summary_stale(live: Sequence[EntryVersion]) -> dict[EntryId, str]:
    """Summary entry id → why it is out of date (a summarized entry was revised after it, or is gone)."""
    by_id = {v.entry_id: v for v in live}
    out: dict[EntryId, str] = {}
    for v in live:
        for r in v.content.relations:
            if r.kind != SUMMARIZES:
                continue
            target = by_id.get(r.target)
            if target is None:
                out[v.entry_id] = f"it summarizes {r.target}, which is no longer active"
                break
            if _epoch(target.provenance.created_at) > _epoch(v.provenance.created_at):
                out[v.entry_id] = f"it summarizes {r.target}, revised at {target.provenance.created_at} after it"
                break
    return out


def _read(path: Path, lines: tuple[int, int] | None) -> str | None:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    if lines is None:
        return text
    return "\n".join(text.splitlines()[lines[0] - 1 : lines[1]])


def _same(a: str, b: str) -> bool:
    return " ".join(a.split()) == " ".join(b.split())


def _epoch(stamp: str) -> float:
    try:
        return _dt.datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return 0.0


__all__ = ["SUMMARIZES", "Anchor", "GitEvidence", "anchor_of", "code_stale", "summary_stale", "work_tree"]
