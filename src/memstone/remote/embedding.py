"""Embedding runs on a team server (``memstone --url https://… reembed|embed --backfill``): start one, then follow
its record until it ends; a run that failed raises the error the library raises for it (same code, same exit)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any

from .client import RemoteClient, decode_error

Progress = Callable[[int, int], None]


async def run_embedding(
    client: RemoteClient,
    kind: str,
    *,
    org: str | None = None,
    profile: str | None = None,
    batch: int = 64,
    progress: Progress | None = None,
    every_s: float = 0.5,
) -> dict[str, Any]:
    """Start an embedding run (``POST /api/embedding/runs``) and poll it until it ends; its ended record."""
    body = {"kind": kind, "profile": profile, "batch": batch}
    run: Mapping[str, Any] = (await client.json("POST", "/api/embedding/runs", params={"org": org}, json=body))["run"]
    shown: tuple[int, int] | None = None
    while True:
        done, total = run.get("done"), run.get("total")
        if progress is not None and isinstance(done, int) and (done or isinstance(total, int)):
            now = (done, total if isinstance(total, int) else done)
            if now != shown:  # a line per step, as the local command's, not one per poll
                progress(*now)
                shown = now
        if run.get("state") != "running":
            break
        await asyncio.sleep(every_s)
        run = (await client.json("GET", f"/api/embedding/runs/{run['run_id']}"))["run"]
    if run.get("state") == "failed":
        raise decode_error(500, {"error": run.get("error")})
    return dict(run)


__all__ = ["run_embedding"]
