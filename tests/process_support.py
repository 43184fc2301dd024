"""Helpers for tests that run memstone in a child process (imported by test modules in any folder)."""

from __future__ import annotations

import ctypes
import os

PR_CAPBSET_DROP = 24
CAPS_THAT_IGNORE_MODES = (1, 2, 3)  # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER


def as_ordinary_user() -> None:
    """A child's ``preexec_fn``: root ignores file modes, so the child drops the capabilities that let it (a
    read-only file is then read-only to it, as to any user)."""
    if os.geteuid() == 0:
        libc = ctypes.CDLL(None, use_errno=True)
        for cap in CAPS_THAT_IGNORE_MODES:
            if libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
                raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")
