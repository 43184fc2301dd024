"""The ``memstone`` console script (and ``python -m memstone``).

``memstone hook …`` is run by an agent on every event and the agent waits for it, so that one shape goes
straight to :func:`.hook_run.run_hook_command` without importing click and the command table (about a sixth of
a hook's start-up). Everything else, ``memstone hook --help`` included, is the click CLI of :mod:`.main`.
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
    from .hook_run import run_hook_command

    sys.exit(run_hook_command(call.event, call.agent, as_json=call.as_json, url=call.url, scope=call.scope))


if __name__ == "__main__":
    main()
