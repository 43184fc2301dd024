"""``memstone daemon``: the embedding and maintenance loops (:mod:`memstone.maintenance.daemon`), a health
endpoint, and a health record in the store that ``memstone doctor`` and ``memstone maintenance status`` report.
``cli/main.py`` registers it."""

from __future__ import annotations

import json
import signal
import sys

import click

from .options import count_option, json_flag, quiet_option, seconds_option


@click.command("daemon")
@seconds_option("--embed-every", 120.0, "Seconds between embedding checks (the first is at once).")
@seconds_option("--maintain-every", 900.0, "Seconds between maintenance checks per scope (the first is at once).")
@count_option("--threshold", 50, "Writes since a scope's last run that make a dry run due.")
@count_option("--max-failures", 3, "Consecutive failed checks after which a loop cannot continue (exit 1).")
@click.option("--health-host", default="127.0.0.1", show_default=True, help="Address of the health endpoint.")
@click.option(
    "--health-port",
    type=click.IntRange(min=0, max=65535),
    default=None,
    help="Serve GET /health on this port (0: any free port, printed on stderr). Default: no endpoint.",
)
@click.option("--once", is_flag=True, help="Run every check once, then exit (for cron or a oneshot unit).")
@quiet_option
@json_flag("On exit, print the final health as JSON.")
@click.pass_context
def daemon_command(
    ctx: click.Context,
    embed_every: float,
    maintain_every: float,
    threshold: int,
    max_failures: int,
    health_host: str,
    health_port: int | None,
    once: bool,
    quiet: bool,
    as_json: bool,
) -> None:
    """Keep the store maintained: embed what lacks a vector, carry out queued maintenance runs, and dry-run a
    scope whose writes crossed the threshold. Stops cleanly on SIGTERM; exits 1 when a loop cannot continue."""
    import asyncio

    from ..domain.errors import MemstoneError
    from ..maintenance.daemon import Daemon, DaemonSettings, serve_health
    from ..service import open_service
    from .errors import fail

    obj = ctx.find_root().obj

    def say(message: str) -> None:
        if not quiet:
            click.echo(f"daemon: {message}", err=True)

    settings = DaemonSettings(
        embed_every_s=embed_every, maintain_every_s=maintain_every, threshold=threshold,
        max_failures=max_failures, once=once,
    )  # fmt: skip
    final: dict[str, object] = {}

    async def main() -> int:
        async with open_service(obj.url, surface="workflow", embedding=obj.model_option()) as svc:
            daemon = Daemon(svc, settings, say)
            stop = asyncio.Event()
            loop = asyncio.get_running_loop()
            for sig in (signal.SIGTERM, signal.SIGINT):
                loop.add_signal_handler(sig, stop.set)
            server = None
            if health_port is not None:
                server = await serve_health(daemon, health_host, health_port)
                port = server.sockets[0].getsockname()[1]
                say(f"health at http://{health_host}:{port}/health")
            say(f"started (pid {daemon.health()['pid']}); health recorded in the store as daemon {daemon.daemon_id}")
            try:
                code = await daemon.run(stop)
            finally:
                if server is not None:
                    server.close()
                    await server.wait_closed()
            final.update(daemon.health())
            return code

    try:
        code = asyncio.run(main())
    except MemstoneError as exc:
        fail(as_json, exc)
        return
    if as_json:
        click.echo(json.dumps(final, ensure_ascii=False, indent=2))
    if code:
        click.echo(f"error: {final.get('fatal')}", err=True)
    sys.exit(code)


__all__ = ["daemon_command"]
