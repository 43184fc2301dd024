"""Agent commands: ``memstone mcp``, ``memstone hook``, ``memstone install``, ``memstone doctor``.

This module is imported by every ``memstone`` invocation, so it imports only click and the standard library at
module level (not even asyncio). Each command imports what it needs when it runs: ``hook`` never loads the MCP
SDK, pydantic, ``memstone.api`` or an embedding model (``python -X importtime -m memstone.cli.main hook …``
shows it).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import click

from .options import choice_option, json_flag, json_option

AGENT_NAMES = ("claude-code", "codex", "gemini", "cursor")


def _root_option(ctx: click.Context, name: str) -> Any:
    """A global option as given (None when absent), e.g. ``--scope`` before its default is filled in."""
    return ctx.find_root().params.get(name)


@click.command(
    "hook",
    context_settings={"ignore_unknown_options": True, "allow_extra_args": True},
    short_help="Handle one agent hook event (reads the agent's JSON on stdin; always exits 0).",
)
@click.argument("event", required=False, default="")
@click.option("--agent", default="", help="claude-code, codex, gemini or cursor.")
@json_flag("Print what the hook did (event, context, capture) as JSON.")
@click.pass_context
def hook(ctx: click.Context, event: str, agent: str, as_json: bool) -> None:
    """Handle one agent hook EVENT, reading the agent's JSON payload on stdin.

    It prints the agent's own output format (or nothing) and always exits 0, so an agent is never blocked;
    failures go to hooks.log beside the store (see memstone doctor).

    EVENT: session-start, user-prompt-submit, stop, pre-compact, post-compact or session-end.
    """
    from .hook_run import run_hook_command

    ctx.exit(
        run_hook_command(event, agent, as_json=as_json, url=_root_option(ctx, "url"), scope=_root_option(ctx, "scope"))
    )


@click.command("mcp")
@choice_option(
    "--transport",
    ["stdio", "streamable-http"],
    "stdio",
    "stdio for an agent's MCP config; streamable-http serves http://HOST:PORT/mcp.",
)
@click.option("--host", default="127.0.0.1", show_default=True, help="Bind address for --transport streamable-http.")
@click.option("--port", default=8765, show_default=True, type=int, help="Port for --transport streamable-http.")
@click.option(
    "--project",
    "project_dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="The project directory (default: $CLAUDE_PROJECT_DIR, $GEMINI_PROJECT_DIR, $CURSOR_PROJECT_DIR, or cwd).",
)
@click.option("--no-backfill", is_flag=True, help="Do not embed vector-less entries in the background.")
@json_flag("Print the server's tools, prompts and resources; serve nothing.")
@click.pass_context
def mcp(
    ctx: click.Context,
    transport: str,
    host: str,
    port: int,
    project_dir: Path | None,
    no_backfill: bool,
    as_json: bool,
) -> None:
    """Run the MCP server (stdio by default) over the store."""
    import asyncio

    from ..agents.settings import AgentSettings
    from ..api.mcp.server import describe, serve
    from ..domain.errors import InvalidInput, MemstoneError
    from ..service import open_service
    from .errors import exit_code

    obj = ctx.obj
    hosts = ("CLAUDE_PROJECT_DIR", "GEMINI_PROJECT_DIR", "CURSOR_PROJECT_DIR")
    cwd = project_dir or next((Path(os.environ[v]) for v in hosts if os.environ.get(v)), Path.cwd())

    async def main() -> None:
        config = obj.config_at(cwd)
        settings = AgentSettings.from_config(config)
        from ..remote import is_remote

        if settings.url is not None and is_remote(
            settings.url
        ):  # a team server: forward to its /mcp (memstone.remote.mcp_proxy)
            from ..remote.mcp_proxy import serve_proxy

            if transport != "stdio" or as_json:
                raise InvalidInput(
                    "a team server already serves MCP over HTTP; `memstone mcp` forwards it on stdio only",
                    hint=f"point an HTTP client at {settings.url.rstrip('/')}/mcp, or drop --transport/--json",
                )
            await serve_proxy(settings.url, token=config.get("token"), project=settings.project_scope)
            return
        async with open_service(
            settings.url, surface="agent-session", author=settings.author, embedding=obj.model_option()
        ) as svc:
            if as_json:
                click.echo(
                    json.dumps({"settings": _settings_dict(settings), **await describe(svc, settings)}, indent=2)
                )
                return
            await serve(
                svc,
                settings,
                transport="stdio" if transport == "stdio" else "streamable-http",
                host=host,
                port=port,
                backfill=not no_backfill,
            )

    try:
        asyncio.run(main())
    except MemstoneError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(exit_code(exc))
    except KeyboardInterrupt:
        pass


def _settings_dict(settings: Any) -> dict[str, Any]:
    return {
        "url": settings.url,
        "project_scope": settings.project_scope,
        "user_scope": settings.user_scope,
        "session_budget_tokens": settings.session_budget_tokens,
        "prompt_budget_tokens": settings.prompt_budget_tokens,
    }


@click.command("install")
@click.option("--agent", "agent", type=click.Choice(AGENT_NAMES), required=True, help="The agent to configure.")
@click.option("--project", "where", flag_value="project", help="Write the project's config files (in its Git root).")
@click.option("--user", "where", flag_value="user", default=True, help="Write the user's config files (the default).")
@click.option("--uninstall", is_flag=True, help="Remove what install added (restores the files byte for byte).")
@click.option(
    "--command",
    "command",
    help="How the agent should start memstone (default: the absolute path of this memstone; `memstone` on PATH "
    "with --project).",
)
@json_option
@click.pass_context
def install(ctx: click.Context, agent: str, where: str, uninstall: bool, command: str | None, as_json: bool) -> None:
    """Add memstone's hooks and MCP server to an agent's settings (idempotent; --uninstall reverses it)."""
    from ..agents.install import Launcher, project_root_of
    from ..agents.install import install as run_install
    from ..agents.payloads import check_agent
    from ..domain.errors import MemstoneError
    from .errors import fail

    try:
        url = _root_option(ctx, "url")
        if where == "project":
            # Trigger: --project. Why: the team commits these files, so a path of this machine or a --url taken
            # from this shell's MEMSTONE_URL must not land in them (issue 11). Outcome: `memstone` on PATH; an
            # explicit --url goes to the agent's local settings file only.
            launcher = Launcher.portable(command=command)
            explicit = ctx.find_root().get_parameter_source("url") == click.core.ParameterSource.COMMANDLINE
            machine_env = {"MEMSTONE_URL": url} if url and explicit else None
            if uninstall and agent == "claude-code":
                machine_env = {"MEMSTONE_URL": url if url and explicit else ""}  # "": whatever install wrote
        else:  # the user's own files: this machine's memstone, and its store when one is set (env or file)
            config = ctx.find_root().obj.config
            url = url or (config.url if config.source("url") in ("environment", "file") else None)
            launcher, machine_env = Launcher.current(url=url, command=command), None
        changes = run_install(
            check_agent(agent),
            "project" if where == "project" else "user",
            home=Path.home(),
            project=project_root_of(Path.cwd()),
            launcher=launcher,
            uninstall=uninstall,
            machine_env=machine_env,
        )
    except MemstoneError as exc:
        fail(as_json, exc)
    if as_json:
        click.echo(json.dumps({"agent": agent, "where": where, "files": [c.to_dict() for c in changes]}, indent=2))
        return
    for c in changes:
        click.echo(f"{c.action:<9}  {c.path}  ({c.what})")
    if not uninstall and any(c.action != "unchanged" for c in changes):
        click.echo(_after_install(agent))


def _after_install(agent: str) -> str:
    notes = {
        "claude-code": "Start a new Claude Code session; `/hooks` lists the hooks and `/mcp` the server.",
        "codex": "Start Codex and approve the new hooks in `/hooks` (Codex asks before running new hooks).",
        "gemini": "Start a new Gemini CLI session; `/hooks` lists the hooks and `/mcp` the server.",
        "cursor": "Cursor reloads hooks.json by itself; enable the memstone server in Settings → MCP.",
    }
    return notes[agent]


@click.command("doctor")
@json_option
@click.option("--failures", default=10, show_default=True, type=int, help="How many recent hook failures to show.")
@click.pass_context
def doctor(ctx: click.Context, as_json: bool, failures: int) -> None:
    """Check the installation: store, schema, embedding model, vectors, hook failures, agent configs."""
    import asyncio

    from ..agents.install import project_root_of, status
    from ..agents.payloads import check_agent
    from ..agents.settings import AgentSettings
    from ..agents.state import read_failures
    from ..backends.peek import peek_schema_version
    from ..backends.url import store_location
    from ..config import DEFAULT_URL
    from ..domain.errors import MemstoneError
    from ..service import open_service

    obj = ctx.obj
    try:
        settings = AgentSettings.from_config(obj.config)
        path = store_location(settings.url or DEFAULT_URL)
    except MemstoneError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(2)
    report: dict[str, Any] = {
        "store": path,
        "schema_version": peek_schema_version(settings.url or DEFAULT_URL),
        "project_scope": settings.project_scope,
        "user_scope": settings.user_scope,
        "notes": [],
    }
    problems: list[str] = []

    async def probe() -> None:
        async with open_service(settings.url, embedding=obj.model_option()) as svc:
            profile = svc.backend.state.embedding_profile
            report["embedding_profile"] = profile.profile_id if profile else None
            model: dict[str, Any] = {"loaded": svc.indexer is not None}
            if svc.indexer is not None:
                try:
                    await svc.indexer.query_vector("memstone doctor")
                    model["works"] = True
                except Exception as exc:  # the point of doctor is to report this, not to crash on it
                    model["works"] = False
                    model["error"] = f"{type(exc).__name__}: {exc}"
                    problems.append(f"the embedding model does not run: {model['error']}")
            elif profile is not None:
                problems.append(f"the store's embedding model {profile.profile_id} is not installed here")
            report["model"] = model
            backlog = await svc.backend.vector_backlog()
            report["vectors_missing"] = backlog
            # Trigger: entries without a vector. Why: hooks write without a model by design (the model costs more
            # than a hook's budget) and the MCP server's backfill or `memstone embed --backfill` fills them in;
            # that is the normal state, not a fault (issue 11). Outcome: a note, never a problem.
            if backlog and profile is not None:
                report["notes"].append(
                    f"{backlog} entries wait for a vector (hooks write without the model; the MCP server fills "
                    "them in, or run memstone embed --backfill)"
                )
            orgs = await svc.org_profiles()
            report["org_profiles"] = {
                org: {"profile": p.profile_id, "dimension": p.dimension, "vectors_missing": None}
                for org, p in sorted(orgs.items())
            }
            for org in orgs:
                report["org_profiles"][org]["vectors_missing"] = await svc.backend.vector_backlog(org=org)
            report["memories"] = len(await svc.memories())
            report["fts_ranking"] = svc.backend.capabilities.fts_ranking or None
            from ..maintenance.daemon import daemon_records

            report["daemon"] = {"records": await daemon_records(svc)}

    try:
        asyncio.run(probe())
    except MemstoneError as exc:
        report["store_error"] = exc.to_dict()
        problems.append(f"the store does not open: {exc}")
    recent = read_failures(settings.log_path, failures)
    report["hook_log"] = str(settings.log_path)
    report["hook_failures"] = recent
    if recent:
        problems.append(f"{len(recent)} recent hook failure(s) in {settings.log_path}")
    _daemon_report(report, problems)
    installed = []
    for name in AGENT_NAMES:
        for where in ("user", "project"):
            for file, what, present in status(
                check_agent(name),
                "user" if where == "user" else "project",
                home=Path.home(),
                project=project_root_of(Path.cwd()),
            ):
                if present or file.exists():
                    installed.append(
                        {"agent": name, "where": where, "path": str(file), "what": what, "installed": present}
                    )
    report["agents"] = installed
    report["problems"] = problems
    if as_json:
        click.echo(json.dumps(report, ensure_ascii=False, indent=2))
    else:
        click.echo(_doctor_text(report))
    sys.exit(1 if problems else 0)


def _daemon_report(report: dict[str, Any], problems: list[str]) -> None:
    """What the maintenance daemons recorded in the store (``memstone daemon``, ``serve``): a failing one is a
    problem; a stale one (stopped without a word) too."""
    records = (report.get("daemon") or {}).get("records") or []
    report["daemon"] = {"records": records, "health": records[0] if records else None}
    for health in records:
        if health.get("status") in ("failing", "failed", "stale"):
            loops = health.get("loops")
            errors = [
                f"{x.get('name')}: {x.get('last_error')}"
                for x in (loops if isinstance(loops, list) else [])
                if isinstance(x, dict) and x.get("last_error")
            ]
            why = health.get("fatal") or "; ".join(errors) or f"no heartbeat for {health.get('heartbeat_age_s')} s"
            who = f"pid {health.get('pid')} on {health.get('host')}"
            problems.append(f"the maintenance daemon ({who}) is {health['status']} ({why})")


def _daemon_line(daemon: dict[str, Any]) -> str:
    health = daemon.get("health")
    if not isinstance(health, dict):
        return "daemon:           none has run against this store (memstone daemon, or memstone serve)"
    beat = health.get("heartbeat_at")
    return (
        f"daemon:           {health.get('status')} (pid {health.get('pid')} on {health.get('host')}, "
        f"last heartbeat {beat})"
    )


def _doctor_text(report: dict[str, Any]) -> str:
    model = report.get("model", {})
    lines = [
        f"store:            {report['store']}",
        f"schema version:   {report['schema_version']}",
        f"project scope:    {report['project_scope'] or '(none: not in a project)'}",
        f"user scope:       {report['user_scope']}",
        f"memories:         {report.get('memories', '?')}",
        f"embedding:        {report.get('embedding_profile') or 'none recorded'}"
        + (f" (model loads: {'yes' if model.get('works') else 'no'})" if model else ""),
        f"vectors missing:  {report.get('vectors_missing', '?')}",
        *(
            f"org embedding:    {org}: {o['profile']} ({o['dimension']}-d, {o['vectors_missing']} vectors missing)"
            for org, o in (report.get("org_profiles") or {}).items()
        ),
        f"fts ranking:      {report.get('fts_ranking') or 'not said by this engine'}",
        f"hook log:         {report['hook_log']}",
        _daemon_line(report.get("daemon") or {}),
    ]
    for f in report["hook_failures"]:
        lines.append(f"  {f.get('at')}  {f.get('agent')} {f.get('event')}: {f.get('error')}: {f.get('message')}")
    lines.append("agent configs:" if report["agents"] else "agent configs:    none found")
    for a in report["agents"]:
        mark = "installed" if a["installed"] else "not installed"
        lines.append(f"  {a['agent']:<12} {a['where']:<8} {mark:<14} {a['path']} ({a['what']})")
    lines.extend(f"note: {n}" for n in report["notes"])
    lines.extend(f"problem: {p}" for p in report["problems"])
    lines.append("ok" if not report["problems"] else f"{len(report['problems'])} problem(s)")
    return "\n".join(lines)


AGENT_COMMANDS: tuple[click.Command, ...] = (mcp, hook, install, doctor)

__all__ = ["AGENT_COMMANDS"]
