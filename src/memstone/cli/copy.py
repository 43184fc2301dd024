"""``memstone copy SRC DST``: copy a whole store to another engine, history exact (issue 13).

SRC and DST are store URLs (``sqlite:///path.db``, ``postgresql://…``, ``oceanbase://…``) or SQLite file paths.
The source is only read (a mistyped source is an error, never a new store); the target is created when missing.
Re-running after an interruption continues where the copy stopped; a target with another history is refused.
The library function is :func:`memstone.service.copy.copy_store`; this command only translates.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from .options import json_option


def store_url(value: str) -> str:
    """A store URL as given, or ``sqlite:///ABSOLUTE`` for a SQLite file path."""
    if "://" in value:
        return value
    return f"sqlite:///{Path(value).expanduser().resolve()}"


@click.command("copy")
@click.argument("source")
@click.argument("target")
@click.option("--no-verify", is_flag=True, help="Skip verify of both stores at the end (the heads are still compared).")
@json_option
def copy_command(source: str, target: str, no_verify: bool, as_json: bool) -> None:
    """Copy every Memory, Revision, entry version, scope binding, source, purge tombstone, principal (with its
    tokens and grants), capture queue item, setting, maintenance record and vector of SOURCE into TARGET.

    Every hash stays the same; a token issued on SOURCE authenticates on TARGET. Resumable: run it again after an
    interruption. Vectors travel with the embedding profile, and with each organization's own profile where TARGET
    keeps one; entries left without a vector are listed, for `memstone --url TARGET embed --backfill`.
    """
    import asyncio

    from ..domain.errors import MemstoneError
    from ..service.copy import copy_urls
    from .errors import fail
    from .main import emit

    def progress(phase: str, done: int, total: int) -> None:
        click.echo(f"\rcopy: {phase} {done}/{total}   ", nl=False, err=True)
        if done >= total:
            click.echo(err=True)

    async def main() -> None:
        report, source_ok = await copy_urls(
            store_url(source), store_url(target), progress=None if as_json else progress, verify=not no_verify
        )
        payload = {**report.to_dict(), "source_verify_ok": source_ok}
        human = (
            f"copied {report.memories} memories: {report.revisions_written} revisions written, "
            f"{report.revisions_present} already there, {report.sources_written} sources, "
            f"{report.tombstones} tombstones in {report.seconds:.1f} s; target "
            + ("verified" if report.verify_ok else "DAMAGED: " + "; ".join(report.damage))
            + ("" if source_ok else "; the SOURCE does not verify")
        )
        emit(as_json, payload, "\n".join([human, *report.notes]))
        if not (report.verify_ok and source_ok):
            sys.exit(6)

    try:
        asyncio.run(main())
    except MemstoneError as exc:
        fail(as_json, exc)


__all__ = ["copy_command", "store_url"]
