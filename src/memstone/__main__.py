"""``python -m memstone``: the ``memstone`` command."""

from .cli.entry import main

main()
