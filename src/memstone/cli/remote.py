"""The CLI against a team server (``--url https://HOST:PORT``): each command here is one or a few ``/api`` calls.

Nothing is decided here that the server decides (secrets, grants, kinds, text limits, CAS, retries): the request
carries the command's options and the server's answer or error comes back with the same exit code a local store
gives. A command that has no HTTP operation says so (exit 5) instead of guessing. ``cli/main.py``'s ``run``
sends a command here when the URL is a server's.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any

import click

from ..domain.errors import CapabilityNotSupportedError, InvalidInput
from ..remote.client import RemoteClient
from .remote_base import Handler, Options, Payload, _dict, _no_memory_option


def _rev_line(rev: Mapping[str, Any] | None) -> str:
    if not rev:
        return "nothing to save"
    return (
        f"{rev['memory_id']} revision {rev['revision']} ({rev['active_count']} active of {rev['entry_count']} entries)"
    )


async def _remember(ctx: click.Context, client: RemoteClient) -> Payload:
    p = ctx.params
    _no_memory_option(p)
    text = sys.stdin.read() if p["text"] == "-" else p["text"]
    fields: dict[str, Any] = {
        "kind": p["kind"], "text": text, "title": p["title"], "slug": p["slug"], "reason": p["reason"],
        "important": p["important"], "mandatory": p["mandatory"],
    }  # fmt: skip
    if p["revise"]:
        patch = {k: v for k, v in fields.items() if v is not None}
        if p["tags"]:
            patch["tags"] = list(p["tags"])
        headers = {}
        if p["expected_version"] is None:
            headers["If-Match"] = "*"  # as locally: whatever is current (the server retries a lost head race)
            before = (await client.json("GET", f"/api/memories/{p['revise']}"))["record"]["revision"]
        else:
            patch["revision"] = before = p["expected_version"]
        out = await client.json("PATCH", f"/api/memories/{p['revise']}", json=patch, headers=headers)
        rev, record = _dict(out.get("revision")), _dict(out.get("record"))
        status = "updated" if record.get("revision") != before else "unchanged"  # a no-op writes no version
        line = f"{status} {record.get('entry_id')} (version {record.get('revision')}); {_rev_line(rev)}"
        return {"status": status, "entries": [record.get("entry_id")], "revision": rev}, line
    if p["kind"] is None or text is None:
        raise InvalidInput("a new memory needs --kind and --text", hint="or pass --revise ENTRY to change one")
    if p["expected_version"] is not None:
        raise InvalidInput("--expected-version goes with --revise ENTRY")
    body = {k: v for k, v in fields.items() if v is not None} | {"tags": list(p["tags"])}
    obj: Options = ctx.find_root().obj
    http_status, answer = await client.call("POST", "/api/memories", params={"scope": obj.scope}, json=body)
    out = _dict(answer)
    rev, entry = _dict(out.get("revision")), _dict(out.get("record")).get("entry_id")
    created = http_status == 201
    line = _rev_line(rev)
    line = f"{line}; added {entry}" if created else f"unchanged: already stored as {entry}; {line}"
    payload = {
        "status": "created" if created else "unchanged",
        "entries": [entry] if created else [],
        "existing": [] if created else [entry],
        "revision": rev,
    }
    return payload, line


def _state(action: str) -> Handler:
    async def handler(ctx: click.Context, client: RemoteClient) -> Payload:
        _no_memory_option(ctx.params)
        rev: dict[str, Any] = {}
        for entry in ctx.params["entries"]:  # one Revision per entry: the API forgets one entry per call
            body = {"reason": ctx.params["reason"]} if ctx.params["reason"] else {}
            out = await client.json("POST", f"/api/memories/{entry}/{action}", json=body, headers={"If-Match": "*"})
            rev = _dict(out.get("revision"))
        return {"revision": rev}, _rev_line(rev)

    return handler


async def _search(ctx: click.Context, client: RemoteClient) -> Payload:
    p = ctx.params
    _no_memory_option(p)
    obj: Options = ctx.find_root().obj
    params = {
        "q": p["query"], "scope": list(p["in_scopes"]) or list(obj.read_scopes), "limit": p["limit"], "mode": p["mode"],
        "kind": list(p["kinds"]), "tag": list(p["tags"]), "order": p["order"], "important": p["important"],
        "mandatory": p["mandatory"], "exclude_mandatory": p["exclude_mandatory"] or None,
        "include_superseded": p["include_superseded"] or None, "precedence": False if p["no_precedence"] else None,
        "context": p["context"] or None,
    }  # fmt: skip
    out = await client.json("GET", "/api/memories/search", params=params)
    fallback = out.get("fallback_reason")
    lines = [f"mode: {out.get('mode')}" + (f" ({fallback})" if fallback else "")]
    for h in out.get("hits", []):
        head = f"[{h['kind']}] {h['title'] + ': ' if h.get('title') else ''}"
        note = f"  (superseded; current {h['current_entry_version_id']})" if h.get("superseded") else ""
        lines.append(f"{h['entry_id']}  {h['score']:.4f}  {head}{h['text'].splitlines()[0][:100]}{note}")
    if not out.get("hits"):
        lines.append("no matches")
    return out, "\n".join(lines)


async def _show(ctx: click.Context, client: RemoteClient) -> Payload:
    p = ctx.params
    _no_memory_option(p)
    entry = p["entry"]
    if not str(entry).startswith("ent_"):
        raise InvalidInput(f"{entry!r}: a team server shows entries by id (ent_…)", hint="pass the entry's ent_ id")
    out = await client.json("GET", f"/api/memories/{entry}", params={"revision": p["revision"]})
    record = _dict(out.get("record"))
    markdown = await client.text(f"/api/memories/{entry}/source", params={"version": record.get("entry_version_id")})
    return {"version": record, "markdown": markdown}, markdown.rstrip("\n")


async def _history(ctx: click.Context, client: RemoteClient) -> Payload:
    entry = ctx.params["entry"]
    items: list[dict[str, Any]] = []
    cursor: str | None = None
    while True:  # every page: the command prints the whole chain, as it does locally
        out = await client.json("GET", f"/api/memories/{entry}/versions", params={"limit": 200, "cursor": cursor})
        items.extend(_dict(i) for i in out.get("items", []))
        nxt = out.get("next_cursor")
        cursor = nxt if isinstance(nxt, str) else None
        if cursor is None:
            break
    lines = [
        f"v{v.get('version')}  {v.get('entry_version_id')}  {v.get('status', ''):<10}  {v.get('created_at', '')}  "
        f"{v.get('author') or '-'}  {str(v.get('entry_content_hash', ''))[:12]}  {str(v.get('text', ''))[:60]!r}"
        for v in items
    ]
    return {"history": items}, "\n".join(lines)


async def _scopes(ctx: click.Context, client: RemoteClient) -> Payload:
    out = await client.json("GET", "/api/memories/scopes")
    items = [_dict(i) for i in out.get("items", [])]
    lines = [f"{i.get('scope')}  {i.get('permission')}  {i.get('memory_id') or '-'}" for i in items]
    return out, "\n".join(lines) or "no scopes"


COMMANDS: Mapping[str, Handler] = {
    "remember": _remember,
    "forget": _state("forget"),
    "reactivate": _state("reactivate"),
    "search": _search,
    "show": _show,
    "history": _history,
    "scopes": _scopes,
}


def command_name(ctx: click.Context) -> str:
    """The command's name below ``memstone`` (``search``, ``review accept``)."""
    names: list[str] = []
    while ctx.parent is not None:
        names.insert(0, ctx.info_name or "")
        ctx = ctx.parent
    return " ".join(names)


