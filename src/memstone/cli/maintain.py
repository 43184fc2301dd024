"""``memstone maintain`` (start a governed maintenance run) and ``memstone maintenance runs|proposals|show|accept|
reject`` (its records and decisions), through :mod:`memstone.maintenance`. ``cli/main.py`` registers them."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING

import click

from .main import run, store_command
from .options import choice_option, json_option, quiet_option

if TYPE_CHECKING:
    from ..domain.maintenance import MaintenanceRun, Proposal
    from ..service import MemoryService


def _echo(as_json: bool, payload: object, human: str) -> None:
    click.echo(json.dumps(payload, ensure_ascii=False, indent=2) if as_json else human)


def _run_line(run: MaintenanceRun) -> str:
    counts = ", ".join(f"{k.split(':', 1)[1]} {v}" for k, v in sorted(run.totals.items()) if k.startswith("status:"))
    return (
        f"{run.run_id}  {run.status:<9} {run.mode:<7} {run.scope}  listed {run.listed}, "
        f"{run.totals.get('proposals', 0)} proposals{f' ({counts})' if counts else ''}, "
        f"{run.usage.model_calls} model calls"
        + (f" ({run.usage.failed_calls} failed)" if run.usage.failed_calls else "")
    )


def _proposal_line(p: Proposal) -> str:
    return f"{p.proposal_id}  {p.status:<21} {p.kind:<9} {p.action:<7} {' '.join(p.entries)}  {p.evidence}"


@click.command("maintain")
@click.option("--scope", "scope", help="The scope to maintain (default: --scope of memstone, or the project's).")
@choice_option(
    "--mode",
    ["dry-run", "apply"],
    "dry-run",
    "dry-run records proposals only; apply also writes the ones that survive.",
)
@click.option(
    "--timeout",
    "timeout_s",
    type=click.FloatRange(min=0.1),
    default=1800.0,
    show_default=True,
    help="Seconds before the run stops with TIMED_OUT.",
)
@click.option("--no-wait", is_flag=True, help="Fail (exit 3) instead of queueing when another run holds the scope.")
@click.option("--use-model", is_flag=True, help="Also match paraphrases with the store's embedding model.")
@click.option(
    "--repo",
    "repo",
    type=click.Path(file_okay=False, exists=True),
    help="The git work tree code-anchored memories cite (default: the current one, if any); a cited file "
    "changed since is proposed stale.",
)
@click.option(
    "--judge-url",
    help="An OpenAI-compatible chat endpoint (…/v1) for the optional model judge (off by default; its "
    "merge, supersede and stale proposals wait for accept/reject).",
)
@click.option("--judge-model", help="The chat model the judge endpoint serves (needed with --judge-url).")
@click.option(
    "--judge-key-file",
    type=click.Path(dir_okay=False, exists=True),
    help="A file holding the judge endpoint's API key (never on the command line).",
)
@quiet_option
@json_option
@click.pass_context
def maintain_command(
    ctx: click.Context,
    scope: str | None,
    mode: str,
    timeout_s: float,
    no_wait: bool,
    use_model: bool,
    repo: str | None,
    judge_url: str | None,
    judge_model: str | None,
    judge_key_file: str | None,
    quiet: bool,
    as_json: bool,
) -> None:
    """Run governed maintenance over one scope: list what changed since the last pass, propose, and apply."""
    obj = ctx.find_root().obj
    failed = False

    async def body(svc: MemoryService) -> None:
        nonlocal failed
        from ..maintenance import JudgeSettings, MaintenanceSettings, maintain
        from ..maintenance.evidence import work_tree

        judged = JudgeSettings(repo=repo or work_tree("."))
        chat = None
        if judge_url is not None or judge_model is not None:
            from pathlib import Path

            from ..chat import OpenAICompatibleChat
            from ..domain.errors import InvalidInput

            if not judge_url or not judge_model:
                raise InvalidInput(
                    "the model judge needs both --judge-url and --judge-model", hint="pass both, or neither"
                )
            key = Path(judge_key_file).read_text("utf-8").strip() if judge_key_file else None
            chat = OpenAICompatibleChat(judge_url, judge_model, key or None)
        report = await maintain(
            svc,
            scope=scope or obj.scope,
            mode=mode,
            settings=MaintenanceSettings(timeout_s=timeout_s, wait=not no_wait, judges=judged, chat=chat),
            model=use_model,
            progress=None if quiet else (lambda msg: click.echo(f"maintain: {msg}", err=True)),
        )
        failed = report.run.status != "COMPLETED"
        lines = [_run_line(report.run), *(f"  {_proposal_line(p)}" for p in report.proposals)]
        if report.run.error:
            lines.append(f"  error: {report.run.error}")
        _echo(as_json, report.to_dict(), "\n".join(lines))

    run(ctx, as_json, body)
    if failed:
        sys.exit(1)


@click.group("maintenance")
def maintenance_group() -> None:
    """Maintenance records: runs and proposals; inspect, accept or reject a proposal."""


@store_command("runs", group=maintenance_group)
@click.option("--scope", "scope", help="Only this scope's runs.")
@json_option
async def runs_command(svc: MemoryService, ctx: click.Context, scope: str | None, as_json: bool) -> None:
    """List maintenance runs, newest first."""
    from ..maintenance import runs

    found = await runs(svc, scope=scope)
    _echo(as_json, {"runs": [r.to_dict() for r in found]}, "\n".join(map(_run_line, found)) or "no runs")


@store_command("proposals", group=maintenance_group)
@click.option("--scope", "scope", help="Only this scope's proposals.")
@click.option("--run", "run_id", help="Only this run's proposals.")
@click.option(
    "--status",
    type=click.Choice(["PROPOSED", "APPLIED", "REJECTED", "SKIPPED_HASH_MISMATCH", "FAILED", "INFORMATIONAL"]),
    help="Only proposals in this status.",
)
@json_option
async def proposals_command(
    svc: MemoryService, ctx: click.Context, scope: str | None, run_id: str | None, status: str | None, as_json: bool
) -> None:
    """List stored proposals in the order they were made."""
    from ..maintenance import proposals

    found = await proposals(svc, scope=scope, run_id=run_id, status=status)  # type: ignore[arg-type]
    human = "\n".join(map(_proposal_line, found)) or "no proposals"
    _echo(as_json, {"proposals": [p.to_dict() for p in found]}, human)


@store_command("show", group=maintenance_group)
@click.argument("proposal_id")
@json_option
async def show_command(svc: MemoryService, ctx: click.Context, proposal_id: str, as_json: bool) -> None:
    """Show one proposal: its entries with the hashes it was made on, the evidence, and its decision."""
    from ..maintenance import proposal

    p = await proposal(svc, proposal_id)
    lines = [_proposal_line(p), *(f"  {e}  {h}" for e, h in p.hashes)]
    if p.text is not None:
        lines.append(f"  merged text: {p.text}")
    if p.slug is not None:
        lines.append(f"  new slug: {p.slug}")
    if p.result is not None:
        lines.append(f"  result: {p.result}")
    _echo(as_json, {"proposal": p.to_dict()}, "\n".join(lines))


@maintenance_group.command("status")
@click.option("--scope", "scope", help="The scope (default: --scope of memstone, or the project's).")
@click.option(
    "--threshold",
    type=click.IntRange(min=1),
    default=50,
    show_default=True,
    help="Writes since the last run that raise writes_threshold_reached.",
)
@json_option
@click.pass_context
def status_command(ctx: click.Context, scope: str | None, threshold: int, as_json: bool) -> None:
    """Writes to a scope since its last maintenance run, the writes_threshold_reached event, and the health each
    maintenance daemon of this store recorded (memstone daemon, memstone serve)."""
    obj = ctx.find_root().obj

    async def body(svc: MemoryService) -> None:
        from ..maintenance.daemon import status_report, status_text

        report = await status_report(svc, scope or obj.scope, threshold=threshold)
        _echo(as_json, report, status_text(report))

    run(ctx, as_json, body)


def _decision(name: str, accept: bool, summary: str) -> click.Command:
    @click.command(name, help=summary)
    @click.argument("proposal_ids", nargs=-1, required=True)
    @json_option
    @click.pass_context
    def command(ctx: click.Context, proposal_ids: tuple[str, ...], as_json: bool) -> None:
        async def body(svc: MemoryService) -> None:
            from ..maintenance import decide

            done = [await decide(svc, pid, accept=accept) for pid in proposal_ids]
            human = "\n".join(f"{p.proposal_id}  {p.status}  {p.result or ''}".rstrip() for p in done)
            _echo(as_json, {"proposals": [p.to_dict() for p in done]}, human)

        run(ctx, as_json, body)

    return command


maintenance_group.add_command(
    _decision(
        "accept", True, "Accept proposals: write each now through the service (SKIPPED_HASH_MISMATCH if changed)."
    )
)
maintenance_group.add_command(_decision("reject", False, "Reject proposals: nothing is written."))


__all__ = ["maintain_command", "maintenance_group"]
