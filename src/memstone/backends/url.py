"""Store URLs, parsed in one place: which engine a URL names and where its store lives.

Known schemes are the built-in ``sqlite`` and every engine registered under the ``memstone.backends`` entry-point
group (an out-of-tree package declares ``[project.entry-points."memstone.backends"] pg = "pkg.module:open"``,
where ``open(url: StoreURL, *, create: bool) -> Awaitable[MemoryBackend]``). Anything else is refused with the
form to write instead, so a typo never becomes a new file in the working directory.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..domain.errors import InvalidInput

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

    from ..ports import MemoryBackend

# This module imports only the standard library and domain errors: the hooks, the agent and capture settings
# read URLs with it without loading an engine (tests/hooks/test_hook_cli.py).

ENTRY_POINT_GROUP = "memstone.backends"
BUILTIN_SCHEMES = ("sqlite",)


@dataclass(frozen=True, slots=True, kw_only=True)
class StoreURL:
    """A parsed store URL: its scheme, and for a file engine the path (``:memory:`` for an in-memory store)."""

    url: str
    scheme: str
    location: str  # everything after ``scheme://``

    @property
    def path(self) -> str:
        """The database file a ``sqlite:`` URL names (``~`` expanded), or ``:memory:``."""
        if self.scheme != "sqlite":
            raise InvalidInput(f"{self.url} names no local file")
        location = self.location.partition("?")[0]  # engine options (``?mode=ro``) are not part of the path
        rest = location[1:] if location.startswith("/") else location
        return rest if rest == ":memory:" else os.path.expanduser(rest)

    @property
    def in_memory(self) -> bool:
        return self.scheme == "sqlite" and self.path == ":memory:"


Opener = Callable[..., Awaitable["MemoryBackend"]]


def _sqlite_hint(path: str) -> str:
    return f"write sqlite:///{Path(path).expanduser().resolve()}"


def parse_store_url(url: str) -> StoreURL:
    """Parse ``url`` or raise InvalidInput naming the correct form.

    >>> parse_store_url("sqlite:///data/m.db").path
    'data/m.db'
    >>> parse_store_url("sqlite:////srv/m.db").path
    '/srv/m.db'
    """
    if not isinstance(url, str) or not url.strip():
        raise InvalidInput("the store URL is empty", hint="write sqlite:///path/to/memstone.db")
    scheme, sep, location = url.partition("://")
    if not sep:
        # Trigger: a bare word or path (`--url notaurl`, `--url data/m.db`).
        # Why: read as a path it silently created a new, empty store in the working directory.
        # Outcome: refused with the URL that names that file.
        raise InvalidInput(f"{url!r} is not a store URL (no scheme)", hint=_sqlite_hint(url))
    scheme = scheme.lower()
    if scheme == "sqlite":
        if location.partition("?")[0] in (":memory:", "/:memory:"):
            return StoreURL(url=url, scheme=scheme, location="/" + location.lstrip("/"))
        if not location.startswith("/"):
            # Trigger: two slashes (`sqlite://tmp/x.db`), where `tmp` reads as a host.
            # Why: it used to open ./tmp/x.db, which is neither the absolute /tmp/x.db nor what the URL says.
            # Outcome: refused, naming both correct forms.
            raise InvalidInput(
                f"{url!r} has two slashes after sqlite:, so {location.split('/')[0]!r} reads as a host",
                hint=f"a relative path is sqlite:///{location}, an absolute one sqlite:////{location}",
            )
        if location.partition("?")[0] in ("/", ""):
            raise InvalidInput(f"no database path in {url!r}", hint="write sqlite:///path/to/memstone.db")
        return StoreURL(url=url, scheme=scheme, location=location)
    if _entry_point(scheme) is None:
        known = ", ".join(sorted({*BUILTIN_SCHEMES, *_registered()}))
        raise InvalidInput(
            f"unknown store URL scheme {scheme!r} in {url!r}",
            hint=f"known schemes: {known}; e.g. sqlite:///path/to/memstone.db",
        )
    return StoreURL(url=url, scheme=scheme, location=location)


def local_file(url: str | StoreURL) -> Path | None:
    """The file a store keeps its data in (absolute, ``~`` expanded, engine options dropped), or None: an
    in-memory store, or an engine that keeps no local file (a server). A malformed URL raises InvalidInput.

    >>> local_file("sqlite:////srv/m.db?durability=fast")
    PosixPath('/srv/m.db')
    >>> local_file("sqlite:///:memory:") is None
    True
    """
    parsed = url if isinstance(url, StoreURL) else parse_store_url(url)
    if parsed.scheme != "sqlite" or parsed.in_memory:
        return None
    return Path(os.path.abspath(parsed.path))


def store_location(url: str | StoreURL) -> str:
    """Where a store lives, for people: its file, ``:memory:``, or the URL of a server engine with any password
    replaced by ``***``. A malformed URL raises InvalidInput.

    >>> store_location("postgresql://me:secret@db/mem")
    'postgresql://me:***@db/mem'
    """
    parsed = url if isinstance(url, StoreURL) else parse_store_url(url)
    found = local_file(parsed)
    if found is not None:
        return str(found)
    if parsed.in_memory:
        return ":memory:"
    netloc, slash, rest = parsed.location.partition("/")
    userinfo, at, host = netloc.rpartition("@")
    if at and ":" in userinfo:
        netloc = f"{userinfo.partition(':')[0]}:***@{host}"
    return f"{parsed.scheme}://{netloc}{slash}{rest}"


def state_dir(url: str | StoreURL | None) -> Path:
    """The local folder of a store's per-machine files (hook logs, hook session state): beside a store file, else
    ``~/.memstone`` (an in-memory store, a server engine, and a malformed URL, so that a hook can log why).

    >>> state_dir("sqlite:////srv/m.db")
    PosixPath('/srv')
    """
    try:
        found = local_file(url) if url is not None else None
    except InvalidInput:
        found = None
    return found.parent if found is not None else Path("~/.memstone").expanduser()


def registered_opener(parsed: StoreURL) -> Opener:
    """The opener an out-of-tree engine registered for this URL's scheme (built-ins are in ``open_store``)."""
    found = _entry_point(parsed.scheme)
    if found is None:  # parse_store_url already refused it; the registry changed in between
        raise InvalidInput(f"unknown store URL scheme {parsed.scheme!r}")
    loaded = found.load()
    if not callable(loaded):
        raise InvalidInput(f"the {parsed.scheme!r} engine's entry point is not callable")
    opened: Opener = loaded
    return opened


def _registered() -> list[str]:
    from importlib.metadata import entry_points

    return [ep.name for ep in entry_points(group=ENTRY_POINT_GROUP)]


def _entry_point(scheme: str) -> EntryPoint | None:
    from importlib.metadata import entry_points

    for ep in entry_points(group=ENTRY_POINT_GROUP, name=scheme):
        return ep
    return None
