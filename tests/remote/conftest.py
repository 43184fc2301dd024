"""The team server of the remote tests: one token-mode ``memstone serve`` per module, on its own SQLite file."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from memstone.testing.team import Team, serve_process

SCOPE = "memstone://orgs/acme/projects/web"


@pytest.fixture(scope="module")
def team(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Team]:
    tmp = tmp_path_factory.mktemp("team")
    team = Team(tmp, SCOPE)
    with serve_process(team.store, env=team.env, cwd=tmp, auth="token") as url:
        team.url = url
        yield team
