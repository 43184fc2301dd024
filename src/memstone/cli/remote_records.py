"""More CLI commands against a team server (``--url https://…``): catalogues, recall, export, purge, the capture
review queue and maintenance status, each one or a few ``/api`` calls (see :mod:`memstone.cli.remote`).

The JSON each prints is the local command's (the server answers with the same ``to_dict()`` shapes); the server
decides every rule, and its error comes back with the local exit code.
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import Any

import click

from ..domain.errors import InvalidInput
from ..remote.client import RemoteClient
from .remote_base import Handler, Options, Payload, _dict, _no_memory_option


def _scopes(ctx: click.Context, given: object) -> list[str]:
    obj: Options = ctx.find_root().obj
    return [str(s) for s in given] if isinstance(given, (list, tuple)) and given else list(obj.read_scopes)


def _line(r: Mapping[str, Any]) -> str:
    text = str(r.get("text") or "")
    first = text.splitlines()[0][:80] if text else ""
    label, slug = (f"{r['title']}: " if r.get("title") else ""), (f" {r['slug']}" if r.get("slug") else "")
    shadow = f"  (shadowed by {r['shadowed_by']} in {r.get('shadowed_by_scope')})" if r.get("shadowed_by") else ""
    state = ("" if r.get("state") == "active" else "  [inactive]") + ("  [stale]" if r.get("stale") else "")
    where = r.get("scope") or r.get("memory_ref")
    head = f"{r.get('entry_id')}  {r.get('category', ''):<9}  [{r.get('kind')}]{slug}  {label}{first}"
    return f"{head}  ({where}){shadow}{state}"


def _catalogue(name: str) -> Handler:
    async def handler(ctx: click.Context, client: RemoteClient) -> Payload:
        p = ctx.params
        _no_memory_option(p)
        if p.get("revision") is not None:
            raise InvalidInput("--revision reads exactly one --memory at a point in time")
        important = True if name == "important" else p.get("important")
        mandatory = True if name == "mandatory" else p.get("mandatory")
        params = {
            "scope": _scopes(ctx, p.get("scopes")), "kind": list(p["kinds"]), "tag": list(p["tags"]),
            "important": important, "mandatory": mandatory, "limit": p["limit"], "inactive": p["inactive"] or None,
            "precedence": False if p["no_precedence"] else None,
        }  # fmt: skip
        out = await client.json("GET", "/api/records", params=params)
        records = [_dict(r) for r in out.get("records", [])]
        if name == "mandatory":
            return out, "\n\n".join(f"{_line(r)}\n{r.get('text')}" for r in records) or "no mandatory memories"
        return out, "\n".join(_line(r) for r in records) or "no records"

    return handler


async def _recall(ctx: click.Context, client: RemoteClient) -> Payload:
    p = ctx.params
    _no_memory_option(p)
    params = {
        "q": p["context"], "scope": _scopes(ctx, p["scopes"]), "budget_tokens": p["budget_tokens"],
        "budget_chars": p["budget_chars"], "limit": p["limit"], "mode": p["mode"], "order": p["order"],
    }  # fmt: skip
    out = await client.json("GET", "/api/memories/recall", params=params)
    out.pop("scopes", None)  # the local bundle names no scopes
    out["mandatory"] = [{k: v for k, v in _dict(r).items() if k != "sources"} for r in out.get("mandatory", [])]
    stale = {True: " (stale: its evidence changed)", False: ""}

    def block(r: Mapping[str, Any]) -> str:
        name = r.get("title") or r.get("slug") or r.get("entry_id")
        return f"\n### [{r.get('kind')}] {name}{stale[bool(r.get('stale'))]}\n{r.get('text')}"

    lines = ["# Mandatory", *(block(_dict(r)) for r in out["mandatory"]), "\n# Contextual"]
    lines.extend(block(_dict(h)) for h in out.get("contextual", []))
    if out.get("links"):
        lines.append("\n# Links")
        lines.extend(f"- {x['source']} {x['kind']} {x['target']} ({x['direction']})" for x in map(_dict, out["links"]))
    lines.append(f"\n{out.get('note')}")
    return out, "\n".join(lines)


async def _export(ctx: click.Context, client: RemoteClient) -> Payload:
    p = ctx.params
    _no_memory_option(p)
    target = Path(p["directory"])
    files: list[str] = []
    scopes = _scopes(ctx, p["scopes"])
    for scope in scopes:  # one zip per scope: GET /api/memories/export, unpacked into DIRECTORY
        _, body = await client.call("GET", "/api/memories/export", params={"scope": scope})
        if not isinstance(body, bytes):
            raise InvalidInput(f"the server answered the export of {scope} with something that is not a zip")
        with zipfile.ZipFile(io.BytesIO(body)) as z:
            for name in z.namelist():
                rel = PurePosixPath(name)
                if rel.is_absolute() or ".." in rel.parts:
                    raise InvalidInput(f"the server's export holds an unsafe path {name!r}; nothing more written")
                dest = target.joinpath(*rel.parts)
                dest.parent.mkdir(parents=True, exist_ok=True)
                dest.write_bytes(z.read(name))
                files.append(rel.as_posix())
    out = {"directory": str(target), "scopes": scopes, "files": sorted(files)}
    return out, f"exported {len(scopes)} scopes, {len(files)} files to {target}"


async def _purge(ctx: click.Context, client: RemoteClient) -> Payload:
    from .confirm import confirm_purge

    p = ctx.params
    entry = p["entry"]
    if p["list_only"]:
        out = await client.json("GET", f"/api/memories/{entry}/tombstones")
        lines = [f"v{t['version']}  {t['entry_version_id']}  purged {t['purged_at']} by {t.get('author') or '-'}: "
                 f"{t['reason']}" for t in map(_dict, out.get("tombstones", []))]  # fmt: skip
        return out, "\n".join(lines) or f"nothing of {entry} was purged"
    body = {
        "reason": confirm_purge(entry, p["reason"], p["versions"], p["yes"]),
        "versions": list(p["versions"]) or None,
    }
    out = await client.json("POST", f"/api/memories/{entry}/purge", json=body)
    human = [f"purged v{t['version']} ({t['entry_version_id']})" for t in map(_dict, out.get("purged", []))]
    human += [f"already purged: {v}" for v in out.get("already_purged", [])]
    if out.get("forgotten_in_revision") is not None:
        human.append(f"forgotten first in revision {out['forgotten_in_revision']}")
    return out, "\n".join(human) or "nothing to purge"


def _review_line(i: Mapping[str, Any]) -> str:
    candidate = _dict(i.get("candidate"))
    what = str(candidate.get("text", "")).splitlines()[0][:80] if candidate else (i.get("note") or "flag")
    kind = candidate.get("kind") if candidate else i.get("item_type")
    where = i.get("scope") or i.get("memory_id") or "-"
    return f"{i.get('item_id')}  {i.get('status', ''):<8}  [{kind}] {what}  ({where})"


async def _review_list(ctx: click.Context, client: RemoteClient) -> Payload:
    status = ctx.params["status"]
    out = await client.json("GET", "/api/capture/queue", params={"status": status, "scope": ctx.params["scope"]})
    items = [_dict(i) for i in out.get("items", [])]
    return {"items": items}, "\n".join(map(_review_line, items)) or f"no {'' if status == 'all' else status + ' '}items"


async def _review_accept(ctx: click.Context, client: RemoteClient) -> Payload:
    item = ctx.params["item"]
    out = await client.json("POST", f"/api/capture/queue/{item}/accept")
    entries, result = [str(e) for e in out.get("entries", [])], _dict(out.get("result"))
    human = f"accepted {item}" + (
        f": wrote {', '.join(entries)}" if entries else f" ({result.get('reason') or result.get('status')})"
    )
    return {"item": out.get("item"), "result": result, "entries": entries}, human


async def _review_reject(ctx: click.Context, client: RemoteClient) -> Payload:
    item, note = ctx.params["item"], ctx.params["note"]
    out = await client.json("POST", f"/api/capture/queue/{item}/reject", json={"note": note} if note else {})
    return {"item": out.get("item")}, f"rejected {item}"


async def _maintenance_status(ctx: click.Context, client: RemoteClient) -> Payload:
    obj: Options = ctx.find_root().obj
    params = {"scope": ctx.params["scope"] or obj.scope, "threshold": ctx.params["threshold"]}
    from ..maintenance.daemon import status_text

    st = await client.json("GET", "/api/maintenance/status", params=params)
    return st, status_text(st)


MORE_COMMANDS: Mapping[str, Handler] = {
    "list": _catalogue("list"),
    "important": _catalogue("important"),
    "mandatory": _catalogue("mandatory"),
    "recall": _recall,
    "export": _export,
    "purge": _purge,
    "review list": _review_list,
    "review accept": _review_accept,
    "review reject": _review_reject,
    "maintenance status": _maintenance_status,
}

__all__ = ["MORE_COMMANDS"]
