"""Server URLs (standard library only: the hook path asks ``is_remote`` on every agent prompt)."""

from __future__ import annotations

from urllib.parse import urlsplit

from ..domain.errors import InvalidInput

REMOTE_SCHEMES = frozenset({"http", "https"})


def is_remote(url: str | None) -> bool:
    """True for a server URL (``http://`` or ``https://``), False for a store URL or a path.

    >>> is_remote("https://memory.example.com:8765"), is_remote("sqlite:///m.db")
    (True, False)
    """
    return url is not None and urlsplit(url.strip()).scheme.lower() in REMOTE_SCHEMES


def server_base(url: str) -> str:
    """The server's base URL (a path prefix, as behind a reverse proxy, is kept); a query or fragment is refused.

    >>> server_base("https://memory.example.com/team/")
    'https://memory.example.com/team'
    """
    parts = urlsplit(url.strip())
    if parts.scheme.lower() not in REMOTE_SCHEMES or not parts.hostname:
        raise InvalidInput(f"{url!r} is not a server URL", hint="write it as https://HOST:PORT")
    if parts.query or parts.fragment or parts.username or parts.password:
        raise InvalidInput(
            f"the server URL {url!r} carries a query, a fragment or credentials",
            hint="write it as https://HOST:PORT and put the token in MEMSTONE_TOKEN",
        )
    return f"{parts.scheme.lower()}://{parts.netloc}{parts.path.rstrip('/')}"


__all__ = ["REMOTE_SCHEMES", "is_remote", "server_base"]
