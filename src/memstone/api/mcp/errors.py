"""memstone errors → ``ToolError`` messages a model can act on. Mapped by class, never by message text.

The SDK masks any other exception as ``Error executing tool <name>`` (the traceback goes to stderr), so every
tool body runs inside :func:`tool_errors`. Each message says what happened, then the next call to make.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp_types import CallToolResult, InputRequiredResult
from pydantic import ValidationError

from ...domain.errors import (
    BackendUnavailable,
    CapabilityNotSupportedError,
    Conflict,
    EntryInactiveError,
    IntegrityError,
    InvalidInput,
    MemstoneError,
    NotFound,
    RevisionConflictError,
    StoreMigratingError,
    by_class,
)

#: (error class, (what to say first, what to do next)); the first matching class wins (most specific first).
ADVICE: tuple[tuple[type[MemstoneError], tuple[str, str]], ...] = (
    (
        RevisionConflictError,
        (
            "stale revision",
            "another writer changed this memory first: call memory_search or memory_source again and retry with "
            "the current revision",
        ),
    ),
    (Conflict, ("conflict", "read the current state with memory_source or memory_list, then retry")),
    (EntryInactiveError, ("inactive", "call memory_reactivate with this id first, then update it")),
    (NotFound, ("not found", "check the id with memory_search or memory_list (ids look like ent_…)")),
    (InvalidInput, ("invalid input", "fix the arguments named above and call again")),
    (CapabilityNotSupportedError, ("not supported", "retry with mode='auto' or mode='fts'")),
    (StoreMigratingError, ("store migrating", "writes are paused while the store changes models; retry in a minute")),
    (BackendUnavailable, ("store busy", "the store is locked or unreachable; retry shortly")),
    (IntegrityError, ("store damaged", "do not retry; ask the user to run `memstone verify`")),
)


def tool_message(exc: MemstoneError) -> str:
    """``<what>: <message> (<hint>). Next: <advice>`` for one memstone error."""
    what, advice = by_class(exc, ADVICE, ("error", "see the message; `memstone doctor` checks the installation"))
    hint = f" ({exc.hint})" if exc.hint and not isinstance(exc, RevisionConflictError) else ""
    return f"{what}: {exc.message}{hint}. Next: {advice}. [code: {exc.code}]"


def stale_version(entry_id: str, expected: int, current: int) -> ToolError:
    """The optimistic-concurrency refusal of memory_update (``expected_version`` is not the current one)."""
    return ToolError(
        f"stale revision: {entry_id} is at version {current}, not {expected}. Next: call memory_source "
        f"{entry_id} again and retry with the current revision (expected_version={current}). [code: revision_conflict]"
    )


_TYPE_NAMES = {
    "list_type": "a list",
    "string_type": "a string",
    "int_type": "an integer",
    "int_parsing": "an integer",
    "int_from_float": "an integer",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
    "dict_type": "an object",
}


def _field(loc: Sequence[object]) -> str:
    return ".".join(str(part) for part in loc) or "the arguments"


class _HugeInteger:
    """The input of an error pydantic cannot give back: an integer past ``str()``'s 4300 digits."""


def _shown(value: object) -> str:
    """A number as it was given, up to a size; any other value by its type (texts may hold secrets)."""
    if isinstance(value, _HugeInteger) or (isinstance(value, int) and value.bit_length() > 64):
        return "an integer past 64 bits"
    return repr(value) if isinstance(value, (int, float, bool)) or value is None else type(value).__name__


def _describe(err: Mapping[str, Any]) -> str:
    """One pydantic error in the project's words. Text values are never echoed (they may hold a secret)."""
    field, kind, ctx = _field(err.get("loc", ())), str(err.get("type", "")), err.get("ctx") or {}
    value = err.get("input")
    shown = _shown(value)
    if kind == "missing":
        return f"{field} is required"
    if kind == "extra_forbidden":
        return f"{field} is not an argument of this tool"
    if kind == "string_too_short":
        return f"{field} must not be empty" if ctx.get("min_length") == 1 else f"{field} is too short"
    if kind == "string_too_long":
        size = len(value) if isinstance(value, str) else "?"
        return f"{field} is {size} characters; the limit is {ctx.get('max_length')}"
    if kind in ("too_short", "too_long"):
        return (
            f"{field} must hold {'at least' if kind == 'too_short' else 'at most'} "
            + str(ctx.get("min_length" if kind == "too_short" else "max_length"))
            + " items"
        )
    if kind == "string_pattern_mismatch":
        return f"{field} does not have the expected form ({ctx.get('pattern')})"
    if kind == "literal_error":
        got = repr(value)[:40] if isinstance(value, str) else shown
        return f"{field} must be one of {ctx.get('expected')}, got {got}"
    bounds = {"less_than_equal": "at most", "less_than": "less than", "greater_than_equal": "at least",
              "greater_than": "more than"}  # fmt: skip
    if kind in bounds:
        limit = next((ctx[k] for k in ("le", "lt", "ge", "gt") if k in ctx), "?")
        return f"{field} must be {bounds[kind]} {limit}, got {shown}"
    if kind in _TYPE_NAMES:
        got = "int" if isinstance(value, _HugeInteger) else type(value).__name__
        return f"{field} must be {_TYPE_NAMES[kind]}, got {got}"
    return f"{field}: {str(err.get('msg', 'invalid value')).lower()}"


def invalid_arguments(tool: str, exc: ValidationError) -> InvalidInput:
    """A tool-argument ValidationError as the project's InvalidInput (not pydantic's text, which echoes values)."""
    try:
        errors = exc.errors(include_url=False)
    except ValueError:  # pydantic cannot give back an integer past str()'s 4300 digits (found by tests/fuzz)
        errors = [{**e, "input": _HugeInteger()} for e in exc.errors(include_url=False, include_input=False)]
    problems = "; ".join(dict.fromkeys(_describe(e) for e in errors))
    return InvalidInput(
        f"{tool}: {problems}",
        hint="the tool's input schema lists every argument with its type and limits",
    )


def argument_errors(tool: str, exc: ToolError) -> ToolError:
    """The SDK's ToolError for arguments that failed validation, in the project's words; others unchanged."""
    cause = exc.__cause__
    if not isinstance(cause, ValidationError):
        return exc
    error = invalid_arguments(tool, cause)
    mapped = ToolError(f"Error executing tool {tool}: {tool_message(error)}")
    mapped.__cause__ = error
    return mapped


class MemstoneMCPServer(MCPServer):
    """The SDK's server, whose argument-validation errors are the project's InvalidInput messages (issue 11)."""

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        try:
            return await super().call_tool(name, arguments, context)
        except UnexpectedToolError:
            raise
        except ToolError as exc:
            mapped = argument_errors(name, exc)
            if mapped is exc:
                raise
            raise mapped from mapped.__cause__


@contextmanager
def tool_errors() -> Iterator[None]:
    """Turn a memstone error raised inside a tool into a ToolError with advice."""
    try:
        yield
    except MemstoneError as exc:
        raise ToolError(tool_message(exc)) from exc


__all__ = [
    "ADVICE",
    "MemstoneMCPServer",
    "argument_errors",
    "invalid_arguments",
    "stale_version",
    "tool_errors",
    "tool_message",
]
