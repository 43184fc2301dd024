"""The ``memstone`` console script (and ``python -m memstone``).

``memstone hook …`` is run by an agent on every event and the agent waits for it, so that one shape goes
straight to the warm hook server (:mod:`memstone.agents.hook_server`), or when none is up to
:func:`.hook_run.run_hook_command`, without importing click and the command table. Everything else,
``memstone hook --help`` included, is the click CLI of :mod:`.main`.
"""

from __future__ import annotations

import sys


def main() -> None:
    from .hook_run import parse_hook_argv

    call = parse_hook_argv(sys.argv[1:])
    if call is None:
        from .main import main as click_main

        click_main()
        return
    from ..agents.hook_client import forward

    code = forward(sys.argv[1:])  # the warm server runs it, when one is up (agents/hook_server.py)
    if code is None:
        from ..agents.hook_client import start_server
        from ..agents.hook_server import idle_seconds
        from .hook_run import run_hook_command

        code = run_hook_command(call.event, call.agent, as_json=call.as_json, url=call.url, scope=call.scope)
        if idle_seconds() > 0:
            start_server()  # for the next hook; it exits at once if another server holds the socket
    sys.exit(code)


if __name__ == "__main__":
    main()
