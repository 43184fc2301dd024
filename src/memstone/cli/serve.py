"""``memstone serve`` (the HTTP API, the Memory Explorer and extra mounts on one port) and ``memstone token …``.

Local mode (bound to 127.0.0.1, the default) needs no token. Any other address serves only with access control:
principals, their API tokens (stored as SHA-256 hashes, shown once) and their grants, managed here.
"""

from __future__ import annotations

import asyncio
import errno
import json
import socket
import sys
from collections.abc import Awaitable, Callable, Coroutine
from typing import TYPE_CHECKING, Any, TypeVar

import click

from ..domain.errors import InvalidInput, MemstoneError
from .errors import fail
from .options import json_flag, json_option
from .serve_maintenance import hold_signals, maintained, maintenance_option

if TYPE_CHECKING:
    from ..agents.settings import AgentSettings
    from ..api.http.app import MountFactory
    from ..api.http.settings import Settings
    from ..auth.store import PrincipalStore

T = TypeVar("T")


def _emit(as_json: bool, payload: object, human: str) -> None:
    click.echo(json.dumps(payload, ensure_ascii=False, indent=2) if as_json else human)


def _run(as_json: bool, main: Callable[[], Coroutine[Any, Any, T]]) -> T:
    try:
        return asyncio.run(main())
    except MemstoneError as exc:
        fail(as_json, exc)
        raise AssertionError("unreachable") from exc


def _url(ctx: click.Context) -> str | None:
    obj = ctx.find_root().obj
    return getattr(obj, "url", None)


def extra_mounts(settings: Settings, agent: AgentSettings | None = None) -> dict[str, MountFactory]:
    """The apps mounted beside the API on the same port: the MCP streamable-HTTP endpoint at "/mcp"."""
    from ..api.mcp.server import mcp_mount

    return {"/mcp": mcp_mount(settings=agent, host=settings.host)}


