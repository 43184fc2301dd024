"""The memstone MCP server: ``build_server(service, settings)`` → an ``MCPServer`` (stdio or streamable HTTP).

Tools mirror the service (``memory_mandatory``, ``memory_search``, ``memory_source``, ``memory_list``,
``memory_history``, ``memory_changes``, ``memory_recall``, ``memory_remember``, ``memory_update``,
``memory_forget``, ``memory_reactivate``, ``memory_relate``); each docstring is the model's contract. Prompts:
``session_start`` and ``capture``. Resources: ``memory://mandatory`` and ``memory://entry/{entry_id}`` (Markdown).

Composition: ``memstone mcp`` opens the service and calls :func:`serve` (stdio by default). ``memstone serve``
mounts the same server over streamable HTTP with :func:`mcp_mount` (its ``extra_mounts`` hook); any other
Starlette app can use :func:`mcp_routes`::

    create_app(http_settings, extra_mounts={"/mcp": mcp_mount()})      # memstone serve
    routes, lifespan = mcp_routes(build_server(service, settings))      # Route("/mcp", …) + its lifespan
    app = Starlette(routes=[*routes, ...], lifespan=lambda app: lifespan())
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager, suppress
from dataclasses import dataclass, replace
from typing import Annotated, Literal, Protocol, TypeVar

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp
from mcp.server.transport_security import TransportSecuritySettings
from mcp.types import ToolAnnotations
from pydantic import BeforeValidator, Field
from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.routing import BaseRoute
from starlette.types import ASGIApp, Receive, Scope, Send

from ...agents.briefing import prompt_context, session_briefing
from ...agents.settings import AgentSettings, ScopeChoice
from ...auth.errors import Unauthenticated
from ...auth.model import Access
from ...domain.errors import MemstoneError, StaleEntryError
from ...domain.model import KNOWN_KINDS, EntryInput, EntryPatch, Revision
from ...domain.search import searchable
from ...service import MemoryService
from ...service.policy import Actor, UserOrg
from .errors import MemstoneMCPServer, stale_version, tool_errors
from .review import register_review_tools
from .schemas import (
    ChangesOut,
    EntryRef,
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
    RevisionRef,
    SearchOut,
    SourceOut,
    VersionOut,
    WriteOut,
)

log = logging.getLogger("memstone.mcp")
ToolFn = TypeVar("ToolFn", bound=Callable[..., Awaitable[object]])

INSTRUCTIONS = """\
memstone is the durable, versioned memory of this project: facts, decisions, conventions, constraints, \
corrections, lessons and procedures that later sessions need. Nothing is ever lost: every change is a new version.

Recall at session start, in order: (1) memory_mandatory, and read every memory it returns (they hold in every \
session); (2) memory_search for the task with exclude_mandatory=true, then memory_source for ids worth reading \
in full. A "memstone briefing" already in context (from a hook) covers step 1. memory_recall does both in one call.

Capture without being asked when the user states durable project information or standing guidance (lifecycle, \
environment, policies, conventions, anything that changes later planning, review, compatibility or risk), or \
when you confirm non-obvious knowledge another agent would need (invariants, sources of truth, coupling, root \
causes, decisions and trade-offs, surprising tool behaviour, procedures). Keep the user's rationale with the \
rule. Kinds: fact for lifecycle/environment state; decision or convention for standing guidance; correction, \
lesson, procedure, constraint, preference.

Never capture: secrets (keys, tokens, passwords), transient task state or progress, instructions limited to the \
current task, questions, speculation or unconfirmed hypotheses, or what the code and docs already say.

Scope is project by default; scope=user only for preferences that genuinely hold across projects. \
mandatory=true only when every session needs it; important=true for conditional reference material.

