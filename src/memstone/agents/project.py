"""Which project a directory belongs to, and that project's scope URI (stdlib only: runs on the hook path).

A project is the Git work tree holding the directory (the directory itself outside Git). Its scope is
``memstone://orgs/local/projects/<name>-<hash>``. With an ``origin`` remote, ``name`` is the repository's name
and ``hash`` the first 8 hex digits of SHA-256 over the remote URL (normalized, without credentials), so every
clone and worktree of one repository shares one project Memory. Without a remote, ``name`` is the folder's name
and ``hash`` covers its absolute path, so two unrelated folders that happen to share a name do not.
"""

from __future__ import annotations

import configparser
import hashlib
import os
import re
from pathlib import Path

ORG = "local"
_NAME_BAD = re.compile(r"[^a-z0-9._-]+")


def project_root(path: str | os.PathLike[str]) -> Path | None:
    """The Git work tree containing ``path`` (or ``path`` itself outside Git); None for ``/`` and the home dir."""
    start = Path(path).expanduser().resolve()
    for candidate in (start, *start.parents):
        if (candidate / ".git").exists():
            return candidate
    if start == Path(start.anchor) or start == Path.home().resolve():
        return None
    return start


def _read_text(path: Path) -> str | None:
    """A small Git file's stripped text (``.git``, ``HEAD``, ``commondir``); None when it cannot be read."""
    try:
        return path.read_text("utf-8").strip()
    except OSError:
        return None


def _work_tree_git_dir(root: Path) -> Path | None:
    """The Git directory of this work tree: ``.git``, or where its ``gitdir:`` file points (worktrees, submodules)."""
    dot_git = root / ".git"
    if dot_git.is_dir():
        return dot_git
    text = _read_text(dot_git)
    if text is None or not text.startswith("gitdir:"):
        return None
    return (root / text.removeprefix("gitdir:").strip()).resolve()


def _git_dir(root: Path) -> Path | None:
    """The common Git directory of a work tree (follows the ``gitdir:`` file of worktrees and submodules)."""
    git_dir = _work_tree_git_dir(root)
    common = None if git_dir is None else _read_text(git_dir / "commondir")
    return git_dir if git_dir is None or common is None else (git_dir / common).resolve()


def current_branch(path: str | os.PathLike[str]) -> str | None:
    """The checked-out branch of the work tree holding ``path`` (None when detached or outside Git)."""
    root = project_root(path)
    git_dir = None if root is None else _work_tree_git_dir(root)
    head = None if git_dir is None else _read_text(git_dir / "HEAD")
    return head.removeprefix("ref: refs/heads/") if head and head.startswith("ref: refs/heads/") else None


def origin_url(root: Path) -> str | None:
    """The ``origin`` remote URL of a work tree, read from its Git config (no ``git`` process)."""
    git_dir = _git_dir(root)
    if git_dir is None:
        return None
    parser = configparser.RawConfigParser(strict=False)
    try:
        parser.read(git_dir / "config", encoding="utf-8")
    except (configparser.Error, OSError, UnicodeDecodeError):
        return None
    section = 'remote "origin"'
    if parser.has_option(section, "url"):
        return parser.get(section, "url").strip() or None
    return None


def normalize_remote(url: str) -> str:
    """``git@github.com:Acme/Web.git`` and ``https://user:pw@github.com/Acme/Web`` → ``github.com/acme/web``."""
    text = url.strip()
    text = re.sub(r"^[a-z][a-z0-9+.-]*://", "", text, flags=re.I)
    text = text.split("@", 1)[1] if "@" in text.split("/", 1)[0] else text
    text = re.sub(r"^([^/:]+):(?!\d+/)", r"\1/", text)  # scp-like host:path
    text = text.removesuffix("/").removesuffix(".git")
    return text.lower()


def project_name(name: str) -> str:
    """A scope-safe, readable project name: lowercased, ``[a-z0-9._-]`` only, at most 40 characters."""
    clean = _NAME_BAD.sub("-", name.lower()).strip("-._")[:40].strip("-._")
    return clean or "project"


def project_scope(path: str | os.PathLike[str]) -> str | None:
    """The project scope URI of the directory ``path`` (None outside any project: ``/`` or the home dir).

    >>> project_scope("/work/main")  # doctest: +SKIP
    'memstone://orgs/local/projects/main-3f2a9c1d'
    """
    root = project_root(path)
    if root is None:
        return None
    remote = origin_url(root)
    if remote:
        normalized = normalize_remote(remote)
        key, name = f"remote:{normalized}", normalized.rsplit("/", 1)[-1]
    else:
        key, name = f"path:{root}", root.name
    digest = hashlib.sha256(key.encode("utf-8")).hexdigest()[:8]
    return f"memstone://orgs/{ORG}/projects/{project_name(name)}-{digest}"


__all__ = ["ORG", "current_branch", "normalize_remote", "origin_url", "project_name", "project_root", "project_scope"]
