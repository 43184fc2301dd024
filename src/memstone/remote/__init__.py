"""The team path: the CLI and the MCP server talking to a remote ``memstone serve`` over HTTP (issue 13).

A store URL with an ``http``/``https`` scheme names a server, not a database; ``MEMSTONE_TOKEN`` (or the
``token`` setting) is sent as ``Authorization: Bearer``. Every rule stays on the server: this package only
translates a command into the existing ``/api`` calls, and the server's error ``code`` back into the same
:class:`~memstone.domain.errors.MemstoneError` class a local store would have raised.
"""

from __future__ import annotations

from .url import is_remote, server_base  # the client (httpx2) is memstone.remote.client, imported when used

__all__ = ["is_remote", "server_base"]