def handlers() -> Mapping[str, Handler]:
    from .embedding_runs import EMBEDDING_COMMANDS
    from .remote_records import MORE_COMMANDS

    return {**COMMANDS, **MORE_COMMANDS, **EMBEDDING_COMMANDS}


async def run_remote(ctx: click.Context) -> Payload:
    """Run the command ``ctx`` names against the server of the root ``--url`` (MEMSTONE_URL): (JSON, text)."""
    obj: Options = ctx.find_root().obj
    known = handlers()
    name = command_name(ctx)
    handler = known.get(name)
    if handler is None:
        raise CapabilityNotSupportedError(
            "remote",
            f"memstone {name} does not run against a team server ({obj.url})",
            hint=f"remote commands: {', '.join(known)}; run the others where the store is",
        )
    async with RemoteClient(obj.url, token=obj.token()) as client:
        return await handler(ctx, client)


def run_remote_command(ctx: click.Context, as_json: bool) -> None:
    """Run ``ctx``'s command on the team server, print its answer or its error (with the local exit code)."""
    import asyncio
    import json

    from ..domain.errors import MemstoneError
    from .errors import fail

    try:
        payload, human = asyncio.run(run_remote(ctx))
    except MemstoneError as exc:
        fail(as_json, exc)
    click.echo(json.dumps(payload, ensure_ascii=False, indent=2) if as_json else human)


__all__ = ["COMMANDS", "command_name", "handlers", "run_remote", "run_remote_command"]