# ---------------------------------------------------------------------------------------------- serve
def listen_socket(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port``, bound before the server starts, so a taken port is a clear error.

    >>> listen_socket("127.0.0.1", 0).getsockname()[1] > 0  # doctest: +SKIP
    True
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        return socket.create_server((host.strip("[]"), port), family=family)
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            raise InvalidInput(
                f"port {port} on {host} is taken: another process is listening there",
                hint="stop that process, or choose another port with --port (--port 0 picks a free one)",
            ) from exc
        raise InvalidInput(f"cannot listen on {host}:{port}: {exc.strerror or exc}", hint="check --host") from exc


@click.command()
@click.option("--host", help="Address to bind (default 127.0.0.1; env MEMSTONE_HOST); not 127.0.0.1 needs tokens.")
@click.option("--port", type=click.IntRange(0, 65535), help="Port (default 8765; env MEMSTONE_PORT; 0: any free).")
@click.option(
    "--auth",
    type=click.Choice(["local", "token"]),
    help="local: no token, 127.0.0.1 only; token: every request needs one (default: local on 127.0.0.1).",
)
@json_flag("Print the URLs as JSON once the server listens.")
@maintenance_option
@click.pass_context
def serve(
    ctx: click.Context, host: str | None, port: int | None, auth: str | None, as_json: bool, maintenance: bool,
    maintain_every: float,
) -> None:  # fmt: skip
    """Serve the HTTP API and the Memory Explorer (and /mcp, when mounted) on one port until stopped (Ctrl-C)."""
    import uvicorn

    from ..api.http.app import check_startup, create_app, open_principals
    from ..api.http.settings import Settings

    obj = ctx.find_root().obj
    try:
        settings = Settings.from_config(obj.config, host=host, port=port, auth=auth, embedding=obj.embedding)
    except MemstoneError as exc:
        fail(as_json, exc)
    host, port = settings.host, settings.port

    async def preflight() -> None:
        principals = await open_principals(settings.url, read_only=True)
        try:
            await check_startup(settings, principals)
        finally:
            await principals.aclose()

    _run(as_json, preflight)
    try:
        sock = listen_socket(host, port)
    except InvalidInput as exc:
        fail(as_json, exc)
    from ..agents.settings import AgentSettings

    agent = AgentSettings.from_config(obj.config)  # /mcp addresses the scopes the CLI and the hooks do
    app = create_app(settings, extra_mounts=extra_mounts(settings, agent))
    config = uvicorn.Config(app, host=host, port=port, lifespan="on", log_level="warning", ws="none")
    server = uvicorn.Server(config)

    async def main() -> None:
        hold = hold_signals(maintenance)  # before the server saves the handlers it finds
        task = asyncio.create_task(server.serve(sockets=[sock]))
        while not server.started and not task.done():
            await asyncio.sleep(0.05)
        if server.started:
            bound = server.servers[0].sockets[0].getsockname()[1] if server.servers else port
            base = settings.model_copy(update={"port": bound}).base_url
            urls = {
                "url": base + "/",
                "explorer": base + "/memory/explorer/",
                "api": base + "/api/openapi.json",
                "mode": settings.auth_mode,
                "store": settings.url,
            }
            human = (
                f"memstone serving {urls['store']} at {urls['url']} ({settings.auth_mode} mode)\n"
                f"  Explorer  {urls['explorer']}\n  API       {urls['api']}\nPress Ctrl-C to stop."
            )
            _emit(as_json, urls, human)
            sys.stdout.flush()
        on = maintenance and server.started
        async with maintained(settings.url, obj.model_option(), on=on, maintain_every_s=maintain_every, hold=hold):
            await task
        if not server.started:
            raise InvalidInput("the server did not start", hint="the log above says why (is the port taken?)")

    _run(as_json, main)


# ---------------------------------------------------------------------------------------------- token
@click.group()
def token() -> None:
    """Manage principals, their API tokens and grants (the store keeps only token hashes)."""


async def _with_store(
    ctx: click.Context, body: Callable[[PrincipalStore], Awaitable[T]], *, read_only: bool = False
) -> T:
    from ..api.http.app import open_principals
    from ..backends.url import parse_store_url
    from ..config import DEFAULT_URL

    url = _url(ctx)
    if parse_store_url(url or DEFAULT_URL).in_memory:
        raise InvalidInput("tokens need a store file, not :memory:", hint="use --url sqlite:///path/to/memstone.db")
    store = await open_principals(url, read_only=read_only)
    try:
        return await body(store)
    finally:
        await store.aclose()


def _parse_grant(value: str) -> tuple[str, str]:
    scope, sep, permission = value.rpartition("=")
    if not sep or not scope:
        raise InvalidInput(f"invalid grant {value!r}", hint="write SCOPE=PERMISSION, e.g. memstone://orgs/acme=read")
    return scope, permission


@token.command("create")
@click.option("--user", required=True, help="The principal's user id (its scope is memstone://users/<user>).")
@click.option("--org", required=True, help="The organization the principal belongs to (exactly one).")
@click.option("--name", help="A display name for a new principal.")
@click.option("--label", help="What this token is for (shown by `token list`).")
@click.option(
    "--grant",
    "grants",
    multiple=True,
    metavar="SCOPE=PERM",
    help="Grant read, write or admin on a scope of the org, or on '*' (repeatable).",
)
@json_option
@click.pass_context
def token_create(
    ctx: click.Context,
    user: str,
    org: str,
    name: str | None,
    label: str | None,
    grants: tuple[str, ...],
    as_json: bool,
) -> None:
    """Create a token (and the principal, if new); the token is printed once and never stored."""
    from ..auth.model import check_permission

    async def body(store: PrincipalStore) -> dict[str, Any]:
        parsed = [_parse_grant(g) for g in grants]
        principal = await store.ensure_principal(user=user, org=org, name=name)
        held = await store.grants(principal.principal_id)
        for scope, permission in parsed:
            held = await store.set_grant(principal.principal_id, scope, check_permission(permission))
        info, secret = await store.issue_token(principal.principal_id, label=label)
        return {
            "token": secret,
            "token_info": info.to_dict(),
            "principal": principal.to_dict(),
            "grants": [g.to_dict() for g in held],
        }

    out = _run(as_json, lambda: _with_store(ctx, body))
    grants_text = ", ".join(f"{g['permission']} on {g['scope']}" for g in out["grants"]) or "none (own user scope only)"
    _emit(
        as_json,
        out,
        f"token {out['token_info']['token_id']} for {user} ({org}); grants: {grants_text}\n"
        f"{out['token']}\nThis is the only time the token is shown: store it now.",
    )


@token.command("list")
@click.option("--user", help="Only this user's tokens.")
@click.option("--all", "include_revoked", is_flag=True, help="Include revoked tokens.")
@json_option
@click.pass_context
def token_list(ctx: click.Context, user: str | None, include_revoked: bool, as_json: bool) -> None:
    """List tokens (id, user, org, label, created, revoked) and each principal's grants; never a secret."""

    async def body(store: PrincipalStore) -> list[dict[str, Any]]:
        out = []
        for info in await store.tokens(user=user, include_revoked=include_revoked):
            grants = await store.grants(info.principal_id)
            out.append({**info.to_dict(), "grants": [g.to_dict() for g in grants]})
        return out

    rows = _run(as_json, lambda: _with_store(ctx, body, read_only=True))
    lines = [
        f"{r['token_id']}  {r['user']}@{r['org']}  {r['prefix']}…  {r['label'] or '-'}  {r['created_at']}  "
        + (f"revoked {r['revoked_at']}" if r["revoked_at"] else "active")
        + "  "
        + (", ".join(f"{g['permission']}:{g['scope']}" for g in r["grants"]) or "-")
        for r in rows
    ]
    _emit(as_json, {"tokens": rows}, "\n".join(lines) or "no tokens")


@token.command("revoke")
@click.argument("token_id")
@json_option
@click.pass_context
def token_revoke(ctx: click.Context, token_id: str, as_json: bool) -> None:
    """Revoke a token by id; the very next request with it is refused (401)."""

    async def body(store: PrincipalStore) -> dict[str, object]:
        return (await store.revoke_token(token_id)).to_dict()

    info = _run(as_json, lambda: _with_store(ctx, body))
    _emit(
        as_json, {"token": info}, f"revoked {info['token_id']} ({info['user']}@{info['org']}) at {info['revoked_at']}"
    )


@token.command("grant")
@click.option("--user", required=True, help="The principal's user id.")
@click.option(
    "--scope", "scope", required=True, help="A scope of the principal's org, 'memstone://orgs/<org>/*' or '*'."
)
@click.option(
    "--permission",
    required=True,
    type=click.Choice(["read", "write", "admin", "none"]),
    help="The permission to hold on the scope ('none' removes the grant).",
)
@json_option
@click.pass_context
def token_grant(ctx: click.Context, user: str, scope: str, permission: str, as_json: bool) -> None:
    """Set or remove a principal's grant on a scope; it applies from the next request on."""
    from ..auth.model import check_permission
    from ..domain.errors import NotFound

    async def body(store: PrincipalStore) -> list[dict[str, object]]:
        principal = await store.principal(user=user)
        if principal is None:
            raise NotFound(
                f"no principal {user!r}", hint="create one with `memstone token create --user ... --org ...`"
            )
        perm = None if permission == "none" else check_permission(permission)
        return [g.to_dict() for g in await store.set_grant(principal.principal_id, scope, perm)]

    held = _run(as_json, lambda: _with_store(ctx, body))
    _emit(
        as_json,
        {"user": user, "grants": held},
        f"{user}: " + (", ".join(f"{g['permission']} on {g['scope']}" for g in held) or "no grants"),
    )


__all__ = ["extra_mounts", "serve", "token"]
