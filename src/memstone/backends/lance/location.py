"""Where a LanceDB store lives: ``lancedb:///path`` (a local folder) or ``lancedb+s3://bucket/prefix``.

Paths follow the ``sqlite:`` convention: ``lancedb:///data/m`` is the relative folder ``data/m``,
``lancedb:////srv/m`` the absolute ``/srv/m``. S3 credentials and the endpoint come from the usual environment
(``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``, ``AWS_SESSION_TOKEN``, ``AWS_REGION`` /
``AWS_DEFAULT_REGION``, ``AWS_ENDPOINT_URL_S3`` / ``AWS_ENDPOINT_URL`` for an S3-compatible server); they are
handed to LanceDB's object store and are never written to the store, a memory or a log line.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field

from ...domain.errors import InvalidInput
from ..url import StoreURL

SCHEMES = ("lancedb", "lancedb+s3")


@dataclass(frozen=True, slots=True)
class LanceLocation:
    uri: str  # what lancedb.connect takes: a local path or s3://bucket/prefix
    where: str  # what messages name (no credentials)
    storage_options: Mapping[str, str] = field(default_factory=dict, repr=False)
    # ``?search=``: ``replica`` (the default) searches this process's replica only; ``gated``: candidates from
    # LanceDB's own indexes, fed by maintenance; ``eager``: the same, fed on every write (docs/engines/lancedb.md).
    search: str = "replica"

    @property
    def eager_feed(self) -> bool:
        return self.search == "eager"

    @property
    def use_index(self) -> bool:
        return self.search != "replica"


def s3_options(env: Mapping[str, str]) -> dict[str, str]:
    """LanceDB storage options from the environment (the object store reads the AWS_* credentials itself)."""
    options: dict[str, str] = {}
    endpoint = env.get("AWS_ENDPOINT_URL_S3") or env.get("AWS_ENDPOINT_URL") or env.get("AWS_ENDPOINT")
    if endpoint:
        options["aws_endpoint"] = endpoint
        if endpoint.startswith("http://"):
            options["allow_http"] = "true"
    region = env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION")
    options["aws_region"] = region or "us-east-1"
    for name, key in (
        ("AWS_ACCESS_KEY_ID", "aws_access_key_id"),
        ("AWS_SECRET_ACCESS_KEY", "aws_secret_access_key"),
        ("AWS_SESSION_TOKEN", "aws_session_token"),
    ):
        if env.get(name):
            options[key] = env[name]
    return options


def parse_location(url: StoreURL, env: Mapping[str, str] | None = None) -> LanceLocation:
    location, _, query = url.location.partition("?")
    search = "replica"
    if query:
        if query not in ("search=replica", "search=gated", "search=eager"):
            raise InvalidInput(
                f"{url.url!r}: the LanceDB engine takes one option, search=replica, search=gated or search=eager",
                hint="drop the ?… part (search=replica), or write ?search=gated to search LanceDB's own indexes",
            )
        search = query.removeprefix("search=")
    if url.scheme == "lancedb":
        rest = location[1:] if location.startswith("/") else ""
        if not location.startswith("/") or not rest.strip("/"):
            raise InvalidInput(
                f"no folder in {url.url!r}",
                hint="write lancedb:///relative/folder or lancedb:////absolute/folder",
            )
        path = os.path.abspath(os.path.expanduser(rest))
        return LanceLocation(uri=path, where=path, search=search)
    if url.scheme == "lancedb+s3":
        bucket, _, prefix = location.partition("/")
        if not bucket or "@" in bucket:
            raise InvalidInput(
                f"no bucket in {url.url!r}",
                hint="write lancedb+s3://BUCKET/PREFIX; credentials come from AWS_* environment variables",
            )
        uri = f"s3://{bucket}/{prefix.strip('/')}" if prefix.strip("/") else f"s3://{bucket}"
        options = s3_options(os.environ if env is None else env)
        return LanceLocation(uri=uri, where=uri, storage_options=options, search=search)
    raise InvalidInput(f"{url.url!r} is not a LanceDB store URL", hint="write lancedb:///folder")


__all__ = ["SCHEMES", "LanceLocation", "parse_location", "s3_options"]
