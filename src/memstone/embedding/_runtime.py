"""What must hold before an embedding runtime is imported."""

from __future__ import annotations

import os


def telemetry_off() -> None:
    """Turn onnxruntime's telemetry off; call before importing onnxruntime (or a package that imports it).

    Trigger: onnxruntime >= 1.2x writes a device id and an event database under
    ``~/.cache/Microsoft/DeveloperTools/.onnxruntime`` the moment it is imported, unless ``ORT_DISABLE_TELEMETRY``
    is set. Why: memstone must write nothing into the user's home that the user did not ask for (issue 11).
    Outcome: the variable is set for this process, unless the user set it already (an explicit choice wins).
    """
    os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")


__all__ = ["telemetry_off"]
