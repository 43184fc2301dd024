"""``engine_url``: a fresh store URL on each engine (SQLite file, PostgreSQL database) for engine-neutral tests;
``postgres_empty_stores`` / ``oceanbase_empty_stores``: the conformance suite's ``empty_stores`` on a server."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path

import pytest

from memstone.testing import servers


@pytest.fixture(params=["sqlite", "postgresql"])
def engine_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'm.db'}"
    url: str = request.getfixturevalue("postgres_url")  # skipped (or failed, in CI) without the server
    return url


@contextlib.contextmanager
def _databases(new: Callable[[], AbstractContextManager[str]]) -> Iterator[Callable[[str], str]]:
    """URLs of further fresh, empty databases, one per name, made on first use and dropped on exit."""
    with contextlib.ExitStack() as stack:
        made: dict[str, str] = {}

        def make(name: str) -> str:
            if name not in made:
                made[name] = stack.enter_context(new())
            return made[name]

        yield make


@pytest.fixture
def postgres_empty_stores(postgres_server_url: str) -> Iterator[Callable[[str], str]]:
    with _databases(lambda: servers.postgres_database(postgres_server_url)) as make:
        yield make


@pytest.fixture
def oceanbase_empty_stores(seekdb_server_url: str) -> Iterator[Callable[[str], str]]:
    with _databases(lambda: servers.oceanbase_database(seekdb_server_url)) as make:
        yield make
