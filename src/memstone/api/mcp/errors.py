"""memstone errors → ``ToolError`` messages a model can act on. Mapped by class, never by message text.

The SDK masks any other exception as ``Error executing tool <name>`` (the traceback goes to stderr), so every
tool body runs inside :func:`tool_errors`. Each message says what happened, then the next call to make.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from mcp.server.mcpserver.exceptions import ToolError

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
)

#: (error class, what to say first, what to do next); the first matching class wins (most specific first).
ADVICE: tuple[tuple[type[MemstoneError], str, str], ...] = (
    (
        RevisionConflictError,
        "stale revision",
        "another writer changed this memory first: call memory_search or memory_source again and retry with "
        "the current revision",
    ),
    (Conflict, "conflict", "read the current state with memory_source or memory_list, then retry"),
    (EntryInactiveError, "inactive", "call memory_reactivate with this id first, then update it"),
    (NotFound, "not found", "check the id with memory_search or memory_list (ids look like ent_…)"),
    (InvalidInput, "invalid input", "fix the arguments named above and call again"),
    (
        CapabilityNotSupportedError,
        "not supported",
        "retry with mode='auto' or mode='fts'",
    ),
    (StoreMigratingError, "store migrating", "writes are paused while the store changes models; retry in a minute"),
    (BackendUnavailable, "store busy", "the store is locked or unreachable; retry shortly"),
    (IntegrityError, "store damaged", "do not retry; ask the user to run `memstone verify`"),
    (MemstoneError, "error", "see the message; `memstone doctor` checks the installation"),
)


def tool_message(exc: MemstoneError) -> str:
    """``<what>: <message> (<hint>). Next: <advice>`` for one memstone error."""
    for cls, what, advice in ADVICE:
        if isinstance(exc, cls):
            hint = f" ({exc.hint})" if exc.hint and not isinstance(exc, RevisionConflictError) else ""
            return f"{what}: {exc.message}{hint}. Next: {advice}. [code: {exc.code}]"
    raise AssertionError("MemstoneError is the last row")  # pragma: no cover


def stale_version(entry_id: str, expected: int, current: int) -> ToolError:
    """The optimistic-concurrency refusal of memory_update (``expected_version`` is not the current one)."""
    return ToolError(
        f"stale revision: {entry_id} is at version {current}, not {expected}. Next: call memory_source "
        f"{entry_id} again and retry with the current revision (expected_version={current}). [code: revision_conflict]"
    )


@contextmanager
def tool_errors() -> Iterator[None]:
    """Turn a memstone error raised inside a tool into a ToolError with advice."""
    try:
        yield
    except MemstoneError as exc:
        raise ToolError(tool_message(exc)) from exc


__all__ = ["ADVICE", "stale_version", "tool_errors", "tool_message"]
