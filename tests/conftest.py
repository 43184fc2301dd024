"""Shared fixtures: real PostgreSQL and seekdb servers, started once per test session and only when a test asks.

A server that cannot start here is a visible skip, or a failure with ``MEMSTONE_REQUIRE_SERVERS=1`` (CI sets it).
Each test gets a fresh, empty database of its own (``postgres_url`` / ``oceanbase_url``).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from memstone.testing import servers
from memstone.testing.s3server import S3Server, seaweedfs_server

REQUIRE_SERVERS_ENV = "MEMSTONE_REQUIRE_SERVERS"
# No warm hook server outlives a test: the tests that need one turn it on (tests/hooks/test_hook_server.py).
os.environ.setdefault("MEMSTONE_HOOK_SERVER", "0")


def servers_are_required() -> bool:
    """True when a server that cannot start must fail the run instead of skipping (``MEMSTONE_REQUIRE_SERVERS=1``)."""
    return os.environ.get(REQUIRE_SERVERS_ENV, "") not in ("", "0")


@pytest.fixture(scope="session")
def servers_required() -> bool:
    """Whether a test server that cannot start fails the test (CI) or skips it (a laptop without the wheels)."""
    return servers_are_required()


def _start(factory: Callable[[], contextlib.AbstractContextManager[str]]) -> Iterator[str]:
    with contextlib.ExitStack() as stack:
        try:
            url = stack.enter_context(factory())
        except servers.ServerUnavailable as exc:
            if servers_are_required():
                pytest.fail(f"{exc} ({REQUIRE_SERVERS_ENV} is set)", pytrace=False)
            pytest.skip(str(exc))
        yield url


@pytest.fixture(scope="session")
def postgres_server_url() -> Iterator[str]:
    """The URL of the session's PostgreSQL 18 + pgvector server (its ``postgres`` database)."""
    yield from _start(servers.postgres_server)


@pytest.fixture(scope="session")
def seekdb_server_url() -> Iterator[str]:
    """The URL of the session's seekdb (OceanBase 4.3.5 kernel) server."""
    yield from _start(servers.seekdb_server)


@pytest.fixture(scope="session")
def s3_server() -> Iterator[S3Server]:
    """The session's S3 server (SeaweedFS on loopback, with conditional puts)."""
    with contextlib.ExitStack() as stack:
        try:
            server = stack.enter_context(seaweedfs_server())
        except servers.ServerUnavailable as exc:
            if servers_are_required():
                pytest.fail(f"{exc} ({REQUIRE_SERVERS_ENV} is set)", pytrace=False)
            pytest.skip(str(exc))
        yield server


@pytest.fixture
def s3_env(s3_server: S3Server, monkeypatch: pytest.MonkeyPatch) -> S3Server:
    """The AWS_* variables of the session's S3 server in this test's environment (and its child processes')."""
    for name, value in s3_server.env().items():
        monkeypatch.setenv(name, value)
    return s3_server


@pytest.fixture
def postgres_url(postgres_server_url: str) -> Iterator[str]:
    """A fresh, empty PostgreSQL database for this test, dropped afterwards."""
    with servers.postgres_database(postgres_server_url) as url:
        yield url


@pytest.fixture
def oceanbase_url(seekdb_server_url: str) -> Iterator[str]:
    """A fresh, empty OceanBase (seekdb) database for this test, dropped afterwards."""
    with servers.oceanbase_database(seekdb_server_url) as url:
        yield url


def pytest_terminal_summary(terminalreporter: Any) -> None:
    for name, seconds in sorted(servers.start_times.items()):
        terminalreporter.write_line(f"test server {name} started in {seconds:.2f} s")
