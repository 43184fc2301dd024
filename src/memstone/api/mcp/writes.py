"""The write tools: memory_remember, memory_update, memory_forget, memory_reactivate and memory_relate."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Annotated, Literal

from mcp.server.mcpserver import Context
from pydantic import Field

from ...domain.errors import StaleEntryError
from ...domain.model import EntryInput, EntryPatch, Revision
from ...domain.search import searchable
from ...service import MemoryService
from .args import EntryIdArg, Ids, Kind, Reason, Tags, WriteScope, write_hints
from .caller import Caller
from .errors import stale_version, tool_errors
from .registry import Here, ToolRegistrar
from .schemas import EntryRef, HitOut, RevisionRef, WriteOut


def register_write_tools(tool: ToolRegistrar, here: Here) -> None:
    """Add the write tools to a server (``tool`` and ``here`` are build_server's registrar and caller)."""

    @tool("memory_remember", "Remember", write_hints(destructive=False, idempotent=True))
    async def memory_remember(
        ctx: Context,
        text: Annotated[
            str,
            Field(
                description="One self-contained memory in Markdown (at most 8192 UTF-8 bytes): name the subject, "
                "keep the rationale.",
                min_length=1,
            ),
        ],
        kind: Annotated[Kind, Field(description="fact, decision, convention, constraint, correction, …")] = "fact",
        title: Annotated[str | None, Field(description="A short title (recommended).", max_length=200)] = None,
        tags: Tags = None,
        scope: WriteScope = "project",
        important: Annotated[bool, Field(description="Curated reference material, relevant in some tasks.")] = False,
        mandatory: Annotated[bool, Field(description="Needed in every session (loaded in full at start).")] = False,
        slug: Annotated[
            str | None, Field(description="Optional stable kebab-case name, unique per kind.", max_length=64)
        ] = None,
    ) -> WriteOut:
        """Store a new durable memory (see the server instructions for what to capture and what never to).

        Check `similar` in the result: if one of them already says this, keep that one (memory_update it)
        and memory_forget the new id. An exact duplicate of a live memory writes nothing (status unchanged).
        Secrets are never stored.
        """
        with tool_errors():
            c = here(ctx)
            uri = c.settings.write_scope(scope)
            item = EntryInput(
                kind=kind,
                text=text,
                title=title,
                tags=tuple(tags or ()),
                slug=slug,
                important=important,
                mandatory=mandatory,
            )
            done = await c.svc.remember_outcome(None, entries=[item], scope=uri, surface="agent-session")
            rev = done.revision
            if rev is None or not done.added:
                return WriteOut(
                    status="unchanged",
                    entries=[EntryRef(id=e, version_id=None, op="unchanged") for e in done.existing],
                    revisions=[RevisionRef.of(rev, uri)] if rev else [],
                    note="an identical live memory already exists; nothing was written",
                )
            added = WriteOut.entries_of(rev.changes)
            new_ids = {e.id for e in added}
            similar = await c.svc.search(text, scopes=[uri], limit=4, mode="auto") if searchable(text) else None
            near = [HitOut.of(h) for h in similar.hits if h.entry_id not in new_ids][:3] if similar else []
            return WriteOut(
                status="created",
                entries=added,
                revisions=[RevisionRef.of(rev, uri)],
                similar=near,
                note=(
                    "similar memories exist: if one says the same, memory_update it and memory_forget the new id"
                    if near
                    else None
                ),
            )

    @tool("memory_update", "Update a memory", write_hints(destructive=False, idempotent=True))
    async def memory_update(
        ctx: Context,
        id: EntryIdArg,
        text: Annotated[
            str | None, Field(description="New full text, at most 8192 UTF-8 bytes (omit to keep).")
        ] = None,
        title: Annotated[str | None, Field(description="New title (empty string clears it).", max_length=200)] = None,
        kind: Annotated[Kind | None, Field(description="New kind (omit to keep).")] = None,
        tags: Tags = None,
        important: Annotated[bool | None, Field(description="Set or clear important (omit to keep).")] = None,
        mandatory: Annotated[bool | None, Field(description="Set or clear mandatory (omit to keep).")] = None,
        expected_version: Annotated[
            int | None, Field(ge=1, description="The version you read; refused if someone changed it since.")
        ] = None,
        reason: Reason = None,
    ) -> WriteOut:
        """Revise a memory in place: a correction, a refinement, new flags. The old version stays in history.

        Prefer this over memory_remember whenever a memory on the subject already exists. Fields you omit
        keep their value. With expected_version, a concurrent change is refused instead of overwritten.
        """
        with tool_errors():
            c = here(ctx)
            try:
                done = await c.svc.update(
                    id,
                    EntryPatch(
                        kind=kind,
                        text=text,
                        title=title,
                        tags=None if tags is None else tuple(tags),
                        important=important,
                        mandatory=mandatory,
                        reason=reason,
                    ),
                    expected_version=expected_version,
                )
            except StaleEntryError as exc:
                raise stale_version(id, expected_version or 0, exc.actual or 0) from exc
            if done.status == "unchanged":
                scope = await c.svc.scope_of(done.current.memory_id)
                return WriteOut(
                    status="unchanged",
                    entries=[EntryRef(id=id, version_id=done.current.entry_version_id, op="unchanged")],
                    revisions=[RevisionRef.of(done.revision, scope)],
                    note="the memory already has exactly this content",
                )
            return WriteOut(
                status="updated",
                entries=WriteOut.entries_of(done.revision.changes),
                revisions=[RevisionRef.of(done.revision)],
            )

    async def _set_state(c: Caller, ids: Sequence[str], reason: str | None, *, forget: bool) -> WriteOut:
        by_memory: dict[str, list[str]] = {}
        for entry in dict.fromkeys(ids):
            version = await c.svc.get(entry)
            by_memory.setdefault(version.memory_id, []).append(entry)
        revisions: list[RevisionRef] = []
        entries: list[EntryRef] = []
        for memory_id, group in by_memory.items():
            head, rev = await _retrying(c.svc, memory_id, _state_write(c.svc, group, reason, forget=forget))
            if rev.revision != head.revision:
                revisions.append(RevisionRef.of(rev))
                entries.extend(WriteOut.entries_of(rev.changes))
        status: Literal["forgotten", "reactivated"] = "forgotten" if forget else "reactivated"
        if not entries:
            return WriteOut(
                status="unchanged", entries=[], revisions=revisions, note=f"already {status}: nothing to do"
            )
        return WriteOut(status=status, entries=entries, revisions=revisions)

    @tool("memory_forget", "Forget memories", write_hints(destructive=True, idempotent=True))
    async def memory_forget(ctx: Context, ids: Ids, reason: Reason = None) -> WriteOut:
        """Take memories out of recall (wrong, obsolete, or the user asked). History keeps them.

        For a memory that is only outdated, memory_update is usually better. memory_reactivate undoes this.
        """
        with tool_errors():
            c = here(ctx)
            return await _set_state(c, ids, reason, forget=True)

    @tool("memory_reactivate", "Reactivate memories", write_hints(destructive=False, idempotent=True))
    async def memory_reactivate(ctx: Context, ids: Ids, reason: Reason = None) -> WriteOut:
        """Bring forgotten memories back, at the version they had. Find them with memory_list include_inactive."""
        with tool_errors():
            c = here(ctx)
            return await _set_state(c, ids, reason, forget=False)

    @tool("memory_relate", "Relate memories", write_hints(destructive=False, idempotent=True))
    async def memory_relate(
        ctx: Context,
        source: EntryIdArg,
        target: EntryIdArg,
        kind: Annotated[
            str,
            Field(
                description="supersedes, clarifies, relates-to, or another kebab-case verb.",
                pattern=r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$",
                max_length=64,
            ),
        ] = "relates-to",
    ) -> WriteOut:
        """Link one memory to another (source → target), e.g. a decision that supersedes an older one.

        The link is a new version of the source; it shows up in memory_recall and in both memories' context.
        """
        with tool_errors():
            c = here(ctx)
            memory_id = (await c.svc.get(source)).memory_id
            head, rev = await _retrying(c.svc, memory_id, lambda h: c.svc.relate(h, source, target, kind))
            if rev.revision == head.revision:
                return WriteOut(status="unchanged", entries=[], revisions=[RevisionRef.of(rev)], note="already linked")
            return WriteOut(status="related", entries=WriteOut.entries_of(rev.changes), revisions=[RevisionRef.of(rev)])


def _state_write(
    svc: MemoryService, entries: list[str], reason: str | None, *, forget: bool
) -> Callable[[Revision], Awaitable[Revision]]:
    async def write(head: Revision) -> Revision:
        if forget:
            return await svc.forget(head, entries=entries, reason=reason)
        return await svc.reactivate(head, entries=entries, reason=reason)

    return write


async def _retrying(
    svc: MemoryService, memory_id: str, write: Callable[[Revision], Awaitable[Revision]]
) -> tuple[Revision, Revision]:
    """Apply a write to the Memory's current head; a lost race re-reads the head (the service's retry policy)."""

    async def attempt() -> tuple[Revision, Revision]:
        head = await svc.head(memory_id)
        return head, await write(head)

    return await svc.retrying(attempt)


__all__ = ["register_write_tools"]
