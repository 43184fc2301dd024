"""``memstone purge ENTRY --reason …``: erase an entry's content from the store's files (issue 12, real erasure).

A purge cannot be undone: it asks for confirmation (``--yes`` skips it; without a terminal it is required).
What it leaves is a tombstone per version (``memstone purge --list ENTRY`` shows them): the version's id, kind
and original hash, who purged it, when and why; ``history`` shows the versions as ``[purged]`` and ``verify``
stays clean.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from .options import json_option

if TYPE_CHECKING:
    from ..service import MemoryService


@click.command("purge")
@click.argument("entry")
@click.option("--reason", help="Why the content must be erased (recorded in each tombstone; required to purge).")
@click.option("--version", "versions", type=int, multiple=True, help="Purge only this version number (repeatable).")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
@click.option("--list", "list_only", is_flag=True, help="Only show the entry's tombstones; purge nothing.")
@json_option
@click.pass_context
def purge(
    ctx: click.Context,
    entry: str,
    reason: str | None,
    versions: tuple[int, ...],
    yes: bool,
    list_only: bool,
    as_json: bool,
) -> None:
    """Erase an entry's text, title and tags (all versions, or --version N) from the store's files.

    The entry is forgotten first when its current version is purged. Each purged version keeps a tombstone with
    its original hash, so the revision chain still verifies. This cannot be undone.
    """
    from .confirm import confirm_purge
    from .main import emit, run

    async def show(svc: MemoryService) -> None:
        found = await svc.tombstones(entry)
        lines = [f"v{t.version}  {t.entry_version_id}  purged {t.purged_at} by {t.author or '-'}: {t.reason}"
                 for t in found]  # fmt: skip
        emit(as_json, {"entry_id": entry, "tombstones": [t.to_dict() for t in found]},
             "\n".join(lines) or f"nothing of {entry} was purged")  # fmt: skip

    async def erase(svc: MemoryService) -> None:
        report = await svc.purge(
            entry, reason=confirm_purge(entry, reason, versions, yes), versions=list(versions) or None
        )
        human = [f"purged v{t.version} ({t.entry_version_id})" for t in report.tombstones]
        human += [f"already purged: {v}" for v in report.already_purged]
        if report.forgotten_in_revision is not None:
            human.append(f"forgotten first in revision {report.forgotten_in_revision}")
        emit(as_json, report.to_dict(), "\n".join(human) or "nothing to purge")

    run(ctx, as_json, show if list_only else erase, create=not list_only)  # --list never creates a store


__all__ = ["purge"]
