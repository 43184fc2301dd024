"""``memstone review list|accept|reject``: the capture review queue, through memstone.capture's public API.

Capture in ``review`` mode (``CaptureSettings.with_mode(scope, "review")``) queues candidates instead of writing
them; these commands list the queue, accept an item (re-planned against the current head and written, as
``auto`` would have done now) or reject it (nothing is written, and the same statement is not queued again).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

import click

from .options import choice_option, json_option

if TYPE_CHECKING:
    from ..capture import QueueItem, ReviewQueue
    from ..service import MemoryService


def _line(item: QueueItem) -> str:
    what = item.candidate.text.splitlines()[0][:80] if item.candidate else (item.note or "flag")
    kind = item.candidate.kind if item.candidate else item.item_type
    return f"{item.item_id}  {item.status:<8}  [{kind}] {what}  ({item.scope or item.memory_id or '-'})"


def _run(
    ctx: click.Context,
    as_json: bool,
    body: Callable[[MemoryService, ReviewQueue], Coroutine[Any, Any, None]],
    *,
    create: bool = False,
    model: bool = False,
) -> None:
    """Run ``body`` with the store's service and its review queue (kept in the store, on any engine)."""
    from .main import run

    async def with_queue(svc: MemoryService) -> None:
        from ..capture import ReviewQueue

        await body(svc, ReviewQueue.of(svc))

    run(ctx, as_json, with_queue, create=create, model=model)


@click.group("review")
def review() -> None:
    """The capture review queue: list, accept or reject what capture queued in review mode."""


@review.command("list")
@choice_option("--status", ["pending", "accepted", "rejected", "all"], "pending", "Which items to list.")
@click.option("--scope", "scope", help="Only the items of this scope.")
@json_option
@click.pass_context
def review_list(ctx: click.Context, status: str, scope: str | None, as_json: bool) -> None:
    """List the queue's items, oldest first (default: the pending ones)."""

    async def body(svc: MemoryService, queue: ReviewQueue) -> None:
        from ..capture import visible_items
        from ..domain.scopes import canonical_scope

        found = await visible_items(
            svc,
            queue,
            status=None if status == "all" else status,  # type: ignore[arg-type]
            scope=canonical_scope(scope) if scope else None,
        )
        if as_json:
            click.echo(json.dumps({"items": [i.to_dict() for i in found]}, ensure_ascii=False, indent=2))
        else:
            click.echo("\n".join(_line(i) for i in found) or f"no {'' if status == 'all' else status + ' '}items")

    _run(ctx, as_json, body)


@review.command("accept")
@click.argument("item")
@json_option
@click.pass_context
def review_accept(ctx: click.Context, item: str, as_json: bool) -> None:
    """Accept a queued item: write its candidate now (re-planned against the current head)."""
    obj = ctx.find_root().obj

    async def body(svc: MemoryService, queue: ReviewQueue) -> None:
        from ..capture import accept

        done = await accept(svc, queue, item, decided_by=obj.config.get("author"), surface="human")
        entries = done.entries()
        payload = {"item": (await queue.get(item)).to_dict(), "result": done.to_dict(), "entries": list(entries)}
        human = f"accepted {item}" + (
            f": wrote {', '.join(entries)}" if entries else f" ({done.reason or done.status})"
        )
        click.echo(json.dumps(payload, ensure_ascii=False, indent=2) if as_json else human)

    _run(ctx, as_json, body, create=True, model=True)


@review.command("reject")
@click.argument("item")
@click.option("--note", help="Why (kept with the decision).")
@json_option
@click.pass_context
def review_reject(ctx: click.Context, item: str, note: str | None, as_json: bool) -> None:
    """Reject a queued item: nothing is written, and the same statement is not queued again."""
    obj = ctx.find_root().obj

    async def body(svc: MemoryService, queue: ReviewQueue) -> None:
        from ..capture import reject

        done = await reject(svc, queue, item, decided_by=obj.config.get("author"), note=note)
        click.echo(
            json.dumps({"item": done.to_dict()}, ensure_ascii=False, indent=2) if as_json else f"rejected {item}"
        )

    _run(ctx, as_json, body, create=True)


__all__ = ["review"]
