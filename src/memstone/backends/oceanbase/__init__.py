"""The OceanBase engine (MySQL mode, 4.3.5+): ``oceanbase://USER:PASSWORD@HOST:PORT/DATABASE``.

Registered under the ``memstone.backends`` entry-point group (pyproject.toml), so ``open_store`` reaches it through
the URL registry like any out-of-tree engine. Needs PyMySQL (``pip install 'memstone[oceanbase]'``).
"""

from __future__ import annotations

from .store import OceanBaseMemoryBackend, open_oceanbase

__all__ = ["OceanBaseMemoryBackend", "open_oceanbase"]
