"""The server's resources (``memory://mandatory``, ``memory://entry/{entry_id}``) and prompts
(``session_start``, ``capture``)."""

from __future__ import annotations

from mcp.server.mcpserver import Context, MCPServer

from ...agents.briefing import prompt_context, session_briefing
from .errors import tool_errors
from .registry import Here


def register_content(mcp: MCPServer, here: Here) -> None:
    """Add the resources and prompts to a server (``here`` is build_server's caller)."""

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


__all__ = ["register_content"]
