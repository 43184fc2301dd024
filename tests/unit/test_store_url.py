"""Store URLs are parsed in one place (backends/url.py): wrong forms are refused with the right one."""

from __future__ import annotations

from pathlib import Path

import pytest

from memstone import InvalidInput
from memstone.backends import open_store, parse_store_url


@pytest.mark.parametrize(
    ("url", "path"),
    [
        pytest.param("sqlite:///data/m.db", "data/m.db", id="relative"),
        pytest.param("sqlite:////srv/m.db", "/srv/m.db", id="absolute"),
        pytest.param("sqlite:///:memory:", ":memory:", id="memory"),
        pytest.param("sqlite://:memory:", ":memory:", id="memory-two-slashes"),
        pytest.param("SQLITE:///m.db", "m.db", id="scheme-case"),
    ],
)
def test_sqlite_urls_name_their_file(url: str, path: str) -> None:
    assert parse_store_url(url).path == path


@pytest.mark.parametrize(
    ("url", "hint"),
    [
        pytest.param("notaurl", "sqlite:///", id="bare-word"),
        pytest.param("data/m.db", "sqlite:///", id="bare-path"),
        pytest.param("sqlite://tmp/x.db", "sqlite:///tmp/x.db", id="two-slashes"),
        pytest.param("sqlite:///", "sqlite:///path", id="no-path"),
        pytest.param(
            "mysql://db/x",
            "known schemes: lancedb, lancedb+s3, oceanbase, postgres, postgresql, sqlite",
            id="unknown-scheme",
        ),
        pytest.param("", "sqlite:///", id="empty"),
    ],
)
def test_wrong_urls_are_refused_with_the_correct_form(url: str, hint: str) -> None:
    with pytest.raises(InvalidInput) as info:
        parse_store_url(url)
    assert info.value.hint is not None and hint in info.value.hint


def test_the_two_slash_hint_names_both_forms() -> None:
    with pytest.raises(InvalidInput) as info:
        parse_store_url("sqlite://tmp/x.db")
    assert info.value.hint == "a relative path is sqlite:///tmp/x.db, an absolute one sqlite:////tmp/x.db"


async def test_a_refused_url_creates_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    for url in ("notaurl", "sqlite://tmp/x.db"):
        with pytest.raises(InvalidInput):
            await open_store(url)
    assert list(tmp_path.iterdir()) == []


async def test_open_without_create_refuses_a_missing_store(tmp_path: Path) -> None:
    from memstone import NotFound

    url = f"sqlite:///{tmp_path / 'sub' / 'm.db'}"
    with pytest.raises(NotFound) as info:
        await open_store(url, create=False)
    assert "m.db" in str(info.value)
    assert list(tmp_path.iterdir()) == []
    store = await open_store(url)  # a write path creates it
    await store.aclose()
    again = await open_store(url, create=False)
    await again.aclose()


async def test_an_engine_registered_under_the_entry_point_group_is_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A real distribution on sys.path (a dist-info folder with entry_points.txt), as `pip install` would leave it.
    dist = tmp_path / "site" / "memstone_toy_engine-0.1.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: memstone-toy-engine\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[memstone.backends]\ntoy = memstone_toy_engine:open_toy\n")
    (tmp_path / "site" / "memstone_toy_engine.py").write_text(
        "from memstone.backends.sqlite import SQLiteMemoryBackend\n"
        "opened = []\n"
        "async def open_toy(url, *, create):\n"
        "    opened.append((url.scheme, url.location, create))\n"
        "    return await SQLiteMemoryBackend(url.location[1:], create=create).open()\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    store_path = tmp_path / "toy.db"
    with pytest.raises(
        InvalidInput, match="known schemes: lancedb, lancedb\\+s3, oceanbase, postgres, postgresql, sqlite, toy"
    ):
        parse_store_url("nope:///x")
    backend = (await open_store(f"toy:///{store_path}")).memory
    try:
        assert backend.capabilities.fts
    finally:
        await backend.aclose()
    import memstone_toy_engine  # type: ignore[import-not-found]

    assert memstone_toy_engine.opened == [("toy", f"/{store_path}", True)]
    assert store_path.exists()


# ---------------------------------------------------------------------------------------------- local files
# The agent settings, the capture files and the principal store read the URL here too (issue 11), so engine
# options and the two-slash form mean the same thing to them as to the engine.
@pytest.mark.parametrize(
    ("url", "name"),
    [
        pytest.param("sqlite:///{dir}/m.db", "m.db", id="plain"),
        pytest.param("sqlite:///{dir}/m.db?durability=fast", "m.db", id="engine-options"),
        pytest.param("SQLITE:///{dir}/m.db", "m.db", id="scheme-case"),
    ],
)
def test_every_reader_finds_the_same_file(tmp_path: Path, url: str, name: str) -> None:
    from memstone.backends.url import local_file, state_dir, store_location

    url = url.format(dir=tmp_path)
    assert local_file(url) == tmp_path / name
    assert store_location(url) == str(tmp_path / name)
    assert state_dir(url) == tmp_path


def test_in_memory_stores_have_no_local_file() -> None:
    from memstone.backends.url import local_file, state_dir, store_location

    for url in ("sqlite:///:memory:", "sqlite://:memory:"):
        assert local_file(url) is None
        assert store_location(url) == ":memory:"
        assert state_dir(url) == Path("~/.memstone").expanduser()


@pytest.mark.parametrize("url", ["notaurl", "sqlite://tmp/x.db", "mysql://db/x"])
def test_malformed_urls_are_refused_by_every_reader(url: str) -> None:
    from memstone.backends.url import store_location

    with pytest.raises(InvalidInput):
        store_location(url)


def test_a_hook_with_a_malformed_url_keeps_its_state_in_the_home_folder() -> None:
    from memstone.backends.url import state_dir

    assert state_dir("sqlite://tmp/x.db") == Path("~/.memstone").expanduser()  # never ./tmp
