"""The argument types and annotations the MCP tools share: forgiving tags and ids, kinds, scopes, hints."""

from __future__ import annotations

from typing import Annotated, Literal

from mcp.types import ToolAnnotations
from pydantic import BeforeValidator, Field

from ...domain.model import KnownKind


def _tags(value: object) -> object:
    """Forgiving tags: a comma-separated string is a list (models often send one)."""
    if isinstance(value, str):
        return [t.strip() for t in value.split(",") if t.strip()]
    return value


def _ids(value: object) -> object:
    if isinstance(value, str):
        return [t.strip() for t in value.replace(",", " ").split() if t.strip()]
    return value


def _kind(value: object) -> object:
    """``LESSON`` and ``lesson`` are one kind (issue 11), as on every other surface."""
    return value.strip().lower() if isinstance(value, str) else value


Kind = Annotated[KnownKind, BeforeValidator(_kind)]
Tags = Annotated[
    list[str] | None,
    BeforeValidator(_tags),
    Field(description="Tags, e.g. ['build', 'python'] (a comma-separated string also works)."),
]
Ids = Annotated[list[str], BeforeValidator(_ids), Field(description="Entry ids (ent_…).", min_length=1)]
ReadScope = Annotated[
    Literal["all", "project", "user"], Field(description="Whose memories: this project's, the user's, or both.")
]
WriteScope = Annotated[
    Literal["project", "user"],
    Field(description="project (default) for anything about this project; user only for cross-project preferences."),
]
EntryIdArg = Annotated[str, Field(description="Entry id (ent_…).", pattern=r"^ent_[0-9A-Za-z]+$")]
Reason = Annotated[str | None, Field(description="Why, in a few words (kept in the history).", max_length=512)]

READ = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)


def write_hints(*, destructive: bool, idempotent: bool) -> ToolAnnotations:
    return ToolAnnotations(
        read_only_hint=False, destructive_hint=destructive, idempotent_hint=idempotent, open_world_hint=False
    )


__all__ = [
    "READ",
    "EntryIdArg",
    "Ids",
    "Kind",
    "ReadScope",
    "Reason",
    "Tags",
    "WriteScope",
    "write_hints",
]
