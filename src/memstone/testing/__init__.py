"""The backend conformance suite, importable by out-of-tree backends.

Subclass :class:`MemoryBackendConformance` and provide a ``store_url`` fixture that yields a URL for a fresh,
empty store on a real engine; every test is gated by the backend's capability flags. Every in-process open
goes through the ``backend_factory`` fixture (default ``open_store``): override it to test an engine that is
not registered yet.
"""

from .conformance import MemoryBackendConformance, requires
from .fixtures import BackendFactory, StoreFixtures
from .vectors import VectorConformance

__all__ = ["BackendFactory", "MemoryBackendConformance", "StoreFixtures", "VectorConformance", "requires"]
