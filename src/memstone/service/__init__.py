"""The use cases. Every front end (Python, CLI, MCP, HTTP, hooks, importers) calls these and nothing else.

- ``facade``: :class:`MemoryService`, the one object front ends hold, and :func:`open_service`, its composition root.
- ``records``: the Graphit/Xema record surface (scopes, flags, slugs, relations, catalogues, recall, history tools).
- ``exchange``: the hash-locked Markdown export and its import.
- ``policy``: who is acting (:class:`Actor`) and the rules every read and write passes (secrets, scope grants).
"""

from __future__ import annotations

from .facade import RECORDED, UNSET, HistoryItem, MemoryService, open_service, utc_now

__all__ = ["RECORDED", "UNSET", "HistoryItem", "MemoryService", "open_service", "utc_now"]
