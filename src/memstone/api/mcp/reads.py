"""The read tools: memory_mandatory, memory_search, memory_source, memory_list, memory_history,
memory_changes and memory_recall (all read-only and idempotent)."""

from __future__ import annotations

from typing import Annotated, Literal

from mcp.server.mcpserver import Context
from pydantic import Field

from ...agents.briefing import prompt_context, session_briefing
from .args import READ, EntryIdArg, Kind, ReadScope, Tags, WriteScope
from .errors import tool_errors
from .registry import Here, ToolRegistrar
from .schemas import (
    ChangesOut,
    HistoryOut,
    HitOut,
    LinkOut,
    ListOut,
    MandatoryOut,
    MemoryBrief,
    MemoryOut,
    OmittedOut,
    RecallOut,
    RevisionChangesOut,
    SearchOut,
    SourceOut,
    VersionOut,
)


def register_read_tools(tool: ToolRegistrar, here: Here) -> None:
    """Add the read tools to a server (``tool`` and ``here`` are build_server's registrar and caller)."""

    @tool("memory_mandatory", "Mandatory memories", READ)
    async def memory_mandatory(ctx: Context, scope: ReadScope = "all") -> MandatoryOut:
        """Every live mandatory memory, in full: step 1 of recall at session start. Read all of them.

        Mandatory memories are standing rules and facts that hold in every session of this project (and
        the user's cross-project ones). They are returned complete and unscored, mandatory-first then newest.
        Then call memory_search for the task with exclude_mandatory=true.
        """
        with tool_errors():
            c = here(ctx)
            found = await c.svc.mandatory(scopes=c.scopes(scope))
            live = [r for r in found if r.shadowed_by is None]
            return MandatoryOut(memories=[MemoryOut.of(r) for r in live], count=len(live), scopes=c.scopes(scope))

    @tool("memory_search", "Search memories", READ)
    async def memory_search(
        ctx: Context,
        query: Annotated[str, Field(description="What you need to know, in words (not a regex).", min_length=1)],
        scope: ReadScope = "all",
        limit: Annotated[int, Field(ge=1, le=50, description="How many distinct memories.")] = 8,
        exclude_mandatory: Annotated[
            bool, Field(description="true after memory_mandatory, so the results do not repeat them.")
        ] = False,
        kinds: Annotated[list[Kind] | None, Field(description="Only these kinds.")] = None,
        tags: Tags = None,
        order: Annotated[
            Literal["relevance", "priority"],
            Field(description="relevance (score), or priority: mandatory, important, then newest."),
        ] = "relevance",
        include_superseded: Annotated[
            bool, Field(description="Also match older versions (returned as superseded, with the current id).")
        ] = False,
        mode: Annotated[
            Literal["auto", "fts", "vector", "hybrid"], Field(description="auto: hybrid when vectors are ready.")
        ] = "auto",
        context: Annotated[
            bool, Field(description="true: after the first 7 hits, the memories written next to them (limit > 7).")
        ] = False,
    ) -> SearchOut:
        """Find memories relevant to a task or question (full-text and semantic). Step 2 of recall.

        Hits carry a snippet; call memory_source with an id for the full memory before relying on a
        truncated one. Returns the mode actually used (auto falls back to full-text and says why).
        """
        with tool_errors():
            c = here(ctx)
            result = await c.svc.search(
                query,
                scopes=c.scopes(scope),
                limit=limit,
                mode=mode,
                kinds=list(kinds or ()),
                tags=list(tags or ()),
                order=order,
                exclude_mandatory=exclude_mandatory,
                include_superseded=include_superseded,
                context=context,
            )
            return SearchOut(
                hits=[HitOut.of(h) for h in result.hits],
                mode=result.mode,
                fallback_reason=result.fallback_reason,
                order=result.order,
                shadowed=len(result.shadowed),
            )

    @tool("memory_source", "Read a memory", READ)
    async def memory_source(
        ctx: Context,
        id: Annotated[
            str,
            Field(
                description="ent_… (current version), ver_… (an exact version) or ent_…@N (version N).", min_length=5
            ),
        ],
    ) -> SourceOut:
        """One memory in full, as Markdown with YAML frontmatter (title, type, tags, flags, revision, dates).

        Use it to read a search hit completely, or an exact older version from memory_history.
        """
        with tool_errors():
            c = here(ctx)
            version = await c.svc.version(id)
            markdown = await c.svc.source(version.entry_version_id)
            return SourceOut(
                id=version.entry_id, version_id=version.entry_version_id, version=version.version, markdown=markdown
            )

    @tool("memory_list", "List memories", READ)
    async def memory_list(
        ctx: Context,
        scope: ReadScope = "all",
        kinds: Annotated[list[Kind] | None, Field(description="Only these kinds.")] = None,
        tags: Tags = None,
        important: Annotated[bool | None, Field(description="true: only important; false: only not.")] = None,
        mandatory: Annotated[bool | None, Field(description="true: only mandatory; false: only not.")] = None,
        include_inactive: Annotated[bool, Field(description="Also forgotten memories (to reactivate).")] = False,
        limit: Annotated[int, Field(ge=1, le=200)] = 50,
    ) -> ListOut:
        """Browse the catalogue: mandatory first, then important, then the rest, newest first. Snippets only.

        For a question, memory_search is better; list is for overviews and for finding forgotten memories.
        """
        with tool_errors():
            c = here(ctx)
            found = await c.svc.list(
                scopes=c.scopes(scope),
                kinds=list(kinds or ()),
                tags=list(tags or ()),
                important=important,
                mandatory=mandatory,
                include_inactive=include_inactive,
                limit=limit,
            )
            return ListOut(memories=[MemoryBrief.of(r) for r in found], count=len(found), scopes=c.scopes(scope))

    @tool("memory_history", "Version history", READ)
    async def memory_history(
        ctx: Context,
        id: EntryIdArg,
        diff: Annotated[bool, Field(description="Include what changed between consecutive versions.")] = True,
    ) -> HistoryOut:
        """Every version of one memory, oldest first: who wrote it, when, and what each version changed.

        The last version is current (or deleted if the memory was forgotten). memory_source ent_…@N reads one.
        """
        with tool_errors():
            c = here(ctx)
            items = await c.svc.history(id, reasons=True)
            out = []
            for prev, item in zip((None, *items[:-1]), items, strict=True):
                change = None
                if diff and prev is not None:
                    change = await c.svc.diff(prev.version.entry_version_id, item.version.entry_version_id)
                out.append(VersionOut.of(item, change))
            return HistoryOut(id=id, versions=out)

    @tool("memory_changes", "Recent changes", READ)
    async def memory_changes(
        ctx: Context,
        scope: WriteScope = "project",
        since_revision: Annotated[int, Field(ge=0, description="Only revisions after this one (0: all).")] = 0,
        limit: Annotated[int, Field(ge=1, le=100, description="At most this many, the newest.")] = 20,
    ) -> ChangesOut:
        """What each recent revision of a scope's memory changed: added, revised, forgotten, reactivated.

        Pass the head_revision you saw last time as since_revision to see only what is new.
        """
        with tool_errors():
            c = here(ctx)
            uri = c.settings.write_scope(scope)
            head = await c.svc.resolve(uri)
            if head is None:
                return ChangesOut(memory_id=None, scope=uri, head_revision=0, revisions=[])
            deltas = await c.svc.changes(head, since_revision=since_revision)
            return ChangesOut(
                memory_id=head.memory_id,
                scope=uri,
                head_revision=head.revision,
                revisions=[RevisionChangesOut.of(d) for d in deltas[-limit:]],
            )

    @tool("memory_recall", "Recall for this session", READ)
    async def memory_recall(
        ctx: Context,
        context: Annotated[
            str | None, Field(description="The task or question at hand (omit for the mandatory memories only).")
        ] = None,
        budget_tokens: Annotated[int, Field(ge=100, le=20000, description="Token budget for the whole result.")] = 2000,
        scope: ReadScope = "all",
    ) -> RecallOut:
        """The session-start recall in one call: every mandatory memory in full, then the memories relevant to
        `context` (mandatory ones excluded), within a token budget, saying what was left out.

        Use it when no "memstone briefing" is in context (no hooks), or after the conversation was compacted.
        """
        with tool_errors():
            c = here(ctx)
            found = await c.heads(scope)
            if not found:
                return RecallOut(
                    briefing="No memories are stored for this project or user yet.",
                    mandatory=[],
                    contextual=[],
                    omitted=[],
                    budget_tokens=budget_tokens,
                    used_tokens=0,
                    mode="none",
                    note="nothing stored yet",
                )
            bundle = await c.svc.recall(context, memories=found, budget_tokens=budget_tokens)
            brief = session_briefing(
                bundle.mandatory, (), budget_tokens=budget_tokens, project_scope=c.settings.project_scope
            )
            more = prompt_context(bundle.contextual, budget_tokens=budget_tokens, why="the context")
            text = "\n\n".join(b.text for b in (brief, more) if b is not None) or "No mandatory or matching memories."
            return RecallOut(
                briefing=text,
                mandatory=[MemoryOut.of(r) for r in bundle.mandatory],
                contextual=[HitOut.of(h) for h in bundle.contextual],
                links=[LinkOut.of(x) for x in bundle.links],
                omitted=[
                    OmittedOut(id=o.entry_id, section=o.section, reason=o.reason, cost=o.cost) for o in bundle.omitted
                ],
                budget_tokens=bundle.budget,
                used_tokens=bundle.used,
                mode=bundle.mode,
                note=bundle.note,
            )


__all__ = ["register_read_tools"]
