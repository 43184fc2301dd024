"""Fixtures of the fuzz tests: one :class:`~fuzz_world.World` (a seeded store) per module, checked after each test.

After every test that uses it, the canaries (written in a scope the strategies never name) read back unchanged and
``verify`` finds no damage (``memstone.testing.fuzzing``, the rule ``bench/bench_fuzz.py`` also uses).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fuzz_world import World


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    w = World(tmp_path_factory.mktemp("fuzz"))
    try:
        yield w
    finally:
        w.close()


@pytest.fixture(autouse=True)
def store_intact(request: pytest.FixtureRequest) -> Iterator[None]:
    """After each fuzz test: canaries unchanged, ``verify`` clean (for the modules that use ``world``)."""
    yield
    if "world" in request.fixturenames:
        w: World = request.getfixturevalue("world")
        assert w.damage() == []
