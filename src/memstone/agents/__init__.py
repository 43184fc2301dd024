"""Coding-agent integrations: hook adapters, per-session injection state, and config installers.

Everything here imports only the standard library and the memstone core, because ``memstone hook …`` runs in
every agent session on every prompt and must start fast (no MCP SDK, no pydantic, no embedding model).
"""
