"""Each system's interpreter: memstone's own .venv, or a virtualenv the harness creates with pinned versions.

Peers live in ``bench/.peers/<name>/`` (ignored by git). A venv is (re)built when its recorded spec differs from
the one below; after a successful install its full ``pip freeze`` is written to ``bench/peers/locks/<name>.txt``
and, when that lock exists, later installs use it as a constraints file, so every transitive version is
pinned too. A system whose venv cannot be built is "not run" with pip's reason, never skipped.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from embedder import PIN as EMBED_PIN

BENCH = Path(__file__).resolve().parents[1]
ROOT = BENCH.parent
PEERS_DIR = BENCH / ".peers"
LOCKS = Path(__file__).resolve().parent / "locks"
MEMSTONE_PY = ROOT / ".venv" / "bin" / "python"

#: name -> (adapter module suffix, minimum Python, pinned requirements). ``None`` requirements = memstone's .venv.
SPECS: dict[str, dict[str, object]] = {
    "memstone": {"adapter": "memstone", "python": (3, 11), "pip": None},
    "floor": {"adapter": "floor", "python": (3, 11), "pip": None},
    "lancedb": {"adapter": "lancedb", "python": (3, 11), "pip": ["lancedb==0.40.0", *EMBED_PIN]},
    "mem0": {"adapter": "mem0", "python": (3, 11), "pip": ["mem0ai==2.2.1", "qdrant-client==1.20.0", *EMBED_PIN]},
    "basic-memory": {"adapter": "basic_memory", "python": (3, 12), "pip": ["basic-memory==0.24.1"]},
    "_plot": {"adapter": None, "python": (3, 11), "pip": ["matplotlib==3.11.2", "numpy==2.4.6"]},
}


class SetupFailed(Exception):
    pass


def _version_of(python: str) -> tuple[int, int] | None:
    try:
        out = subprocess.run(
            [python, "-c", "import sys;print(sys.version_info[0], sys.version_info[1])"],
            capture_output=True,
            text=True,
            timeout=30,
        )
        a, b = out.stdout.split()
        return int(a), int(b)
    except Exception:
        return None


def find_python(minimum: tuple[int, int]) -> str | None:
    """An interpreter >= ``minimum`` (this one, then python3.X on PATH, then pyenv's versions)."""
    base = getattr(sys, "_base_executable", sys.executable)
    cands = [base, sys.executable]
    for minor in range(minimum[1], 15):
        found = shutil.which(f"python{minimum[0]}.{minor}")
        if found:
            cands.append(found)
    cands += sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.*/bin/python3")))
    for c in cands:
        v = _version_of(c)
        if v is not None and v >= minimum:
            return c
    return None


def ensure(name: str, log=print) -> str:
    """The Python to run system ``name`` with; builds its venv if needed. Raises SetupFailed(reason)."""
    spec = SPECS[name]
    if spec["pip"] is None:
        if not MEMSTONE_PY.exists():
            raise SetupFailed(f"memstone's .venv is missing ({MEMSTONE_PY}); run scripts/setup")
        return str(MEMSTONE_PY)
    venv = PEERS_DIR / name
    py = venv / "bin" / "python"
    marker = venv / ".bench-spec.json"
    want = {"pip": spec["pip"], "python": list(spec["python"])}
    if py.exists() and marker.exists() and json.loads(marker.read_text()) == want:
        return str(py)
    base = find_python(spec["python"])  # type: ignore[arg-type]
    if base is None:
        raise SetupFailed(f"needs Python >= {'.'.join(map(str, spec['python']))}, none found")  # type: ignore[arg-type]
    log(f"[setup] {name}: creating {venv} with {base} and pip install {' '.join(spec['pip'])}")  # type: ignore[arg-type]
    if venv.exists():
        shutil.rmtree(venv)
    subprocess.run([base, "-m", "venv", str(venv)], check=True)
    cmd = [str(py), "-m", "pip", "install", "-q", *spec["pip"]]  # type: ignore[misc]
    lock = LOCKS / f"{name}.txt"
    if lock.exists():
        cmd += ["-c", str(lock)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
        raise SetupFailed(f"pip install failed: {' | '.join(tail)[:300]}")
    freeze = subprocess.run([str(py), "-m", "pip", "freeze"], capture_output=True, text=True).stdout
    LOCKS.mkdir(exist_ok=True)
    if not lock.exists():
        lock.write_text(freeze)
    marker.write_text(json.dumps(want))
    return str(py)
