"""The attack, kept (issue 12): short runs of the crash harness and of the four-front-end fuzzer, in the suite.

The long runs (200 kill cycles, 100,000 fuzzed calls) are benchmarks with their commands in docs/benchmarks.md;
these run the same scripts for a few seconds, so a change that loses an acknowledged write, leaves a partial
Revision, or lets an exception outside the MemstoneError tree (or a 5xx, or a traceback) out of a front end fails
the suite, not only the next benchmark run.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "bench"


def bench(script: str, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, str(BENCH / script), *args], capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done.stdout


def test_writers_killed_at_random_points_lose_no_acknowledged_write() -> None:
    out = bench("bench_crash.py", "--cycles", "2", "--writers", "3", "--seed", "5")
    summary = out.strip().splitlines()[-1]
    assert "0 lost, verify clean 2/2" in summary, out


def test_fuzzed_calls_on_every_front_end_fail_only_with_the_projects_errors() -> None:
    out = bench("bench_fuzz.py", "--calls", "600", "--cli-calls", "3", "--seed", "7")
    assert "failures (outside the project's errors, 5xx, unknown codes, tracebacks): 0" in out, out
    assert "canaries unchanged: 20/20" in out and "verify: clean" in out, out
    for surface in ("library", "http", "mcp", "cli"):
        assert f"\n  {surface} " in out, (surface, out)
