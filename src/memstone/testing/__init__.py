"""The backend conformance suite, importable by out-of-tree backends.

Subclass :class:`MemoryBackendConformance` and provide a ``store_url`` fixture that yields a URL for a fresh,
empty store on a real engine; every test is gated by the backend's capability flags.
"""

from .conformance import MemoryBackendConformance, requires

__all__ = ["MemoryBackendConformance", "requires"]
