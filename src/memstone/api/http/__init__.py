"""The HTTP API (``/api/memories``), the Memory Explorer and access control, as one ASGI app."""

from .app import create_app
from .settings import Settings

__all__ = ["Settings", "create_app"]