When guidance contradicts or refines a live memory, memory_update it (the history is kept) instead of adding a \
duplicate; memory_remember lists similar memories to check.
"""


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


KindName = Literal[
    "fact",
    "preference",
    "decision",
    "constraint",
    "convention",
    "correction",
    "lesson",
    "pattern",
    "procedure",
    "working_note",
]
assert set(KindName.__args__) == set(KNOWN_KINDS)  # type: ignore[attr-defined]
Kind = Annotated[KindName, BeforeValidator(_kind)]
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


ACCESS_KEY = "memstone.access"  # where the HTTP mount leaves the authenticated access on the request's state


@dataclass(frozen=True, slots=True)
class Caller:
    """The service and scopes of one tool call's caller (the local user, or an authenticated principal)."""

    svc: MemoryService
    settings: AgentSettings

    def scopes(self, which: ScopeChoice) -> list[str]:
        return list(self.settings.scopes(which))

    async def heads(self, which: ScopeChoice) -> list[Revision]:
        found = []
        for scope in self.scopes(which):
            head = await self.svc.resolve(scope)
            if head is not None:
                found.append(head)
        return found


def _access_of(ctx: Context | None) -> Access | None:
    """The access the HTTP mount authenticated for this request (None over stdio, or outside a request)."""
    if ctx is None:
        return None
    try:
        request = ctx.request_context.request
    except ValueError:
        return None
    state = getattr(request, "scope", {}).get("state") if request is not None else None
    found = state.get(ACCESS_KEY) if isinstance(state, dict) else None
    return found if isinstance(found, Access) else None


def _write(*, destructive: bool, idempotent: bool) -> ToolAnnotations:
    return ToolAnnotations(
        read_only_hint=False, destructive_hint=destructive, idempotent_hint=idempotent, open_world_hint=False
    )


