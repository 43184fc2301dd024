"""Fuzz the four front ends: ``python bench/bench_fuzz.py [--calls 100000] [--cli-calls 100] [--seed 1]``.

Drives random and hostile calls at one fresh store (a file in a temporary directory) through the library
(``MemoryService``), HTTP (the real ASGI app, local mode, in process), MCP (the real server through the SDK's
in-memory client) and the CLI (``memstone …`` subprocesses: fewer, each one starts Python). Inputs mix valid
calls with wrong types, control characters, oversize and deeply nested values, huge numbers, unknown ids and
scopes, odd methods and headers.

Checks (issue 12, "100,000 fuzzed inputs"): every failure is the project's (a ``MemstoneError`` with a known
``code``; HTTP: no 5xx other than a documented 501, and a JSON error body with a known code; MCP: an error result
carrying ``[code: …]``; CLI: a documented exit code, never a traceback); canary entries written before the run
(in a scope the fuzzer never names) are unchanged after it; ``memstone verify`` is clean. Prints the calls per
surface, the outcomes by code, the failures (the first few in full) and the throughput. Exit 1 on any failure.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import subprocess
import sys
import tempfile
import time
import traceback
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx2

from mcp import Client
from memstone import EntryInput, MemoryService, open_service
from memstone.agents.settings import AgentSettings
from memstone.api.http import Settings, create_app
from memstone.api.mcp.server import build_server
from memstone.domain.model import EntryPatch
from memstone.testing.fuzzing import (
    changed_canaries,
    cli_failure,
    code_of_mcp_error,
    http_failure,
    library_failure,
    mcp_failure,
    plant_canaries,
)

SCOPES = ["memstone://orgs/fuzz/projects/web", "memstone://orgs/fuzz", "memstone://users/fuzzer"]
KINDS = ["fact", "decision", "convention", "constraint", "preference", "correction", "Fact", "x" * 65, "", "a b"]


class Fuzz:
    """Random and hostile values, drawn from one seeded generator."""

    def __init__(self, seed: int) -> None:
        self.r = random.Random(seed)
        self.ids: list[str] = []  # entry ids the fuzz run itself created (never a canary)

    def text(self) -> Any:
        r = self.r
        choice = r.random()
        if choice < 0.45:
            words = ["deploy", "uv", "retry", "cache", "schema", "token", "release", "backoff", "note", "ünïcode"]
            return " ".join(r.choice(words) for _ in range(r.randint(1, 12))) + "."
        if choice < 0.55:
            return "".join(chr(r.randint(0, 0x2FFF)) for _ in range(r.randint(0, 40)))
        if choice < 0.6:
            return "x" * r.choice([8192, 8193, 40_001, 300_000])
        if choice < 0.65:
            return "\x00" + "a" * r.randint(0, 5)
        if choice < 0.7:
            return r.choice(["", "   ", "\n", "\ud800", "ghp_" + "A" * 36, "-----BEGIN RSA PRIVATE KEY-----"])
        if choice < 0.8:
            return self.junk()
        return "Fuzz fact " + str(r.randint(0, 10**6))

    def junk(self) -> Any:
        r = self.r
        return r.choice(
            [None, True, 0, -1, 2**63, 2**64, 1.5, float("nan"), [], {}, ["a"], {"a": 1}, b"bytes", "ent_", object()]
        )

    def entry_id(self) -> Any:
        r = self.r
        if self.ids and r.random() < 0.6:
            return r.choice(self.ids)
        return r.choice(
            ["ent_01J00000000000000000000000", "ent_", "ver_01J00000000000000000000000", "nope", "ent_x\n",
             "../../etc/passwd", "ent_" + "Z" * 26, "", self.junk()]
        )  # fmt: skip

    def scope(self) -> Any:
        r = self.r
        if r.random() < 0.7:
            return r.choice(SCOPES)
        return r.choice(
            ["memstone://orgs/", "memstone://orgs/fuzz/projects/web\n", "orgs/fuzz", "memstone://users/anonymous",
             "http://x", "memstone://orgs/" + "a" * 300, "", self.junk()]
        )  # fmt: skip

    def tags(self) -> Any:
        r = self.r
        if r.random() < 0.7:
            return [r.choice(["ops", "db", "ci", "Ops", "a b", "x" * 80, ""]) for _ in range(r.randint(0, 5))]
        return self.junk()

    def revision(self) -> Any:
        return self.r.choice([1, 2, 3, 0, -1, 2**63, 2**63 - 1, "1", None, True])

    def json_value(self, depth: int = 0) -> Any:
        r = self.r
        if depth > 3 or r.random() < 0.4:
            return r.choice([self.text(), self.r.randint(-5, 5), None, True, self.revision()])
        if r.random() < 0.5:
            return [self.json_value(depth + 1) for _ in range(r.randint(0, 3))]
        keys = ["text", "kind", "tags", "title", "slug", "revision", "x", "scope"]
        return {r.choice(keys): self.json_value(depth + 1) for _ in range(r.randint(0, 4))}


class Tally:
    def __init__(self) -> None:
        self.calls: Counter[str] = Counter()
        self.outcomes: Counter[str] = Counter()
        self.failures: list[str] = []
        self.fail_count = 0

    def ok(self, surface: str, outcome: str) -> None:
        self.calls[surface] += 1
        self.outcomes[f"{surface}:{outcome}"] += 1

    def fail(self, surface: str, what: str) -> None:
        self.calls[surface] += 1
        self.fail_count += 1
        self.outcomes[f"{surface}:FAILURE"] += 1
        if len(self.failures) < 20:
            self.failures.append(f"[{surface}] {what}")


# ---------------------------------------------------------------------------------------------- library
async def library_call(svc: MemoryService, f: Fuzz, t: Tally) -> None:
    r = f.r
    op = r.choice(["remember", "remember", "search", "get", "history", "update", "forget", "list", "revision",
                   "purge", "source", "diff"])  # fmt: skip
    try:
        if op == "remember":
            entry = EntryInput(kind=r.choice(KINDS), text=f.text(), tags=f.tags(), title=r.choice([None, f.text()]))
            rev = await svc.remember(scope=f.scope(), entries=[entry])
            if rev is not None:
                f.ids.extend(c.entry_id for c in rev.changes if c.op == "add")
        elif op == "search":
            await svc.search(
                f.text(), scopes=r.choice([[f.scope()], f.junk(), SCOPES]), mode=r.choice(["fts", "auto", "x"])
            )
        elif op == "get":
            await svc.get(f.entry_id())
        elif op == "history":
            await svc.history(f.entry_id())
        elif op == "update":
            patch = EntryPatch(text=r.choice([None, f.text()]), tags=r.choice([None, f.tags()]))
            await svc.update(f.entry_id(), patch, expected_version=r.choice([None, f.revision()]))
        elif op == "forget":
            eid = f.entry_id()
            head = await svc.head((await svc.get(eid)).memory_id) if isinstance(eid, str) and eid in f.ids else None
            await svc.forget(head or f.scope(), entries=[eid])
        elif op == "list":
            await svc.list(scopes=[f.scope()], tags=f.tags())
        elif op == "revision":
            await svc.revision(f.scope(), f.revision())
        elif op == "purge":
            await svc.purge(
                f.entry_id(), reason=r.choice(["fuzz", "", f.text()]), versions=r.choice([None, [1], [f.revision()]])
            )
        elif op == "source":
            await svc.source(f.entry_id())
        else:
            await svc.diff(f.entry_id(), f.entry_id())
        t.ok("library", "ok")
    except Exception as exc:
        failure = library_failure(exc)
        if failure is None:
            t.ok("library", str(getattr(exc, "code", "")))
        else:
            t.fail("library", f"{op}: {failure}\n{traceback.format_exc(limit=4)}")


# ---------------------------------------------------------------------------------------------- HTTP
def sendable(value: Any) -> Any:
    """What an HTTP client can put on the wire: no NaN (not JSON), no lone surrogate (not UTF-8); the library and
    MCP phases send those."""
    if isinstance(value, float) and value != value:
        return "nan"
    if isinstance(value, str):
        return value.encode("utf-8", "replace").decode("utf-8")
    if isinstance(value, list):
        return [sendable(v) for v in value]
    if isinstance(value, dict):
        return {sendable(k): sendable(v) for k, v in value.items()}
    return value


async def http_call(client: httpx2.AsyncClient, ops: list[tuple[str, str]], f: Fuzz, t: Tally) -> None:
    r = f.r
    method, path = r.choice(ops)
    if r.random() < 0.05:
        method = r.choice(["PUT", "PATCH", "DELETE", "OPTIONS"])
    filled = path
    for name in ("entry_id", "version", "revision", "item_id"):
        value = {"entry_id": f.entry_id(), "version": f.revision(), "revision": r.choice(["head", f.revision()]),
                 "item_id": "cap_x"}[name]  # fmt: skip
        filled = filled.replace("{" + name + "}", sendable(str(value)).replace("/", "%2F").replace("\n", "%0A"))
    params: dict[str, Any] = {}
    for key in r.sample(
        ["scope", "q", "mode", "limit", "since", "kind", "slug", "target", "revision", "x"], r.randint(0, 4)
    ):
        value = f.scope() if key == "scope" else f.text() if key == "q" else f.json_value()
        params[key] = sendable(str(value)[:2000])
    headers = {}
    if r.random() < 0.2:
        headers["If-Match"] = r.choice(['"1"', "1", "9" * 5000, "*", '"ver_x"', ""])
    try:
        if r.random() < 0.1:
            body: Any = r.choice([b"{", b"[" * 3000 + b"]" * 3000, b"\xff\xfe", b"null", b'{"text": "\x00"}'])
            resp = await client.request(method, filled, params=params, content=body,
                                        headers={**headers, "content-type": "application/json"})  # fmt: skip
        else:
            body = {"kind": r.choice(KINDS), "text": f.text(), "tags": f.tags()} if r.random() < 0.5 else f.json_value()
            wire = json.loads(json.dumps(sendable(body), default=str))
            resp = await client.request(method, filled, params=params, json=wire, headers=headers)
    except Exception as exc:
        t.fail("http", f"{method} {filled}: client raised {type(exc).__name__}: {exc}")
        return
    failure = http_failure(resp.status_code, resp.text)
    if failure is not None:
        t.fail("http", f"{method} {filled} -> {failure}")
        return
    if resp.status_code >= 400:
        t.ok("http", f"{resp.status_code}:{resp.json()['error']['code']}")
    else:
        t.ok("http", str(resp.status_code))
        if method == "POST" and path == "/api/memories" and resp.status_code == 201:
            f.ids.append(resp.json()["record"]["entry_id"])


# ---------------------------------------------------------------------------------------------- MCP
def mcp_args(tool: str, f: Fuzz) -> dict[str, Any]:
    r = f.r
    pool: dict[str, Callable[[], Any]] = {
        "text": f.text, "query": f.text, "context": f.text, "kind": lambda: r.choice(KINDS), "tags": f.tags,
        "title": f.text, "scope": lambda: r.choice(["project", "user", "all", "other", f.junk()]), "id": f.entry_id,
        "ids": lambda: [f.entry_id() for _ in range(r.randint(0, 3))], "source": f.entry_id, "target": f.entry_id,
        "limit": lambda: r.choice([1, 8, 0, 10**9, "x"]), "since_revision": f.revision, "reason": f.text,
        "mode": lambda: r.choice(["fts", "auto", "vector", "x"]), "slug": f.text,
    }  # fmt: skip
    args = {k: pool[k]() for k in r.sample(sorted(pool), r.randint(0, 5))}
    return json.loads(json.dumps(args, default=str))


async def mcp_call(client: Client, tools: list[str], f: Fuzz, t: Tally) -> None:
    tool = f.r.choice(tools)
    args = mcp_args(tool, f)
    try:
        result = await client.call_tool(tool, args)
    except Exception as exc:
        t.fail("mcp", f"{tool}({args!r:.200}): {type(exc).__name__}: {exc}")
        return
    text = " ".join(getattr(c, "text", "") for c in result.content)
    failure = mcp_failure(result.is_error, text)
    if failure is not None:
        t.fail("mcp", f"{tool}({args!r:.200}): {failure}")
    elif result.is_error:
        t.ok("mcp", str(code_of_mcp_error(text)))
    else:
        t.ok("mcp", "ok")
        if tool == "memory_remember" and isinstance(result.structured_content, dict):
            for rev in result.structured_content.get("revisions", []):
                f.ids.extend(str(e) for e in rev.get("entries", []) if str(e).startswith("ent_"))


# ---------------------------------------------------------------------------------------------- CLI
def cli_call(url: str, f: Fuzz, t: Tally) -> None:
    r = f.r

    def s(v: Any) -> str:
        return str(v).replace("\x00", "")[:3000]  # argv cannot carry NUL

    argv = r.choice([
        ["remember", "--kind", s(r.choice(KINDS)), "--text", s(f.text())],
        ["search", s(f.text())], ["show", s(f.entry_id())], ["history", s(f.entry_id())],
        ["show", s(f.entry_id()), "--revision", s(f.revision())], ["list", "--revision", s(f.revision())],
        ["forget", s(f.entry_id())], ["purge", s(f.entry_id()), "--reason", "fuzz", "--yes"],
        ["remember", "--kind", "fact", "--text", s(f.text()), "--tag", s(f.tags())], ["cite", s(f.entry_id())],
    ])  # fmt: skip
    scope = s(f.scope()) if r.random() < 0.3 else SCOPES[0]
    cmd = [sys.executable, "-m", "memstone.cli.main", "--url", url, "--scope", scope, *argv, "--json"]
    env = {**os.environ, "MEMSTONE_EMBEDDING": "none"}
    # argv is bytes: a lone surrogate cannot be encoded as UTF-8, so it is sent as the bytes a hostile caller
    # would send (surrogatepass), and the CLI receives invalid UTF-8; its output is read the same forgiving way.
    raw = [a.encode("utf-8", "surrogatepass") for a in cmd]
    done = subprocess.run(
        raw, capture_output=True, text=True, errors="replace", env=env, timeout=120, stdin=subprocess.DEVNULL
    )
    failure = cli_failure(done.returncode, done.stdout, done.stderr, as_json=True)
    if failure is not None:
        t.fail("cli", f"{' '.join(argv)[:200]} -> {failure}")
    else:
        t.ok("cli", f"exit {done.returncode}")


# ---------------------------------------------------------------------------------------------- the run
async def run(args: argparse.Namespace, work: Path) -> int:
    url = f"sqlite:///{work / 'fuzz.db'}"
    f, t = Fuzz(args.seed), Tally()
    shares = {"library": 0.4, "http": 0.35, "mcp": 0.25}
    started = time.perf_counter()
    async with open_service(url, embedding=None, author="fuzzer") as svc:
        kept = await plant_canaries(svc)
        for n in range(10):
            rev = await svc.remember(scope=SCOPES[0], entries=[EntryInput(kind="fact", text=f"Seed fact {n} deploy.")])
            assert rev is not None
            f.ids.append(rev.changes[0].entry_id)

        def progress(surface: str, done: int, total: int) -> None:
            if total >= 10 and done % max(1, total // 10) == 0:
                print(f"  {surface}: {done}/{total}, failures so far {t.fail_count}", file=sys.stderr, flush=True)

        total = int(args.calls * shares["library"])
        for i in range(total):
            await library_call(svc, f, t)
            progress("library", i + 1, total)

        app = create_app(Settings(url=url, embedding="none"))
        async with app.router.lifespan_context(app):
            transport = httpx2.ASGITransport(app=app, client=("127.0.0.1", 50000))
            async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1:8765") as client:
                ops = sorted({(op.method, op.path) for op in app.state.operations})
                total = int(args.calls * shares["http"])
                for i in range(total):
                    await http_call(client, ops, f, t)
                    progress("http", i + 1, total)

        agent = AgentSettings(url=url, project_scope=SCOPES[0], user_scope=SCOPES[2], home=work)
        server = build_server(svc, agent)
        async with Client(server) as client:
            tools = sorted(tool.name for tool in (await client.list_tools()).tools)
            total = int(args.calls * shares["mcp"])
            for i in range(total):
                await mcp_call(client, tools, f, t)
                progress("mcp", i + 1, total)

    loop = asyncio.get_running_loop()
    for i in range(args.cli_calls):
        await loop.run_in_executor(None, cli_call, url, f, t)
        progress("cli", i + 1, args.cli_calls)
    elapsed = time.perf_counter() - started

    async with open_service(url, embedding=None) as svc:
        changed = await changed_canaries(svc, kept)
        report = await svc.verify()
    calls = sum(t.calls.values())
    print(f"fuzz: {calls} calls in {elapsed:.1f} s ({calls / elapsed:.0f} calls/s), seed {args.seed}")
    for surface in ("library", "http", "mcp", "cli"):
        top = sorted(((k.split(":", 1)[1], n) for k, n in t.outcomes.items() if k.startswith(surface + ":")),
                     key=lambda kv: -kv[1])  # fmt: skip
        print(f"  {surface:<8} {t.calls[surface]:>7} calls: " + ", ".join(f"{k} {n}" for k, n in top[:12]))
    print(f"  failures (outside the project's errors, 5xx, unknown codes, tracebacks): {t.fail_count}")
    for line in t.failures[:10]:
        print("   - " + line.replace("\n", "\n     "))
    print(f"  canaries unchanged: {len(kept) - len(changed)}/{len(kept)}")
    print(f"  verify: {'clean' if report.ok else 'DAMAGE'} ({report.revisions_checked} revisions, "
          f"{report.versions_checked} versions, {report.projections_checked} projection rows)")  # fmt: skip
    for d in (*report.authority_damage, *report.projection_damage)[:10]:
        print("   - " + d)
    return 0 if t.fail_count == 0 and not changed and report.ok else 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=100_000, help="Library + HTTP + MCP calls (40/35/25 %%).")
    parser.add_argument("--cli-calls", type=int, default=100, help="CLI subprocess calls (each starts Python).")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="memstone-fuzz-") as tmp:
        sys.exit(asyncio.run(run(args, Path(tmp))))


if __name__ == "__main__":
    main()
