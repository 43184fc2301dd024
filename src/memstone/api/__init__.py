"""Network front ends over the service: ``api/http`` (HTTP API + Explorer) and, later, ``api/mcp``."""
