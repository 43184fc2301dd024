"""The maintenance daemon inside ``memstone serve`` (issue #14, item 7): a team server maintains its store without
a second process. On by default (``--no-maintenance`` turns it off, e.g. when a ``memstone daemon`` unit already
runs against the same store); its loops are the daemon's (:mod:`memstone.maintenance.daemon`), on a service of
its own (surface ``workflow``) in the server's event loop. A loop that cannot continue stops the loops, not the
API: the server keeps answering, and the health record in the store (``memstone doctor``, ``memstone
maintenance status``) says ``failed``. Two servers on one store each run the loops; the scope lease keeps their
runs apart."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import threading
from collections.abc import AsyncIterator, Callable
from typing import TypeVar

import click

from .options import seconds_option

F = TypeVar("F", bound=Callable[..., object])


def maintenance_option(fn: F) -> F:
    """``--maintenance/--no-maintenance`` and ``--maintain-every`` for ``memstone serve``."""
    fn = seconds_option(
        "--maintain-every", 900.0, "Seconds between the in-server daemon's maintenance checks (embedding: every 120)."
    )(fn)
    return click.option(
        "--maintenance/--no-maintenance",
        default=True,
        show_default=True,
        help="Run the maintenance daemon's loops inside the server (embed, storage upkeep, queued runs).",
    )(fn)


class SignalHold:
    """SIGTERM/SIGINT caught while the server shuts down, so the loops stop cleanly before the process ends.

    uvicorn restores the handlers it found and raises the signal again once it has stopped; with the default
    handler the process would die there, before the loops record ``stopped``. This handler only notes the signal;
    :func:`maintained` re-raises it (with the default handler) after the loops stopped, so the exit is unchanged."""

    def __init__(self) -> None:
        self.caught: list[int] = []
        self.before = {sig: signal.signal(sig, self._note) for sig in (signal.SIGTERM, signal.SIGINT)}

    def _note(self, sig: int, _frame: object) -> None:
        self.caught.append(sig)

    def release(self) -> None:
        for sig, handler in self.before.items():
            signal.signal(sig, handler)
        for caught in self.caught:
            signal.raise_signal(caught)


def hold_signals(on: bool) -> SignalHold | None:
    """Before the server starts (it saves the handlers it finds): hold the exit signals when the loops run."""
    return SignalHold() if on and threading.current_thread() is threading.main_thread() else None


@contextlib.asynccontextmanager
async def maintained(
    url: str | None, embedding: object, *, on: bool, maintain_every_s: float, hold: SignalHold | None = None
) -> AsyncIterator[None]:
    """While the block runs, the daemon's loops run beside it (nothing when ``on`` is False). ``embedding``: the
    CLI's ``model_option()`` (an :class:`~memstone.ports.EmbeddingModel`, a profile name, None, or UNSET)."""
    try:
        if not on:
            yield
            return
        async with _loops(url, embedding, maintain_every_s):
            yield
    finally:
        if hold is not None:
            hold.release()


@contextlib.asynccontextmanager
async def _loops(url: str | None, embedding: object, maintain_every_s: float) -> AsyncIterator[None]:
    from ..maintenance.daemon import Daemon, DaemonSettings
    from ..service import open_service

    def say(message: str) -> None:
        click.echo(f"maintenance: {message}", err=True)

    async with open_service(url, surface="workflow", embedding=embedding) as svc:  # type: ignore[arg-type]
        daemon = Daemon(svc, DaemonSettings(maintain_every_s=maintain_every_s), say)
        stop = asyncio.Event()
        task = asyncio.create_task(daemon.run(stop), name="memstone maintenance")
        try:
            yield
        finally:
            stop.set()
            with contextlib.suppress(Exception):
                await task


__all__ = ["SignalHold", "hold_signals", "maintained", "maintenance_option"]
