"""How ``memstone_rank.c`` is compiled into a loadable SQLite extension (issue 15).

Standard library only: ``hatch_build.py`` loads this file by path at install (``pip install .`` and ``-e .``), before
memstone or its dependencies are importable, and ``backends/sqlite/fts.py`` reads ``LIBRARY`` to find the result.
The source includes the system's ``sqlite3ext.h`` (Debian: ``libsqlite3-dev``) and calls SQLite only through the
routines table the loading connection hands it, so it links against no SQLite and serves the one apsw bundles.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "memstone_rank.c"
# SQLite derives the entry point from the file name: memstone_rank.so -> sqlite3_memstonerank_init.
LIBRARY = "memstone_rank" + {"win32": ".dll", "darwin": ".dylib"}.get(sys.platform, ".so")
# -ffp-contract=off: no fused multiply-add, so the arithmetic is bm25()'s to the last bit (as SQLite's own build).
FLAGS = ["-O2", "-fPIC", "-shared", "-ffp-contract=off"]


def compiler() -> str | None:
    """``$CC``, else ``cc`` or ``gcc`` on the PATH; None without one."""
    return os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")


def compile_library(folder: Path) -> tuple[Path | None, str]:
    """Compile into ``folder``: (the library, "") or (None, why not). Never raises for a missing compiler, missing
    headers or a failed compile: a machine without them installs memstone pure Python (bm25() ranks)."""
    cc = compiler()
    if cc is None:
        return None, "no C compiler (cc, gcc or $CC) on the PATH"
    folder.mkdir(parents=True, exist_ok=True)
    out = folder / LIBRARY
    cmd = [cc, *FLAGS, "-o", str(out), str(SOURCE), "-lm"]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=300, check=False)
    except OSError as exc:
        return None, f"{cc} did not run: {exc}"
    if done.returncode != 0:
        return None, f"{' '.join(cmd)} failed: {done.stderr.strip()[-500:]}"
    return out, ""


RANK_LIBRARY = HERE / LIBRARY  # where an editable install builds it, and where a wheel puts it
