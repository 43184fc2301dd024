"""Hatchling build hook: compiles ``memstone_rank``, the FTS5 ranking function in C (issue 15), into the package.

``pip install .`` (a wheel): compiled into ``build/memstone_rank/``, force-included beside its source and the wheel
tagged for this platform. ``pip install -e .`` (editable): compiled beside its source (gitignored), where the
editable install imports from. It never fails the install: without a compiler or SQLite's headers it warns and the
wheel is pure Python, and the SQLite engine ranks with ``bm25()`` (the same rows and scores, slower).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

RANK = "src/memstone/backends/sqlite/_rank"


def _build_module(root: Path) -> Any:
    spec = importlib.util.spec_from_file_location("_memstone_rank_build", root / RANK / "build.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class CustomBuildHook(BuildHookInterface):
    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel":
            return
        root = Path(self.root)
        build = _build_module(root)
        folder = root / RANK if version == "editable" else root / "build" / "memstone_rank"
        library, why = build.compile_library(folder)
        if library is None:
            print(
                f"warning: memstone_rank (the SQLite FTS5 ranking function in C) was not built: {why}; installing "
                "without it (the SQLite engine ranks full-text hits with bm25(): the same results, slower). "
                "Install a C compiler and SQLite's headers (Debian: apt-get install gcc libsqlite3-dev) and "
                "reinstall to build it.",
                file=sys.stderr,
            )
            return
        build_data["pure_python"] = False
        from packaging.tags import sys_tags

        build_data["tag"] = f"py3-none-{next(iter(sys_tags())).platform}"
        if version != "editable":
            build_data["force_include"][str(library)] = f"memstone/backends/sqlite/_rank/{library.name}"
