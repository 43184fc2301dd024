"""``open_store(url)`` is one bundle: the memory backend, the principals, the capture queue and settings, and the
state location, opened once and closed together, on every engine (issue 11, "One store bundle").

Before, ``open_store`` returned the memory backend alone; each front end then reached for the principal store and
the capture store with its own helper, and the agent settings derived the state folder from the URL themselves.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from memstone import EntryInput, open_service
from memstone.backends import StoreBundle, open_store, state_dir, store_location
from memstone.domain.errors import InvalidInput

SCOPE = "memstone://orgs/acme/projects/web"


@pytest.fixture(params=["sqlite", "postgres", "lancedb"])
def any_store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'm.db'}"
    if request.param == "lancedb":
        pytest.importorskip("lancedb")
        return f"lancedb:///{tmp_path / 'lance'}"
    url: str = request.getfixturevalue("postgres_url")
    return url


async def test_every_part_of_the_bundle_is_kept_in_the_store(any_store_url: str) -> None:
    async with await open_store(any_store_url) as store:
        assert isinstance(store, StoreBundle)
        alice = await store.principals().ensure_principal(user="alice", org="acme")
        _, secret = await store.principals().issue_token(alice.principal_id)
        await store.capture.put_setting("capture", {"mode": "review"}, "2026-01-01T00:00:00Z")
        async with open_service(backend=store.memory, embedding=None) as svc:  # the service takes the backend
            await svc.remember(scope=SCOPE, entries=[EntryInput(kind="fact", text="We deploy with uv.")])
    # closing the bundle closed the backend; reopening finds every part where it was written
    async with await open_store(any_store_url, create=False) as again:
        access = await again.principals(read_only=True).authenticate(secret)
        assert access is not None and access.principal.user == "alice"
        assert await again.capture.setting("capture") == {"mode": "review"}
        async with open_service(backend=again.memory, embedding=None) as svc:
            assert (await svc.verify()).ok
            hits = await svc.search("deploy", scopes=[SCOPE], mode="fts")
            assert [h.text for h in hits] == ["We deploy with uv."]


async def test_a_read_only_principal_view_refuses_writes(tmp_path: Path) -> None:
    from memstone.domain.errors import BackendUnavailable

    async with await open_store(f"sqlite:///{tmp_path / 'm.db'}") as store:
        with pytest.raises(BackendUnavailable):
            await store.principals(read_only=True).ensure_principal(user="bob", org="acme")
        assert await store.principals().principals() == []  # the refused write left nothing behind


def test_the_state_location_is_beside_a_store_file_else_in_the_home_folder(tmp_path: Path) -> None:
    assert state_dir(f"sqlite:///{tmp_path / 'm.db'}?durability=fast") == tmp_path
    home = Path("~/.memstone").expanduser()
    for url in ("sqlite:///:memory:", "postgresql://me:pw@db/mem", "notaurl", None):
        assert state_dir(url) == home  # a malformed URL too: a hook must still log why it failed


def test_store_location_never_shows_a_password(tmp_path: Path) -> None:
    assert store_location(f"sqlite:///{tmp_path / 'm.db'}") == str(tmp_path / "m.db")
    assert store_location("sqlite:///:memory:") == ":memory:"
    assert store_location("postgresql://me:s3cret@db:5432/mem?sslmode=require") == (
        "postgresql://me:***@db:5432/mem?sslmode=require"
    )
    assert store_location("postgresql://db/mem") == "postgresql://db/mem"
    with pytest.raises(InvalidInput):
        store_location("notaurl")


async def test_the_bundle_state_location_is_what_the_hooks_use(tmp_path: Path) -> None:
    from memstone.agents.settings import AgentSettings

    url = f"sqlite:///{tmp_path / 'sub' / 'm.db'}"
    async with await open_store(url) as store:
        assert store.state == tmp_path / "sub"
        assert AgentSettings.load(url=url, cwd=tmp_path).home == store.state