def build_server(
    service: MemoryService,
    settings: AgentSettings,
    *,
    authenticated: bool = False,
    user_org: UserOrg | None = None,
) -> MCPServer:
    """The MCP server over one open service. ``settings`` names the project and user scopes and the budgets.

    Every tool runs as the caller: over HTTP the mount puts the authenticated access on the request, and the
    tool acts through ``service.acting(...)``, so the service's policy checks the caller's grants and records
    it as author. With ``authenticated=True`` (token mode) a call that carries no access is refused. Over
    stdio the caller is the local user.

    >>> server = build_server(svc, AgentSettings.load())   # doctest: +SKIP
    >>> await server.run_stdio_async()                      # doctest: +SKIP
    """
    from ... import __version__

    mcp: MCPServer = MemstoneMCPServer("memstone", version=__version__, instructions=INSTRUCTIONS, log_level="WARNING")

    def tool(name: str, title: str, annotations: ToolAnnotations) -> Callable[[ToolFn], ToolFn]:
        """Register a tool whose description is its docstring, dedented (the model reads every character)."""

        def register(fn: ToolFn) -> ToolFn:
            description = inspect.cleandoc(fn.__doc__ or "")
            mcp.add_tool(fn, name=name, title=title, description=description, annotations=annotations)
            return fn

        return register

    def here(ctx: Context | None) -> Caller:
        """The service and scopes of the caller of this request."""
        access = _access_of(ctx)
        if access is None:
            if authenticated:
                raise Unauthenticated("this MCP endpoint needs an API token", hint="send Authorization: Bearer …")
            return Caller(service, settings)
        if access.local:
            return Caller(service, settings)
        view = service.acting(Actor.of(access, surface="agent-session"), user_org=user_org)
        return Caller(view, replace(settings, user_scope=access.principal.user_scope))

    # ------------------------------------------------------------------------------------------ reads
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
            items = await c.svc.history(id)
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
                links=[
                    LinkOut(
                        direction=x.direction,
                        kind=x.kind,
                        source=x.source,
                        target=x.target,
                        other_title=x.other_title,
                        other_state=x.other_state,
                    )
                    for x in bundle.links
                ],
                omitted=[
                    OmittedOut(id=o.entry_id, section=o.section, reason=o.reason, cost=o.cost) for o in bundle.omitted
                ],
                budget_tokens=bundle.budget,
                used_tokens=bundle.used,
                mode=bundle.mode,
                note=bundle.note,
            )

    # ------------------------------------------------------------------------------------------ writes
    @tool("memory_remember", "Remember", _write(destructive=False, idempotent=True))
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
            before = await c.svc.resolve(uri)
            rev = await c.svc.remember(None, entries=[item], scope=uri, surface="agent-session")
            if rev is None or (before is not None and rev.revision == before.revision):
                existing = await _identical(c.svc, uri, kind, text)
                return WriteOut(
                    status="unchanged",
                    entries=[EntryRef(id=existing, version_id=None, op="unchanged")] if existing else [],
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

    @tool("memory_update", "Update a memory", _write(destructive=False, idempotent=True))
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

    @tool("memory_forget", "Forget memories", _write(destructive=True, idempotent=True))
    async def memory_forget(ctx: Context, ids: Ids, reason: Reason = None) -> WriteOut:
        """Take memories out of recall (wrong, obsolete, or the user asked). History keeps them.

        For a memory that is only outdated, memory_update is usually better. memory_reactivate undoes this.
        """
        with tool_errors():
            c = here(ctx)
            return await _set_state(c, ids, reason, forget=True)

    @tool("memory_reactivate", "Reactivate memories", _write(destructive=False, idempotent=True))
    async def memory_reactivate(ctx: Context, ids: Ids, reason: Reason = None) -> WriteOut:
        """Bring forgotten memories back, at the version they had. Find them with memory_list include_inactive."""
        with tool_errors():
            c = here(ctx)
            return await _set_state(c, ids, reason, forget=False)

    @tool("memory_relate", "Relate memories", _write(destructive=False, idempotent=True))
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

    register_review_tools(tool, here, settings.url)  # memory_review_list / _accept / _reject (api/mcp/review.py)

    # ------------------------------------------------------------------------------------------ resources
    @mcp.resource(
        "memory://mandatory",
        name="mandatory",
        title="Mandatory memories",
        description="Every live mandatory memory of this project and user, as Markdown.",
        mime_type="text/markdown",
    )
    async def mandatory_resource() -> str:
        with tool_errors():
            c = here(None)  # a static resource carries no request: in token mode it is refused
            found = [r for r in await c.svc.mandatory(scopes=c.scopes("all")) if r.shadowed_by is None]
            parts = [await c.svc.source(r.entry_version_id) for r in found]
            return "\n".join(parts) if parts else "No mandatory memories.\n"

    @mcp.resource(
        "memory://entry/{entry_id}",
        name="memory",
        title="A memory",
        description="One memory (its current version) as Markdown with YAML frontmatter.",
        mime_type="text/markdown",
    )
    async def entry_resource(ctx: Context, entry_id: str) -> str:
        with tool_errors():
            c = here(ctx)
            return await c.svc.source(entry_id)

    # ------------------------------------------------------------------------------------------ prompts
    @mcp.prompt(name="session_start", title="Start a session with memory")
    async def session_start(ctx: Context, task: str = "") -> str:
        """Load this project's memories: the mandatory ones in full, then those relevant to the task."""
        with tool_errors():
            c = here(ctx)
            found = await c.heads("all")
            if not found:
                return "No memories are stored for this project yet. Capture durable knowledge as you learn it."
            bundle = await c.svc.recall(task or None, memories=found, budget_tokens=c.settings.session_budget_tokens)
            brief = session_briefing(
                bundle.mandatory,
                (),
                budget_tokens=c.settings.session_budget_tokens,
                project_scope=c.settings.project_scope,
            )
            more = prompt_context(bundle.contextual, budget_tokens=c.settings.session_budget_tokens, why="the task")
            body = "\n\n".join(b.text for b in (brief, more) if b is not None) or "No mandatory memories are stored."
            follow = (
                "Search further with memory_search (exclude_mandatory=true) when the task touches something "
                "these do not cover."
            )
            return f"{body}\n\n{follow}"

    @mcp.prompt(name="capture", title="Capture what this session learned")
    def capture_prompt() -> str:
        """Review the session and store what later sessions need (and nothing else)."""
        return (
            "Review this session for durable knowledge worth keeping in memstone:\n"
            "- the user's statements of project facts, lifecycle, policies, conventions or standing preferences;\n"
            "- corrections the user made to you;\n"
            "- confirmed, non-obvious findings: invariants, sources of truth, coupling, root causes, decisions and "
            "trade-offs, surprising tool behaviour, procedures.\n"
            "Skip secrets, transient progress, task-only instructions, questions, speculation and what the code "
            "already says. For each item, memory_search first: memory_update an existing memory on the subject, "
            "otherwise memory_remember one self-contained memory (project scope unless it is a cross-project "
            "preference). Report what you stored."
        )

    return mcp


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


async def _identical(svc: MemoryService, scope: str, kind: str, text: str) -> str | None:
    """The live entry an exact-duplicate write matched (by kind and text), if search finds it."""
    if not searchable(text):
        return None
    result = await svc.search(text, scopes=[scope], limit=10, mode="fts")
    for hit in result.hits:
        if hit.kind == kind and hit.text.strip() == text.strip():
            return hit.entry_id
    return None


# ---------------------------------------------------------------------------------------------- transports
def mcp_routes(
    server: MCPServer, *, path: str = "/mcp", host: str = "127.0.0.1", json_response: bool = False
) -> tuple[list[BaseRoute], Callable[[], AbstractAsyncContextManager[None]]]:
    """The route that serves ``server`` over streamable HTTP at ``path``, and the lifespan the host app must run.

    DNS-rebinding protection is on for loopback hosts (the Host header must be a loopback name).

    >>> routes, lifespan = mcp_routes(build_server(svc, settings))  # doctest: +SKIP
    >>> app = Starlette(routes=[*routes, Route("/health", health)], lifespan=lambda app: lifespan())  # doctest: +SKIP
    """
    app = server.streamable_http_app(streamable_http_path=path, host=host, json_response=json_response)
    routes = list(app.routes)

    @asynccontextmanager
    async def lifespan() -> AsyncIterator[None]:
        async with server.session_manager.run():
            yield

    return routes, lifespan


ACCESS_STATUS = {"unauthenticated": 401, "forbidden": 403, "access": 403}  # by the errors' stable codes


class MountState(Protocol):
    """What ``memstone serve`` hands an extra mount (its ``AppState``): the open service, settings, auth."""

    @property
    def service(self) -> MemoryService: ...

    async def authenticate(self, headers: Headers) -> object: ...

    async def org_of(self, user: str) -> str | None: ...


class _AuthenticatedMCP:
    """The streamable-HTTP endpoint behind the host's ``authenticate`` (an ASGI app object, so a Starlette
    ``Route`` or ``Mount`` can take it as is)."""

    def __init__(self, handler: ASGIApp, state: MountState) -> None:
        self.handler = handler
        self.state = state

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            try:
                access = await self.state.authenticate(Headers(scope=scope))
            except MemstoneError as exc:
                status = ACCESS_STATUS.get(exc.code, 503)
                body = {"error": {"code": exc.code, "message": exc.message, "hint": exc.hint}}
                await JSONResponse(body, status_code=status)(scope, receive, send)
                return
            # Trigger: every MCP message over HTTP. Why: the tool must act as this request's principal, and a
            # session may outlive one token, so the access travels with the request, never with the session.
            # Outcome: the tool reads it from the request (see _access_of) and acts through service.acting().
            scope = {**scope, "state": {**scope.get("state", {}), ACCESS_KEY: access}}
        await self.handler(scope, receive, send)


def mcp_mount(
    *, settings: AgentSettings | None = None, host: str = "127.0.0.1", allowed_hosts: Sequence[str] = ()
) -> Callable[[MountState], AbstractAsyncContextManager[ASGIApp]]:
    """An ``extra_mounts`` factory for ``memstone serve``: ``create_app(settings, extra_mounts={"/mcp": mcp_mount()})``.

    The yielded ASGI app serves the MCP streamable-HTTP endpoint at every path inside its mount, runs the SDK's
    session manager for the app's lifetime, and asks the host's ``authenticate`` first (local mode passes;
    token mode needs ``Authorization: Bearer …``; a refusal is a 401 with the error's code).
    """

    @asynccontextmanager
    async def factory(state: MountState) -> AsyncIterator[ASGIApp]:
        agent_settings = settings or AgentSettings.load(url=getattr(getattr(state, "settings", None), "url", None))
        server = build_server(state.service, agent_settings, authenticated=True, user_org=state.org_of)
        security = None
        if allowed_hosts:
            security = TransportSecuritySettings(
                enable_dns_rebinding_protection=True,
                allowed_hosts=list(allowed_hosts),
                allowed_origins=[f"http://{h}" for h in allowed_hosts],
            )
        server.streamable_http_app(host=host, transport_security=security)  # creates the session manager
        app = _AuthenticatedMCP(StreamableHTTPASGIApp(server.session_manager), state)
        async with server.session_manager.run():
            yield app

    return factory


async def describe(svc: MemoryService, settings: AgentSettings) -> dict[str, object]:
    """The server's surface as plain data (``memstone mcp --json``): instructions, tools, prompts, resources."""
    server = build_server(svc, settings)
    tools = []
    for t in await server.list_tools():
        hints = t.annotations
        tools.append(
            {
                "name": t.name,
                "title": t.title,
                "read_only": hints.read_only_hint if hints else None,
                "destructive": hints.destructive_hint if hints else None,
                "idempotent": hints.idempotent_hint if hints else None,
                "description": t.description,
            }
        )
    return {
        "name": server.name,
        "version": server.version,
        "instructions": server.instructions,
        "instructions_bytes": len((server.instructions or "").encode("utf-8")),
        "tools": tools,
        "prompts": [p.name for p in await server.list_prompts()],
        "resources": [str(r.uri) for r in await server.list_resources()]
        + [t.uri_template for t in await server.list_resource_templates()],
    }


async def backfill_loop(svc: MemoryService, *, every_s: float = 120.0, first_s: float = 5.0) -> None:
    """Embed what writes without a model (hooks) left without vectors, every two minutes, while serving."""
    await asyncio.sleep(first_s)
    while True:
        try:
            if svc.indexer is not None and await svc.backend.vector_backlog() > 0:
                done = await svc.backfill(batch=32)
                log.info("backfill: embedded %d entries", done)
        except MemstoneError as exc:
            log.warning("backfill failed: %s", exc)
        await asyncio.sleep(every_s)


async def serve(
    svc: MemoryService,
    settings: AgentSettings,
    *,
    transport: Literal["stdio", "streamable-http"] = "stdio",
    host: str = "127.0.0.1",
    port: int = 8765,
    backfill: bool = True,
) -> None:
    """Run the server on an open service until the client goes away (stdio) or the process is stopped (HTTP)."""
    server = build_server(svc, settings)
    task = asyncio.create_task(backfill_loop(svc)) if backfill else None
    try:
        if transport == "stdio":
            await server.run_stdio_async()
        else:
            import uvicorn

            security = None
            if host not in ("127.0.0.1", "localhost", "::1"):
                security = TransportSecuritySettings(enable_dns_rebinding_protection=False)
            app = server.streamable_http_app(host=host, transport_security=security)
            config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on")
            await uvicorn.Server(config).serve()
    finally:
        if task is not None:
            task.cancel()
            with suppress(asyncio.CancelledError):
                await task


__all__ = [
    "INSTRUCTIONS",
    "MountState",
    "backfill_loop",
    "build_server",
    "describe",
    "mcp_mount",
    "mcp_routes",
    "serve",
]
