"""Issue 16: no test and no calibration reads the held-out part of the capture data (its figures are reported,
never fitted on); only bench/bench_capture.py, the reporter, names it."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HELD_OUT = "capture-" + "heldout"  # spelled in two parts, so this file does not name it either


def test_no_test_or_calibration_names_the_held_out_part() -> None:
    readers = [
        *(ROOT / "tests").rglob("*.py"),
        *(ROOT / "bench").glob("calibrate_*.py"),
        *(ROOT / "bench").glob("fit_capture_*.py"),
    ]
    assert len(readers) > 50 and any(p.name == "calibrate_capture_nearness.py" for p in readers)
    naming = [
        str(p.relative_to(ROOT))
        for p in readers
        if any(HELD_OUT in line and "never reads" not in line for line in p.read_text("utf-8").splitlines())
    ]
    assert naming == []


def test_the_calibrations_read_the_dev_part() -> None:
    for name in ("calibrate_capture_nearness.py", "calibrate_capture_semantic.py", "calibrate_capture_changes.py"):
        text = (ROOT / "bench" / name).read_text("utf-8")
        assert 'DEV = Path(__file__).resolve().parent / "data" / "capture"\n' in text, name
