"""The store maintenance commands: verify, migrate, rebuild-projections, embed, reembed. ``cli/main.py``
registers them."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from .embedding_runs import outcome, progress_line
from .main import emit, json_option, run, store_command

if TYPE_CHECKING:
    from ..service import MemoryService


@store_command()
@json_option
async def verify(svc: MemoryService, ctx: click.Context, as_json: bool) -> None:
    """Recheck every hash, manifest and projection; exit 6 on damage (nothing is repaired)."""
    report = await svc.verify()
    lines = [
        f"revisions {report.revisions_checked}, versions {report.versions_checked}, manifest nodes "
        f"{report.nodes_checked}, projection rows {report.projections_checked}",
        *(f"AUTHORITY DAMAGE: {d}" for d in report.authority_damage),
        *(f"projection damage: {d}" for d in report.projection_damage),
    ]
    if report.projection_damage and not report.authority_damage:
        lines.append("projections can be rebuilt: memstone rebuild-projections")
    lines.append("ok" if report.ok else "damaged")
    emit(as_json, report.to_dict(), "\n".join(lines))
    if not report.ok:
        sys.exit(6)


@store_command()
@json_option
async def migrate(svc: MemoryService, ctx: click.Context, as_json: bool) -> None:
    """Create the store if needed and bring its schema to this release's version (opening does it too)."""
    state = svc.backend.state
    applied = ", ".join(str(v) for v in state.applied_migrations) or "none (already current)"
    emit(
        as_json,
        {"schema_version": state.schema_version, "applied": list(state.applied_migrations)},
        f"schema version {state.schema_version}; migrations applied: {applied}",
    )


@store_command("rebuild-projections")
@json_option
async def rebuild_projections(svc: MemoryService, ctx: click.Context, as_json: bool) -> None:
    """Rebuild head rows and the full-text index from authority (refused if authority is damaged)."""
    report = await svc.rebuild_projections()
    emit(
        as_json,
        report.to_dict(),
        f"rebuilt {report.projections_checked} projection rows; " + ("ok" if report.ok else "still damaged"),
    )
    if not report.ok:
        sys.exit(6)


_ORG = click.option(
    "--org", default=None, help="Only this organization's Memories (its own embedding profile; PostgreSQL)."
)


@store_command()
@click.option("--backfill", is_flag=True, required=True, help="Embed every active entry that has no vector yet.")
@click.option("--batch", default=64, show_default=True, type=int, help="Entries embedded per model call.")
@_ORG
@json_option
async def embed(
    svc: MemoryService, ctx: click.Context, backfill: bool, batch: int, org: str | None, as_json: bool
) -> None:
    """Fill the vector projection (resumable: a rerun after a kill picks up what is missing).

    Without --org: the Memories on the store's profile, then every organization's that chose its own profile.
    With --url https://TEAM-SERVER: the server runs it (an admin's token) and this command follows its progress."""
    done = await svc.backfill(batch=batch, progress=None if as_json else progress_line("embedded"), org=org)
    if not as_json:
        click.echo(err=True)
    chosen = await svc.backfill_profile(org)
    emit(as_json, *outcome("backfill", done, chosen.profile_id if chosen else None, org))


@click.command()
@click.option(
    "--profile", "profile", required=True, help="The embedding profile to migrate to, e.g. use-multilingual-v3."
)
@click.option("--batch", default=64, show_default=True, type=int, help="Entries embedded per model call.")
@_ORG
@json_option
@click.pass_context
def reembed(ctx: click.Context, profile: str, batch: int, org: str | None, as_json: bool) -> None:
    """Migrate the store to another embedding model; writes pause until every entry is re-embedded.

    With --org (PostgreSQL): only that organization's Memories move, to a profile of its own; only its writes
    pause, and every other Memory keeps its vectors. With --url https://TEAM-SERVER: the server runs it (an
    admin's token: admin on '*' of the org) and this command follows its progress."""
    from ..embedding import load_model

    ctx.obj.embedding = ctx.obj.embedding or "none"

    async def body(svc: MemoryService) -> None:
        model = load_model(profile)
        done = await svc.reembed(
            model, batch=batch, progress=None if as_json else progress_line("re-embedded"), org=org
        )
        if not as_json:
            click.echo(err=True)
        emit(as_json, *outcome("reembed", done, profile, org))

    run(ctx, as_json, body)


__all__ = ["embed", "migrate", "rebuild_projections", "reembed", "verify"]
