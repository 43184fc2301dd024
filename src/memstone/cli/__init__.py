"""The ``memstone`` command line."""
