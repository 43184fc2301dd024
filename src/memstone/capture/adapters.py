"""Deterministic candidate adapters: no model, same input → same candidates.

- :func:`statement_candidates` (in :mod:`memstone.capture.statements`) — a user's durable statements and
  corrections, in English, German or Chinese.
- :func:`build_file_candidates` — ``pyproject.toml``, ``package.json``, ``Makefile``, ``Cargo.toml``, ``go.mod``,
  ``justfile``, ``tox.ini``, ``noxfile.py`` → build and test conventions, each with its file as evidence and a
  stable slug, so a changed file revises its entry instead of adding one (stdlib parsers only).
- :func:`git_change_flags` — a Git change → review flags for live entries whose evidence (a ``file:`` Source)
  it touched. It never invents content.
- :func:`working_note_candidate` — the RFC's mechanical working_note from a turn-stop or handoff (final report,
  changed paths, verification, Git head), only when the turn changed something or hands work over.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Callable, Mapping, Sequence

from ..domain.ids import SourceId
from ..domain.model import EntryVersion, Source
from ._patterns import (
    rx,
)
from ._text import clean, excerpt, informative_count
from .candidates import Candidate, ReviewFlag, Skip
from .events import (
    FileSnapshot,
    GitChange,
    Handoff,
    TurnStop,
    normalize_path,
)
from .statements import StatementAnalysis, statement_candidates

__all__ = [
    "StatementAnalysis",
    "build_file_candidates",
    "git_change_flags",
    "statement_candidates",
    "working_note_candidate",
]


# ============================================================================================ build files
def build_file_candidates(files: Sequence[FileSnapshot]) -> tuple[Candidate, ...]:
    """Build and test convention candidates from known build files; unknown or unparsable files give none."""
    out: list[Candidate] = []
    for f in files:
        path = normalize_path(f.path)
        name = path.rsplit("/", 1)[-1]
        key = f"file:{path}"
        reader = _BUILD_FILES.get(name)
        try:
            found = reader(f.content) if reader is not None else []
        except (ValueError, KeyError, TypeError, AttributeError):
            found = []  # a file we cannot parse yields nothing rather than a guess
        prefix = path.rsplit("/", 1)[0] + "/" if "/" in path else ""
        for slug, kind, text in found:
            where = f" (in {prefix.rstrip('/')})" if prefix else ""
            out.append(
                Candidate(
                    kind=kind,
                    text=f"{text}{where}",
                    origin="build_file",
                    slug=_slug(f"build-{prefix}{slug}"),
                    tags=("build",),
                    evidence=(key,),
                )
            )
    return tuple(out)


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:64].strip("-")


_BACKENDS = {
    "hatchling.build": "Hatchling",
    "setuptools.build_meta": "setuptools",
    "poetry.core.masonry.api": "Poetry (poetry-core)",
    "flit_core.buildapi": "Flit",
    "pdm.backend": "PDM (pdm-backend)",
    "maturin": "maturin",
    "scikit_build_core.build": "scikit-build-core",
    "mesonpy": "meson-python",
    "uv_build": "uv",
}


def _table(data: Mapping[str, object], *keys: str) -> Mapping[str, object]:
    cur: object = data
    for key in keys:
        if not isinstance(cur, Mapping):
            return {}
        cur = cur.get(key, {})
    return cur if isinstance(cur, Mapping) else {}


def _pyproject(content: str) -> list[tuple[str, str, str]]:
    data = tomllib.loads(content)
    name = _table(data, "project").get("name") or _table(data, "tool", "poetry").get("name") or "The project"
    out: list[tuple[str, str, str]] = []
    tool = _table(data, "tool")
    if "poetry" in tool:
        manager = "Poetry"
    elif "pdm" in tool:
        manager = "PDM"
    elif "uv" in tool or "dependency-groups" in data:
        manager = "uv"
    elif "hatch" in tool and _table(tool, "hatch", "envs"):
        manager = "Hatch"
    else:
        manager = None
    backend = _table(data, "build-system").get("build-backend")
    backend_name = _BACKENDS.get(str(backend), str(backend)) if backend else None
    if manager and backend_name:
        out.append(("package-manager", "fact", f"{name} manages dependencies with {manager} and builds with "
                    f"{backend_name} (pyproject.toml)."))  # fmt: skip
    elif manager:
        out.append(("package-manager", "fact", f"{name} manages dependencies with {manager} (pyproject.toml)."))
    elif backend_name:
        out.append(("build-backend", "fact", f"{name} builds with {backend_name} (pyproject.toml build-backend)."))
    run = "uv run " if manager == "uv" else "poetry run " if manager == "Poetry" else ""
    pytest_cfg = _table(tool, "pytest", "ini_options")
    if pytest_cfg or "pytest" in tool:
        paths = pytest_cfg.get("testpaths")
        where = f" from {', '.join(map(str, paths))}" if isinstance(paths, list) and paths else ""
        out.append(("test-command", "convention", f"Tests run with pytest{where}: `{run}pytest` (pyproject.toml)."))
    checks = []
    if "ruff" in tool:
        length = _table(tool, "ruff").get("line-length")
        checks.append(f"`{run}ruff check` and `{run}ruff format`" + (f" (line length {length})" if length else ""))
    if "mypy" in tool:
        strict = " --strict" if _table(tool, "mypy").get("strict") is True else ""
        checks.append(f"`{run}mypy{strict}`")
    if "black" in tool:
        checks.append(f"`{run}black`")
    if checks:
        out.append(("lint-command", "convention", f"Lint and type checks: {'; '.join(checks)} (pyproject.toml)."))
    return out


_SCRIPT_ORDER = ("test", "lint", "typecheck", "type-check", "check", "format", "build", "dev", "e2e", "gen")


def _package_json(content: str) -> list[tuple[str, str, str]]:
    data = json.loads(content)
    if not isinstance(data, dict):
        return []
    out: list[tuple[str, str, str]] = []
    pm = data.get("packageManager")
    manager = str(pm).split("@", 1)[0] if isinstance(pm, str) and pm else None
    if manager:
        out.append(("package-manager", "fact", f"Dependencies are managed with {manager} (packageManager in "
                    f"package.json: {pm})."))  # fmt: skip
    scripts = data.get("scripts")
    if isinstance(scripts, dict):
        runner = manager or "npm"
        picked = [k for k in scripts if isinstance(scripts[k], str) and k.split(":", 1)[0] in _SCRIPT_ORDER]
        picked.sort(key=lambda k: (_SCRIPT_ORDER.index(k.split(":", 1)[0]), k))
        if picked:
            listed = "; ".join(f"{k} = `{str(scripts[k])[:80]}`" for k in picked[:8])
            out.append(("scripts", "convention", f"Package scripts (run with `{runner} run <name>`): {listed}."))
    return out


_MAKE_TARGET = re.compile(r"^([A-Za-z0-9][A-Za-z0-9_.\-/]*)\s*:(?!=)([^\n]*)$", re.M)
_INTERESTING_TARGETS = ("test", "tests", "check", "lint", "fmt", "format", "build", "typecheck", "ci", "e2e")


def _makefile(content: str) -> list[tuple[str, str, str]]:
    targets: dict[str, str] = {}
    lines = content.splitlines()
    for i, line in enumerate(lines):
        m = _MAKE_TARGET.match(line)
        if not m or m.group(1).startswith(".") or "%" in m.group(1):
            continue
        recipe = lines[i + 1].strip() if i + 1 < len(lines) and lines[i + 1].startswith("\t") else ""
        targets.setdefault(m.group(1), recipe.lstrip("@-"))
    picked = [t for t in _INTERESTING_TARGETS if t in targets]
    if not picked:
        return []
    out = [("make-targets", "convention", "Common tasks run through make: " + ", ".join(f"`make {t}`" for t in picked)
            + " (Makefile).")]  # fmt: skip
    test = next((t for t in ("test", "tests", "check") if t in targets), None)
    if test and targets[test]:
        out.append(("test-command", "convention", f"Tests run with `make {test}` (runs `{targets[test][:100]}`)."))
    elif test:
        out.append(("test-command", "convention", f"Tests run with `make {test}`."))
    return out


def _cargo(content: str) -> list[tuple[str, str, str]]:
    data = tomllib.loads(content)
    package = _table(data, "package")
    workspace = _table(data, "workspace")
    out: list[tuple[str, str, str]] = []
    name = package.get("name")
    msrv = package.get("rust-version") or _table(workspace, "package").get("rust-version")
    edition = package.get("edition") or _table(workspace, "package").get("edition")
    parts = []
    if edition:
        parts.append(f"edition {edition}")
    if msrv:
        parts.append(f"minimum supported Rust version (rust-version) {msrv}")
    if parts:
        subject = f"The {name} crate" if name else "The Cargo workspace"
        out.append(("rust-toolchain", "constraint" if msrv else "fact", f"{subject} uses {', '.join(parts)} "
                    "(Cargo.toml); do not use features or dependencies that need a newer compiler."
                    if msrv else f"{subject} uses {', '.join(parts)} (Cargo.toml)."))  # fmt: skip
    members = workspace.get("members")
    if isinstance(members, list) and members:
        out.append(("cargo-workspace", "fact", f"Cargo workspace members: {', '.join(map(str, members[:10]))}; "
                    "build and test with `cargo build --workspace` and `cargo test --workspace`."))  # fmt: skip
    return out


def _go_mod(content: str) -> list[tuple[str, str, str]]:
    module = re.search(r"^module\s+(\S+)", content, re.M)
    version = re.search(r"^go\s+(\d+(?:\.\d+)*)", content, re.M)
    toolchain = re.search(r"^toolchain\s+(\S+)", content, re.M)
    if not module:
        return []
    text = f"Go module {module.group(1)}"
    if version:
        text += f" targets Go {version.group(1)}"
    if toolchain:
        text += f" (toolchain {toolchain.group(1)})"
    return [("go-toolchain", "fact", text + " (go.mod); tests run with `go test ./...`.")]


_JUST_RECIPE = re.compile(r"^@?([A-Za-z_][A-Za-z0-9_\-]*)(?:\s+[^:=\n]*)?:(?!=)", re.M)


def _justfile(content: str) -> list[tuple[str, str, str]]:
    recipes = [r for r in dict.fromkeys(_JUST_RECIPE.findall(content)) if r not in ("set", "export", "alias")]
    if not recipes:
        return []
    listed = ", ".join(f"`just {r}`" for r in recipes[:10])
    return [("just-recipes", "convention", f"Tasks run through just: {listed} (justfile).")]


def _tox(content: str) -> list[tuple[str, str, str]]:
    import configparser

    parser = configparser.ConfigParser(interpolation=None)
    parser.read_string(content)
    envlist = parser.get("tox", "envlist", fallback="").replace("\n", ",")
    envs = [e.strip() for e in envlist.split(",") if e.strip()]
    commands = parser.get("testenv", "commands", fallback="").strip().splitlines()
    text = "Tests run with tox"
    if envs:
        text += f" (environments: {', '.join(envs[:8])})"
    if commands:
        text += f"; each runs `{commands[0].strip()[:80]}`"
    if not envs and not commands:
        return []
    return [("tox", "convention", text + " (tox.ini).")]


_NOX_SESSION = re.compile(r"@nox\.session[^\n]*\n\s*def\s+([A-Za-z_][A-Za-z0-9_]*)\s*\(")


def _noxfile(content: str) -> list[tuple[str, str, str]]:
    sessions = _NOX_SESSION.findall(content)
    if not sessions:
        return []
    listed = ", ".join(f"`nox -s {s}`" for s in sessions[:10])
    return [("nox-sessions", "convention", f"Tasks run as nox sessions: {listed} (noxfile.py).")]


# The build files read, by file name, each with its reader: (slug, kind, text) per convention found.
_BUILD_FILES: dict[str, Callable[[str], list[tuple[str, str, str]]]] = {
    "pyproject.toml": _pyproject,
    "package.json": _package_json,
    **dict.fromkeys(("Makefile", "GNUmakefile", "makefile"), _makefile),
    "Cargo.toml": _cargo,
    "go.mod": _go_mod,
    **dict.fromkeys(("justfile", "Justfile", ".justfile"), _justfile),
    "tox.ini": _tox,
    "noxfile.py": _noxfile,
}


# ============================================================================================ git changes
def _path_of(uri: str | None) -> str | None:
    if not uri:
        return None
    if uri.startswith("file://"):
        return normalize_path(uri.removeprefix("file://"))
    if uri.startswith("file:"):
        return normalize_path(uri.removeprefix("file:"))
    return None


def _touches(evidence_path: str, changed: str) -> bool:
    a, b = normalize_path(evidence_path), normalize_path(changed)
    return a == b or a.endswith("/" + b) or b.endswith("/" + a)


def git_change_flags(
    event: GitChange, live: Sequence[EntryVersion], sources: Mapping[SourceId, Source]
) -> tuple[ReviewFlag, ...]:
    """Review flags for live entries whose ``file:`` evidence the change touched (never new content)."""
    out = []
    for version in live:
        hit: list[str] = []
        for sid in version.content.sources:
            path = _path_of(sources[sid].uri) if sid in sources else None
            if path is None:
                continue
            hit.extend(p for p in event.changed_paths if _touches(path, p) and p not in hit)
        if hit:
            out.append(
                ReviewFlag(
                    entry_id=version.entry_id,
                    entry_version_id=version.entry_version_id,
                    entry_excerpt=excerpt(version.text, 120),
                    paths=tuple(hit),
                    base_commit=event.base_commit,
                    head_commit=event.head_commit,
                )
            )
    return tuple(out)


# ============================================================================================ working notes
_TRIVIAL_TURN = rx(
    r"^(?:done|ok(?:ay)?|sure|got it|will do|finished|all set|no changes?(?: made)?|nothing to do)[.!]?$"
    r"|\blet me know if\b|\bwhat would you like\b|\bi will follow\b|\bhow can i help\b|^sorry\b|\bi can'?t\b"
)
MAX_NOTE_REPORT_CHARS = 1500


def working_note_candidate(event: TurnStop | Handoff) -> tuple[Candidate | None, Skip | None]:
    """The one mechanical working_note for a turn or handoff, or the reason there is none.

    Useful means: the turn changed files (or is a Handoff) and its report says something. The note is
    assembled from what the provider gave, verbatim: it never states a fact, decision or constraint of its own.
    """
    report = clean(event.report)
    changed = tuple(dict.fromkeys(normalize_path(p) for p in event.changed_paths if p.strip()))
    if not report and not changed:
        return None, Skip(excerpt="", reason="empty_turn")
    if isinstance(event, TurnStop) and not changed:
        return None, Skip(excerpt=excerpt(report), reason="no_changes")
    if (_TRIVIAL_TURN.search(report) and informative_count(report) < 12) or informative_count(report) < 5:
        return None, Skip(excerpt=excerpt(report), reason="trivial_turn")
    label = "Handoff" if isinstance(event, Handoff) else "Turn report"
    body = report if len(report) <= MAX_NOTE_REPORT_CHARS else report[: MAX_NOTE_REPORT_CHARS - 1] + "…"
    lines = [f"{label}: {body}"]
    if isinstance(event, Handoff) and event.open_items:
        lines.append("Open: " + "; ".join(clean(i) for i in event.open_items[:10]))
    if changed:
        more = f" (+{len(changed) - 12} more)" if len(changed) > 12 else ""
        lines.append("Changed: " + ", ".join(changed[:12]) + more)
    if event.verification:
        lines.append("Verified: " + "; ".join(f"`{v.command}` {v.outcome}" for v in event.verification[:8]))
    if event.git_head:
        lines.append(f"Git head: {event.git_head}")
    return (
        Candidate(
            kind="working_note",
            text="\n".join(lines),
            origin="working_note",
            tags=("handoff",) if isinstance(event, Handoff) else ("turn",),
        ),
        None,
    )
