"""What ``embed --backfill`` and ``reembed`` show (their progress line and outcome), run here or by a team server;
against a team server (``--url https://…``) the server runs them (``POST /api/embedding/runs``) and the command
follows the run to its end, with the local command's progress line, JSON and exit code."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import click

from ..remote.client import RemoteClient
from ..remote.embedding import run_embedding
from ..service.routes import canonical_org
from .remote_base import Handler, Payload


def progress_line(label: str) -> Callable[[int, int], None]:
    def show(done: int, total: int) -> None:
        click.echo(f"\r{label}: {done}/{total}", nl=False, err=True)

    return show


def outcome(kind: str, done: object, profile: str | None, org: str | None) -> tuple[dict[str, object], str]:
    """What ``embed --backfill`` (kind ``backfill``) and ``reembed`` print at the end, run here or by a server."""
    org = canonical_org(org) if org else None
    if kind == "reembed":
        text = f"migrated {f'org {org}' if org else 'the store'} to {profile}: {done} entries embedded"
    else:
        text = f"embedded {done} entries" + (f" of org {org}" if org else "") + f" with {profile}"
    return {"embedded": done, "profile": profile, "org": org}, text


def _embedding(kind: str) -> Handler:
    async def handler(ctx: click.Context, client: RemoteClient) -> Payload:
        p = ctx.params
        quiet = p["as_json"]
        run = await run_embedding(
            client, kind, org=p["org"], profile=p.get("profile"), batch=p["batch"],
            progress=None if quiet else progress_line("re-embedded" if kind == "reembed" else "embedded"),
        )  # fmt: skip
        if not quiet:
            click.echo(err=True)
        payload, text = outcome(kind, run.get("done"), run.get("profile"), run.get("org"))
        return payload | {"run_id": run.get("run_id")}, text

    return handler


EMBEDDING_COMMANDS: Mapping[str, Handler] = {"embed": _embedding("backfill"), "reembed": _embedding("reembed")}

__all__ = ["EMBEDDING_COMMANDS", "outcome", "progress_line"]
