"""The conformance suite catches an engine that ignores filters on vector hits (issue 11).

Runs ``incomplete_engine.py`` (the suite on a filter-blind SQLite variant) in a child pytest and expects the
filter tests to fail there, while the same tests pass on the real engine in ``test_sqlite_vectors.py``.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).parent


def test_the_suite_fails_an_engine_that_ignores_filters_on_vector_hits(tmp_path: Path) -> None:
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            str(HERE / "incomplete_engine.py"),
            "-q",
            "-p",
            "no:cacheprovider",
            "-k",
            "filters",
            "-rf",
            f"--basetemp={tmp_path / 'base'}",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=HERE.parent.parent,
    )
    out = run.stdout + run.stderr
    assert run.returncode == 1, out  # 1: tests ran and some failed (not a collection or usage error)
    failed = {line.split("::")[-1].split(" ")[0] for line in out.splitlines() if line.startswith("FAILED")}
    assert failed == {"test_filters_apply_to_vector_and_hybrid_hits"}, out
