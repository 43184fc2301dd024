"""The memstone MCP server (``build_server(service, settings)`` in :mod:`memstone.api.mcp.server`)."""
