"""The two callables ``build_server`` hands each tool module: the tool registrar and the caller of a request."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Protocol, TypeVar

from mcp.server.mcpserver import Context
from mcp.types import ToolAnnotations

from .caller import Caller

ToolFn = TypeVar("ToolFn", bound=Callable[..., Awaitable[object]])


class ToolRegistrar(Protocol):
    """``tool(name, title, annotations)`` → a decorator that adds the function as a tool (docstring = contract)."""

    def __call__(self, name: str, title: str, annotations: ToolAnnotations) -> Callable[[ToolFn], ToolFn]: ...


Here = Callable[[Context | None], Caller]  #: the service and scopes of the caller of one request

__all__ = ["Here", "ToolFn", "ToolRegistrar"]
